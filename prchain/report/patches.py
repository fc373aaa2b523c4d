"""The cumulative patch as it stood after any step of a trajectory.

Exact at stage boundaries: each finished stage stores its cumulative diff. Inside a stage, the
editor tool's calls are replayed as diff hunks on top of the previous stage's cumulative diff:
`create`, `str_replace` and `insert` record exactly what they wrote. A bash command may also have
changed files; it is marked, not replayed (its effect shows in the stage's stored diff).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from prchain.report.diffs import DiffBlock, clip

EDITOR = "str_replace_editor"
PATCH_LINES = 5_000  # a patch piece is shown whole up to this many lines
WRITES = ("create", "str_replace", "insert", "undo_edit")
# Shell commands that may change files in the work tree; read-only ones (ls, cat, grep) are skipped.
MAY_WRITE = (">", "sed -i", "apply", "patch", "tee ", "mv ", "rm ", "cp ", "touch ", "mkdir ")


@dataclass
class PatchPiece:
    step: int  # the step after which this piece is part of the patch
    text: str  # a unified-diff fragment
    exact: bool = False  # the stored diff at the end of the stage (replaces the replayed pieces)

    @property
    def block(self) -> DiffBlock:
        return clip(self.text, PATCH_LINES)


def _lines(sign: str, text: str) -> str:
    return "".join(f"{sign}{line}\n" for line in text.split("\n"))


def edit_hunk(args: dict[str, Any]) -> str | None:
    """A diff fragment for one editor write, or None for reads and malformed calls."""
    command, path = args.get("command"), args.get("path")
    if command not in WRITES or not isinstance(path, str):
        return None
    if command == "create":
        text = str(args.get("file_text", ""))
        return f"--- /dev/null\n+++ b/{path}\n@@ create @@\n" + _lines("+", text)
    head = f"--- a/{path}\n+++ b/{path}\n"
    if command == "str_replace":
        old, new = str(args.get("old_str", "")), str(args.get("new_str", ""))
        return head + "@@ str_replace @@\n" + _lines("-", old) + _lines("+", new)
    if command == "insert":
        line = args.get("insert_line")
        return (
            head + f"@@ insert after line {line} @@\n" + _lines("+", str(args.get("new_str", "")))
        )
    return head + "@@ undo_edit: the previous edit of this file is undone @@\n"


def _call_args(tool_call: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    function = (tool_call or {}).get("function", {})
    try:
        args = json.loads(function.get("arguments") or "{}")
    except (TypeError, json.JSONDecodeError):
        args = {}
    return str(function.get("name", "")), args if isinstance(args, dict) else {}


def step_piece(
    step_idx: int, tool_call: dict[str, Any] | None, observation: str | None
) -> PatchPiece | None:
    """What a tool step added to the patch: an editor write that succeeded, or a bash marker."""
    name, args = _call_args(tool_call)
    if (observation or "").startswith("Error"):
        return None
    if name == EDITOR:
        hunk = edit_hunk(args)
        return PatchPiece(step_idx, hunk) if hunk else None
    if name == "bash" and any(w in str(args.get("command", "")) for w in MAY_WRITE):
        command = str(args.get("command", "")).splitlines()[0][:120] if args.get("command") else ""
        return PatchPiece(step_idx, f"# step {step_idx} ran bash (not replayed): {command}\n")
    return None
