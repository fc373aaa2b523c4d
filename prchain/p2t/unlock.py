"""Unlocker actions: parse the paper's small action language and run it in the sandbox.

    VIEW problem_statement          the stage query
    VIEW path[:start-end]           numbered lines of a file
    BASH command                    a shell command (grep, a probe, a test run)
    CREATE path                     a new file (extra: content, and run = the command executed next)
    STR_REPLACE path                an edit (extra: old_str, new_str; old_str must match byte for byte)
    THINK text                      an analysis or a plan; its observation is the text itself

Anything else, or a placeholder such as "...", cannot be replayed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from prchain.agent.tools import truncate
from prchain.environments.protocol import Environment

TOOLS = ("VIEW", "BASH", "CREATE", "STR_REPLACE", "THINK")
ISSUE_TARGET = "problem_statement"
_RANGE = re.compile(r"^(?P<path>[^:]+?)(?::(?P<start>\d+)-(?P<end>\d+))?$")
PLACEHOLDER = re.compile(r"<[a-z_ ]+>|\bTODO\b")
ELLIPSIS = re.compile(r"\.\.\.|…")
# Python's Ellipsis in code the action runs (`def f(): ...`, `x = ...`, `f(...)`) is not elision.
CODE_BEFORE_ELLIPSIS = (":", "=", "(", "[", ",", "return")
_DURATION = re.compile(r"\d+(?:\.\d+)?\s*(?:s|sec|seconds|ms)\b")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


class Unreplayable(ValueError):
    """The action is outside the taxonomy or cannot be run as written."""


@dataclass(frozen=True)
class Action:
    tool: str
    arg: str

    @classmethod
    def parse(cls, text: str) -> Action:
        tool, _, arg = text.strip().partition(" ")
        if tool not in TOOLS:
            raise Unreplayable(f"unknown action {tool!r}; allowed: {', '.join(TOOLS)}")
        if not arg.strip():
            raise Unreplayable(f"{tool} needs an argument")
        if tool != "THINK" and (PLACEHOLDER.search(arg) or _elided(arg)):
            raise Unreplayable(f"{tool} argument has a placeholder: {arg[:80]!r}")
        return cls(tool, arg.strip())


def _elided(text: str) -> bool:
    """An ellipsis that stands for something left out rather than Python's `...`."""
    return any(
        not text[: m.start()].rstrip().endswith(CODE_BEFORE_ELLIPSIS)
        for m in ELLIPSIS.finditer(text)
    )


def normalize_observation(text: str) -> str:
    """What must match between two runs: timings and addresses vary, whitespace does not count."""
    text = _ADDRESS.sub("0x", _DURATION.sub("Ns", text))
    return " ".join(text.split())


@dataclass
class Runner:
    """Runs actions in one sandbox; observations are cut to `max_chars`."""

    env: Environment
    query: str
    timeout: float
    max_chars: int

    def run(self, action_text: str, extra: Mapping[str, str]) -> str:
        action = Action.parse(action_text)
        if action.tool == "THINK":
            return action.arg
        if action.tool == "VIEW":
            return truncate(self._view(action.arg), self.max_chars)
        if action.tool == "BASH":
            return truncate(self._bash(action.arg), self.max_chars)
        if action.tool == "CREATE":
            if "content" not in extra:
                raise Unreplayable("CREATE needs the file content")
            self.env.write_file(action.arg, extra["content"])
            run = extra.get("run", "")
            return truncate(self._bash(run), self.max_chars) if run else f"created {action.arg}"
        return self._replace(action.arg, extra)

    def _view(self, arg: str) -> str:
        if arg == ISSUE_TARGET:
            return self.query
        match = _RANGE.match(arg)
        if match is None:
            raise Unreplayable(f"VIEW expects path or path:start-end, got {arg!r}")
        try:
            lines = self.env.read_file(match["path"]).splitlines()
        except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
            raise Unreplayable(str(exc)) from None
        start = int(match["start"] or 1)
        end = int(match["end"] or len(lines))
        return "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(start, min(end, len(lines)) + 1))

    def _bash(self, command: str) -> str:
        result = self.env.execute(command, timeout=self.timeout)
        suffix = f"\n[exit code {result.exit_code}]" if result.exit_code else ""
        return (result.output + suffix) or "[no output]"

    def _replace(self, path: str, extra: Mapping[str, str]) -> str:
        old, new = extra.get("old_str"), extra.get("new_str")
        if old is None or new is None:
            raise Unreplayable("STR_REPLACE needs old_str and new_str")
        try:
            text = self.env.read_file(path)
        except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
            raise Unreplayable(str(exc)) from None
        count = text.count(old)
        if count != 1:
            raise Unreplayable(f"old_str occurs {count} times in {path}, not exactly once")
        self.env.write_file(path, text.replace(old, new, 1))
        return f"edited {path}"
