"""The agent's tools as OpenAI JSON schemas, and their execution in the stage environment."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from prchain.agent.editor import Editor, EditorError
from prchain.core.errors import ContainerDied, ExecOutputLost, PrchainError
from prchain.environments.protocol import Environment

SUBMIT = "submit"
TRUNCATION_MARKER = "\n[... {omitted} characters of output omitted ...]\n"

BASH_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command in the repository (working directory: the repository root). "
        "Output longer than a few thousand characters is truncated; avoid interactive commands.",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The bash command to run."}
            },
            "required": ["command"],
        },
    },
}

EDITOR_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "str_replace_editor",
        "description": "View, create and edit files. `view` shows a file with line numbers or lists a directory; "
        "`create` writes a new file; `str_replace` replaces exactly one occurrence of `old_str`; `insert` adds "
        "`new_str` after line `insert_line` (0 = top); `undo_edit` reverts the last edit of `path`.",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "enum": ["view", "create", "str_replace", "insert", "undo_edit"],
                    "description": "The operation.",
                },
                "path": {
                    "type": "string",
                    "description": "File or directory, relative to the repository root.",
                },
                "file_text": {"type": "string", "description": "Content of the new file (create)."},
                "old_str": {
                    "type": "string",
                    "description": "Exact text to replace; must occur once (str_replace).",
                },
                "new_str": {
                    "type": "string",
                    "description": "Replacement (str_replace) or text to add (insert).",
                },
                "insert_line": {
                    "type": "integer",
                    "description": "Line after which to insert (insert).",
                },
                "view_range": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "description": "[start, end] lines to show, end -1 for the rest (view).",
                },
            },
            "required": ["command", "path"],
        },
    },
}

SUBMIT_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SUBMIT,
        "description": "Submit your work on the current task once the change is complete and checked.",
        "parameters": {
            "type": "object",
            "properties": {
                "summary": {
                    "type": "string",
                    "description": "One or two sentences on what you changed.",
                }
            },
            "required": [],
        },
    },
}

TOOL_SCHEMAS: list[dict[str, Any]] = [BASH_SCHEMA, EDITOR_SCHEMA, SUBMIT_SCHEMA]
TOOL_NAMES = tuple(schema["function"]["name"] for schema in TOOL_SCHEMAS)


def truncate(text: str, limit: int) -> str:
    """Keep the head and the tail: errors tend to sit at the end of long output."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return text[:head] + TRUNCATION_MARKER.format(omitted=len(text) - head - tail) + text[-tail:]


@dataclass(frozen=True)
class ToolResult:
    observation: str
    submitted: bool = False
    failed: bool = False  # a non-zero exit, a timeout or a tool error (the loop guard counts these)


class ToolBox:
    """Executes one tool call in the environment; every failure becomes text the agent can read."""

    def __init__(self, env: Environment, *, command_timeout: float, max_chars: int) -> None:
        self.env = env
        self.editor = Editor(env)
        self.command_timeout = command_timeout
        self.max_chars = max_chars

    def run(self, name: str, arguments: str) -> ToolResult:
        try:
            args = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return _error(f"Error: the arguments of {name} are not valid JSON ({exc.msg}).")
        if not isinstance(args, dict):
            return _error(f"Error: the arguments of {name} must be a JSON object.")
        if name == SUBMIT:
            return ToolResult(
                "Your work on this task has been submitted for review.", submitted=True
            )
        if name == "bash":
            text, failed = self._bash(args)
            return ToolResult(truncate(text, self.max_chars), failed=failed)
        if name == "str_replace_editor":
            text, failed = self._edit(args)
            return ToolResult(truncate(text, self.max_chars), failed=failed)
        return _error(f"Error: unknown tool {name!r}; available tools: {', '.join(TOOL_NAMES)}.")

    def _bash(self, args: dict[str, Any]) -> tuple[str, bool]:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return "Error: `command` is required.", True
        result = self.env.execute(command, timeout=self.command_timeout)
        text = result.output
        if result.timed_out and "timeout" not in text[-200:]:
            text += f"\n[command timed out after {self.command_timeout:g} seconds and was killed]"
        elif result.exit_code != 0:
            text += f"\n[exit code {result.exit_code}]"
        failed = result.timed_out or result.exit_code != 0
        return (text if text.strip() else "[no output]"), failed

    def _edit(self, args: dict[str, Any]) -> tuple[str, bool]:
        try:
            return self.editor.run(args), False
        except EditorError as exc:
            return f"Error: {exc}", True
        except (ContainerDied, ExecOutputLost):  # the infrastructure's failure, not the agent's
            raise
        except (PrchainError, OSError, UnicodeDecodeError) as exc:
            # A file the sandbox cannot read (binary, permissions) must not end the rollout.
            return f"Error: {exc}", True


def _error(text: str) -> ToolResult:
    return ToolResult(text, failed=True)
