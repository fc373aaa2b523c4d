"""The forward phase's model roles: the blinded agent, the establishment verifier, the curator and
the claim judge. Only the verifier is shown graph nodes; the others see the task and transcript
(the curator additionally one target statement and its action, never the patch, tests or edges)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prchain.agent.tools import TOOL_NAMES, TOOL_SCHEMAS, ToolBox
from prchain.core.errors import LLMOutputInvalid
from prchain.llm.prompts import render
from prchain.llm.protocol import ChatLLM, Completion, Message
from prchain.p2t.graph import Node
from prchain.p2t.roles import RoleCall

PROMPTS = Path(__file__).with_name("prompts")
MAX_BLANK_REPLIES = 3  # replies without a tool call before a candidate ends early


@dataclass
class StepRec:
    """One agent step of a candidate: the reply, its tool results, and the sandbox after it."""

    assistant: Message
    tools: list[Message]
    response_tokens: int
    submitted: bool
    after: str  # snapshot id of the sandbox once the step's tools ran
    mutated: bool = False

    @property
    def messages(self) -> list[Message]:
        return [self.assistant, *self.tools]


def transcript(messages: Sequence[Message]) -> str:
    """Numbered steps as the verifier, curator and judge read them."""
    lines, step = [], 0
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            step += 1
            lines.append(f"[{step}] DEVELOPER: {m.get('content') or ''}".rstrip())
            for call in m.get("tool_calls") or []:
                f = call.get("function", {})
                lines.append(f"[{step}] CALL {f.get('name')}: {f.get('arguments')}")
        elif role == "tool":
            lines.append(f"[{step}] OUTPUT:\n{m.get('content') or ''}")
        elif role == "user":
            lines.append(f"TASK MESSAGE:\n{m.get('content') or ''}")
    return "\n".join(lines)


def describe_step(step: StepRec) -> str:
    return transcript([step.assistant])


def shaped_call(name: str, arguments: Any, call_id: str) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


@dataclass
class Blind:
    """The blinded agent (π_blind): the plain agent's prompt and tools, nothing of the oracle."""

    llm: ChatLLM
    toolbox: ToolBox
    role: str = "p2t_seed"
    rollout_id: int | None = None

    def act(self, messages: list[Message], sample: int = 0) -> tuple[Message, int] | None:
        """The next reply with one or more tool calls, or None after repeated blank replies.

        `sample` tells the seeds of one window apart: the same prefix must give a new draw.
        """
        for blank in range(MAX_BLANK_REPLIES):
            reply = self.llm.complete(
                self.role,
                messages,
                tools=TOOL_SCHEMAS,
                rollout_id=self.rollout_id,
                sample=sample * MAX_BLANK_REPLIES + blank,
                check=_has_calls,  # a blank reply is never replayed
            )
            if reply.tool_calls:
                # An id the server left out is made from the call's place, so a resumed curation
                # names its calls as an uninterrupted one would.
                place = f"p2t_{len(messages)}_{sample}"
                calls = [self._call(c, f"{place}_{i}") for i, c in enumerate(reply.tool_calls)]
                assistant = {
                    "role": "assistant",
                    "content": reply.content or "",
                    "tool_calls": calls,
                }
                return assistant, reply.completion_tokens
        return None

    def _call(self, call: dict[str, Any], fallback_id: str) -> dict[str, Any]:
        f = call.get("function", {})
        return shaped_call(
            f.get("name", ""), f.get("arguments") or "{}", call.get("id") or fallback_id
        )

    def execute(self, assistant: Message) -> tuple[list[Message], bool]:
        tools, submitted = [], False
        for call in assistant["tool_calls"]:
            f = call["function"]
            result = self.toolbox.run(f["name"], f["arguments"])
            submitted = submitted or result.submitted
            tools.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "name": f["name"],
                    "content": result.observation,
                }
            )
        return tools, submitted


@dataclass
class Verifier:
    llm: ChatLLM
    query: str
    retries: int
    rollout_id: int | None = None

    def established(self, history: Sequence[Message], node: Node) -> bool:
        system = render(PROMPTS, "verifier_system.j2")
        user = render(
            PROMPTS,
            "verifier_user.j2",
            query=self.query,
            transcript=transcript(history),
            node_type=node.node_type,
            statement=node.statement,
            action=node.unlocker.action,
        )
        answer = RoleCall(self.llm, "p2t_verifier", self.retries, rollout_id=self.rollout_id).ask(
            system, user, _established
        )
        return bool(answer)


def _established(data: dict[str, Any]) -> bool:
    value = data["established"]
    if not isinstance(value, bool):
        raise ValueError('"established" must be true or false')
    return value


@dataclass
class Curator:
    llm: ChatLLM
    query: str
    retries: int
    rollout_id: int | None = None

    def rewrite(
        self, history: Sequence[Message], original: StepRec, target: Node, call_id: str
    ) -> Message | None:
        system = render(
            PROMPTS, "curator_system.j2", tools=[t for t in TOOL_NAMES if t != "submit"]
        )
        user = render(
            PROMPTS,
            "curator_user.j2",
            query=self.query,
            transcript=transcript(history),
            original=describe_step(original),
            statement=target.statement,
            action=target.unlocker.action,
        )

        def parse(data: dict[str, Any]) -> Message:
            call = data["tool_call"]
            if not isinstance(call, dict) or call.get("name") not in TOOL_NAMES:
                raise ValueError(f'"tool_call" must name one of {", ".join(TOOL_NAMES)}')
            return {
                "role": "assistant",
                "content": str(data.get("content") or ""),
                "tool_calls": [shaped_call(call["name"], call.get("arguments") or {}, call_id)],
            }

        return RoleCall(self.llm, "p2t_curator", self.retries, rollout_id=self.rollout_id).ask(
            system, user, parse
        )


@dataclass
class ClaimJudge:
    llm: ChatLLM
    query: str
    retries: int
    rollout_id: int | None = None

    def valid(self, history: Sequence[Message], step: Message) -> bool:
        system = render(PROMPTS, "claim_judge_system.j2")
        user = render(
            PROMPTS,
            "claim_judge_user.j2",
            query=self.query,
            transcript=transcript(history),
            step=transcript([step]),
        )

        def parse(data: dict[str, Any]) -> bool:
            if not isinstance(data["valid"], bool):
                raise ValueError('"valid" must be true or false')
            return bool(data["valid"])

        return bool(
            RoleCall(self.llm, "p2t_claim_judge", self.retries, rollout_id=self.rollout_id).ask(
                system, user, parse
            )
        )


def _has_calls(reply: Completion) -> None:
    if not reply.tool_calls:
        raise LLMOutputInvalid("the reply called no tool")
