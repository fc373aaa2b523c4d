"""The text action format, for model servers without native tool calling.

The model answers with its reasoning and one fenced block whose info string names the tool:
```bash for a shell command, ```str_replace_editor with a JSON object of arguments, ```submit (body
optional). When a reply holds several action blocks the first one runs and the model is told the
others were ignored (a recorded repair); a reply with no action block is a format error. Internally and in the export
the actions are ordinary OpenAI tool calls; only the wire format differs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from prchain.agent.tools import SUBMIT, TOOL_NAMES
from prchain.llm.protocol import Message

_FENCE = re.compile(r"```([A-Za-z_]*)[ \t]*\n?(.*?)```", re.DOTALL)
OBSERVATION_PREFIX = "Observation:\n"


class FormatError(Exception):
    """The reply holds no single well-formed action; the message tells the model how to fix it."""


@dataclass(frozen=True)
class TextAction:
    thought: str
    name: str
    arguments: str  # JSON, as in an OpenAI tool call
    ignored: int = 0  # further action blocks in the reply that were not run


def parse_action(reply: str) -> TextAction:
    blocks = list(_FENCE.finditer(reply))
    if not blocks:
        raise FormatError("Your reply must contain one fenced action block; it contained none.")
    actions = [block for block in blocks if block.group(1) in TOOL_NAMES]
    if not actions:
        tags = ", ".join(repr(block.group(1)) for block in blocks)
        raise FormatError(
            f"The fenced block must be tagged with a tool name ({', '.join(TOOL_NAMES)}), not {tags}."
        )
    block = actions[0]
    name, body = block.group(1), block.group(2).strip()
    # The reasoning is what came before the action; later blocks are not part of this step.
    thought = reply[: block.start()].strip()
    return TextAction(thought, name, _arguments(name, body), ignored=len(actions) - 1)


def ignored_note(ignored: int) -> str:
    """Appended to the observation when a reply held more than one action block."""
    blocks = "block was" if ignored == 1 else "blocks were"
    return (
        f"\n\n[Note: your reply held {ignored + 1} action blocks; only the first was run and the "
        f"other {ignored} {blocks} ignored. Send one action per reply and wait for its result.]"
    )


def _arguments(name: str, body: str) -> str:
    if name == "bash":
        if not body:
            raise FormatError("The ```bash block is empty; put one shell command in it.")
        return json.dumps({"command": body})
    if name == SUBMIT and not body:
        return "{}"
    try:
        args = json.loads(body)
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"The ```{name} block must hold one JSON object of arguments ({exc.msg})."
        ) from None
    if not isinstance(args, dict):
        raise FormatError(
            f"The ```{name} block must hold a JSON object, not {type(args).__name__}."
        )
    if name == "str_replace_editor" and not {"command", "path"} <= set(args):
        raise FormatError("str_replace_editor needs at least `command` and `path`.")
    return json.dumps(args)


def render_action(call: dict[str, Any]) -> str:
    """A stored tool call back in the fenced text form the model wrote."""
    name = call["function"]["name"]
    args = json.loads(call["function"].get("arguments") or "{}")
    if name == "bash":
        return f"```bash\n{args.get('command', '')}\n```"
    body = json.dumps(args, indent=1) if args else ""
    return f"```{name}\n{body}\n```"


def to_wire(messages: list[Message]) -> list[Message]:
    """OpenAI tool-call messages as a plain chat a server without tool support understands."""
    wire: list[Message] = []
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls"):
            text = "\n\n".join(
                filter(
                    None,
                    [message.get("content") or ""]
                    + [render_action(c) for c in message["tool_calls"]],
                )
            )
            wire.append({"role": "assistant", "content": text})
        elif message["role"] == "tool":
            wire.append(
                {"role": "user", "content": OBSERVATION_PREFIX + (message.get("content") or "")}
            )
        else:
            wire.append({"role": message["role"], "content": message.get("content") or ""})
    return wire


def without_reasoning(messages: list[Message]) -> list[Message]:
    """The conversation as sent back to a server: stored reasoning stays in the store."""
    return [
        {k: v for k, v in m.items() if k != "reasoning_content"} if "reasoning_content" in m else m
        for m in messages
    ]
