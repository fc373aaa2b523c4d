"""`str_replace_editor`: view, create, str_replace, insert and undo_edit over an Environment.

Built only on the environment's read_file / write_file / execute, so it works in any sandbox
(read_file raises FileNotFoundError / IsADirectoryError, write_file creates parent directories). Every
write keeps the previous content in a per-file history, which `undo_edit` pops.
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from typing import Any

from prchain.environments.protocol import Environment

SNIPPET_CONTEXT = 4  # lines shown around an edit, so the agent sees what it changed


class EditorError(Exception):
    """A bad editor request; its message is shown to the agent as the tool result."""


def _numbered(text: str, start: int = 1) -> str:
    return "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(text.split("\n"), start))


class Editor:
    """One editor per rollout; `history` survives across stages like a real editor session."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.history: dict[str, list[str | None]] = defaultdict(list)

    def run(self, args: dict[str, Any]) -> str:
        command = args.get("command")
        path = args.get("path")
        if not isinstance(path, str) or not path:
            raise EditorError("`path` is required")
        handler = {
            "view": self._view,
            "create": self._create,
            "str_replace": self._str_replace,
            "insert": self._insert,
            "undo_edit": self._undo,
        }.get(str(command))
        if handler is None:
            raise EditorError(
                f"unknown command {command!r}; use view, create, str_replace, insert or undo_edit"
            )
        return handler(path, args)

    def _read(self, path: str) -> str:
        try:
            return self.env.read_file(path)
        except FileNotFoundError:
            raise EditorError(f"{path} does not exist") from None
        except IsADirectoryError:
            raise EditorError(f"{path} is a directory, not a file") from None

    def _write(self, path: str, content: str, previous: str | None) -> None:
        self.env.write_file(path, content)
        self.history[path].append(previous)

    def _view(self, path: str, args: dict[str, Any]) -> str:
        try:
            text = self._read(path)
        except EditorError:
            listing = self.env.execute(
                f"test -d {shlex.quote(path)} && find {shlex.quote(path)} -maxdepth 2 -not -path '*/.*' | sort"
            )
            if listing.exit_code != 0:
                raise
            return f"Files and directories up to 2 levels deep in {path}:\n{listing.output}"
        view_range = args.get("view_range")
        if not view_range:
            return _numbered(text)
        lines = text.split("\n")
        if not (
            isinstance(view_range, list)
            and len(view_range) == 2
            and all(isinstance(v, int) for v in view_range)
        ):
            raise EditorError(
                "`view_range` must be two integers [start, end] (end -1 means to the end)"
            )
        start, end = view_range
        end = len(lines) if end == -1 else end
        if not 1 <= start <= max(end, 1) or end > len(lines):
            raise EditorError(f"`view_range` {view_range} is outside the file's {len(lines)} lines")
        return _numbered("\n".join(lines[start - 1 : end]), start)

    def _create(self, path: str, args: dict[str, Any]) -> str:
        text = args.get("file_text")
        if not isinstance(text, str):
            raise EditorError("`file_text` is required for create")
        try:
            previous: str | None = self.env.read_file(path)
        except FileNotFoundError:
            previous = None
        except IsADirectoryError:
            raise EditorError(f"{path} is a directory") from None
        self._write(path, text, previous)  # the environment creates parent directories
        return f"File created at {path}"

    def _str_replace(self, path: str, args: dict[str, Any]) -> str:
        old, new = args.get("old_str"), args.get("new_str", "")
        if not isinstance(old, str) or not old:
            raise EditorError("`old_str` is required for str_replace")
        if not isinstance(new, str):
            raise EditorError("`new_str` must be a string")
        text = self._read(path)
        count = text.count(old)
        if count != 1:
            where = "did not appear" if count == 0 else f"appears {count} times; make it unique"
            raise EditorError(f"No replacement was performed: `old_str` {where} in {path}")
        updated = text.replace(old, new, 1)
        self._write(path, updated, text)
        first = text[: text.index(old)].count("\n") + 1
        return f"The file {path} has been edited.\n{self._snippet(updated, first, new.count(chr(10)) + 1)}"

    def _insert(self, path: str, args: dict[str, Any]) -> str:
        line, new = args.get("insert_line"), args.get("new_str")
        if not isinstance(line, int) or isinstance(line, bool):
            raise EditorError("`insert_line` (an integer) is required for insert")
        if not isinstance(new, str):
            raise EditorError("`new_str` is required for insert")
        text = self._read(path)
        lines = text.split("\n")
        if not 0 <= line <= len(lines):
            raise EditorError(f"`insert_line` {line} is outside [0, {len(lines)}]")
        updated = "\n".join(lines[:line] + new.split("\n") + lines[line:])
        self._write(path, updated, text)
        return f"The file {path} has been edited.\n{self._snippet(updated, line + 1, new.count(chr(10)) + 1)}"

    def _undo(self, path: str, _args: dict[str, Any]) -> str:
        if not self.history.get(path):
            raise EditorError(f"No edit history for {path}")
        previous = self.history[path].pop()
        if previous is None:
            self.env.execute(f"rm -f {shlex.quote(path)}")
            return f"Undid the creation of {path}; the file is removed."
        self.env.write_file(path, previous)
        return f"Last edit to {path} undone.\n{_numbered(previous)}"

    @staticmethod
    def _snippet(text: str, first: int, count: int) -> str:
        lines = text.split("\n")
        start = max(first - SNIPPET_CONTEXT, 1)
        end = min(first + count - 1 + SNIPPET_CONTEXT, len(lines))
        return _numbered("\n".join(lines[start - 1 : end]), start)
