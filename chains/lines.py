"""Blame-level overlap from stored patches: does the newer PR change lines the older PR added?

`git blame` on the clone would answer exactly but costs a process per file and PR; the stored
unified diffs answer the same question for the pairs that need it (links resting on a plain
mention or only on an issue): a line the older PR added that the newer PR removes or rewrites (a
diff shows remove + add), in a file both touched. Context lines do not count: registration lists
(`mod.rs`, rule tables) put every sibling PR next to every other.
Lines are compared with whitespace squeezed; lines too short to identify anything (`}`, `pass`,
blank) are ignored.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Protocol

from sqlalchemy import Engine, select

from chains.patches import file_sections
from sql.models import PRPatch

MIN_LINE_CHARS = 12  # shorter lines ("return None", "}") match by accident


class LineOracle(Protocol):
    def touches_added(self, newer: int, older: int, paths: frozenset[str]) -> bool: ...


Lines = dict[str, set[str]]


def changed_lines(diff: str) -> tuple[Lines, Lines]:
    """(added, removed) normalised lines per file path of a unified diff."""
    added: Lines = defaultdict(set)
    removed: Lines = defaultdict(set)
    for section in file_sections(diff):
        path = ""
        for line in section.splitlines():
            if line.startswith("+++ "):
                path = line[6:] if line.startswith("+++ b/") else line[4:]
            elif line.startswith("--- "):
                continue
            elif line[:1] in "+-" and path:
                text = " ".join(line[1:].split())
                if len(text) >= MIN_LINE_CHARS:
                    (added if line[0] == "+" else removed)[path].add(text)
    return added, removed


class PatchLines:
    """Reads the two PRs' patches from the store on demand (only issue-only pairs ask)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._cache: dict[int, tuple[Lines, Lines]] = {}

    def _lines(self, pr_id: int) -> tuple[Lines, Lines]:
        if pr_id not in self._cache:
            with self.engine.connect() as conn:
                diff = conn.scalar(select(PRPatch.diff).where(PRPatch.pr_id == pr_id)) or ""
            self._cache[pr_id] = changed_lines(diff)
        return self._cache[pr_id]

    def touches_added(self, newer: int, older: int, paths: frozenset[str]) -> bool:
        added = self._lines(older)[0]
        touched = self._lines(newer)[1]
        return any(added.get(p, set()) & touched.get(p, set()) for p in paths)
