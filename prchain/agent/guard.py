"""What the loop refuses from a real model beside malformed replies: calls missing required
arguments, a prompt's placeholder sent as the command, and the same failing action over and over.

A small model that copies `<one shell command>` from the system prompt, or repeats a command that
fails, would otherwise spend the whole step budget on it (issue 21, finding 3). The guard tells the
model once, then ends the stage with the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from prchain.agent.tools import TOOL_NAMES, TOOL_SCHEMAS
from prchain.llm.toolcalls import echoed_tool, unknown_tool

# `<one shell command>`, `<path>`, `<your command here>`: angle brackets around words, nothing else.
_PLACEHOLDER = re.compile(r"<\s*[A-Za-z][\w .,'/-]{0,60}>|\.\.\.|…")
_REQUIRED = {
    schema["function"]["name"]: tuple(schema["function"]["parameters"].get("required", ()))
    for schema in TOOL_SCHEMAS
}


def missing_arguments(calls: list[dict[str, object]]) -> str | None:
    """The format error for the first call that lacks a required argument, naming them."""
    for call in calls:
        function = call["function"]
        assert isinstance(function, dict)
        name = str(function.get("name", ""))
        try:
            args = json.loads(function.get("arguments") or "{}")
        except json.JSONDecodeError:
            continue  # the tool itself answers malformed JSON with an error the model can read
        if not isinstance(args, dict):
            continue
        missing = [key for key in _REQUIRED.get(name, ()) if key not in args]
        if missing:
            names = ", ".join(f"`{key}`" for key in missing)
            noun = "argument" if len(missing) == 1 else "arguments"
            return f"Your call to `{name}` is missing the required {noun} {names}."
    return None


def no_call_error(content: str, error: str = "Your reply did not call a tool.") -> str:
    """The format error for a reply with no usable call, naming what the model did instead."""
    names = ", ".join(f"`{name}`" for name in TOOL_NAMES)
    if (name := unknown_tool(content, TOOL_NAMES)) is not None:
        return f"You called `{name}`, which is not one of the tools here ({names})."
    if (name := echoed_tool(content, TOOL_NAMES)) is not None:
        return (
            f"Your reply repeated the definition of the `{name}` tool instead of calling it. "
            f"Call a tool ({names}) with its arguments."
        )
    return error


def prompt_placeholder(name: str, arguments: str) -> str | None:
    """The placeholder a `bash` call holds instead of a command (copied from the prompt), if any."""
    if name != "bash":
        return None
    try:
        command = json.loads(arguments).get("command")
    except (json.JSONDecodeError, AttributeError):
        return None
    if isinstance(command, str) and _PLACEHOLDER.fullmatch(command.strip()):
        return command.strip()
    return None


def placeholder_message(placeholder: str) -> str:
    return (
        f"Error: `{placeholder}` is the prompt's placeholder, not a command; it was not run. "
        "Write the actual shell command you want to run."
    )


def dropped_note(dropped: int) -> str:
    """Appended to the observation when a reply held more than one call written as text."""
    calls = "call was" if dropped == 1 else "calls were"
    return (
        f"\n\n[Note: your reply held {dropped + 1} tool calls; only the first was run and the "
        f"other {dropped} {calls} dropped. Make one call per reply and wait for its result.]"
    )


@dataclass
class RepeatGuard:
    """Counts the same failing action in a row; tells the model once, then says the stage is stuck."""

    limit: int
    _last: tuple[str, str] | None = None
    _count: int = 0
    _described: str = field(default="")

    def record(self, name: str, arguments: str, *, failed: bool) -> str:
        """Note one action's outcome; returns a note for its observation (or "")."""
        action = (name, _canonical(arguments))
        if not failed:
            self._last, self._count = None, 0
            return ""
        self._count = self._count + 1 if action == self._last else 1
        self._last, self._described = action, _describe(name, arguments)
        if self._count == self.limit - 1 and self.limit > 1:
            return (
                f"\n\n[Note: {self._described} has now failed {self._count} times in a row. "
                "Do something different: one more identical failure ends the task.]"
            )
        return ""

    def stuck(self) -> str | None:
        """The stage's reason once the same failing action reached the limit."""
        if self._count < self.limit:
            return None
        return f"the same failing action repeated {self._count} times: {self._described}"


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except json.JSONDecodeError:
        return arguments.strip()


def _describe(name: str, arguments: str) -> str:
    try:
        args = json.loads(arguments)
    except json.JSONDecodeError:
        args = None
    if name == "bash" and isinstance(args, dict) and isinstance(args.get("command"), str):
        command = " ".join(args["command"].split())
        return f"bash `{command[:80]}{'…' if len(command) > 80 else ''}`"
    return f"`{name}` with the same arguments"
