"""Calling a P2T role: an optional sandbox tool loop, then one JSON object parsed and validated.

A reply that is not the role's JSON is sent back with the validator's complaint, up to
`retries` times; after that the call returns None (the caller drops the round).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from prchain.agent.tools import BASH_SCHEMA, EDITOR_SCHEMA, ToolBox
from prchain.core.errors import LLMOutputInvalid
from prchain.llm.parsing import extract_json_object
from prchain.llm.protocol import ChatLLM, Completion, Message

T = TypeVar("T")
INSPECT_TOOLS = [BASH_SCHEMA, EDITOR_SCHEMA]


@dataclass
class RoleCall:
    llm: ChatLLM
    role: str
    retries: int
    toolbox: ToolBox | None = None  # the sandbox, for roles that may look around first
    max_tool_calls: int = 0
    tool_calls: int = 0
    rollout_id: int | None = None  # bills the calls to a curated rollout

    def ask(self, system: str, user: str, parse: Callable[[dict[str, Any]], T]) -> T | None:
        messages: list[Message] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        attempts = 0

        def check(reply: Completion) -> None:
            """Only a reply this role can use (a look-around call or the answer) is cached."""
            if reply.tool_calls and self._tools():
                return
            try:
                parse(extract_json_object(reply.content))
            except (LLMOutputInvalid, ValueError, KeyError, TypeError) as exc:
                raise LLMOutputInvalid(str(exc)) from None

        while True:
            reply = self.llm.complete(
                self.role, messages, tools=self._tools(), rollout_id=self.rollout_id, check=check
            )
            if reply.tool_calls and self._tools():
                messages.append(reply.as_message())
                messages.extend(self._run_tools(reply.tool_calls))
                continue
            try:
                return parse(extract_json_object(reply.content))
            except (LLMOutputInvalid, ValueError, KeyError, TypeError) as exc:
                attempts += 1
                if attempts > self.retries:
                    return None
                messages.append({"role": "assistant", "content": reply.content or ""})
                messages.append(
                    {
                        "role": "user",
                        "content": f"Your reply was not valid: {exc}. Answer with the JSON object only.",
                    }
                )

    def _tools(self) -> list[dict[str, Any]] | None:
        if self.toolbox is None or self.tool_calls >= self.max_tool_calls:
            return None
        return INSPECT_TOOLS

    def _run_tools(self, calls: list[dict[str, Any]]) -> list[Message]:
        assert self.toolbox is not None
        results = []
        for call in calls:
            self.tool_calls += 1
            function = call.get("function", {})
            observation = self.toolbox.run(
                function.get("name", ""), function.get("arguments") or "{}"
            ).observation
            results.append(
                {"role": "tool", "tool_call_id": call.get("id", ""), "content": observation}
            )
        return results


def as_json(value: object) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False)
