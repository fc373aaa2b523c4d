"""Diffs on the pages: clipped text that diff2html (vendored in assets/) renders in the browser.

The page carries the raw unified diff in a <pre>, readable as it is; the page script swaps in
diff2html's rendering. Rendering in Python (pygments) took most of a report's time on the ruff
store; leaving it to the browser keeps `prchain report` to escaping text.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DiffBlock:
    text: str  # the shown part of the diff
    hidden: int = 0  # lines left out (report.max_diff_lines)

    @property
    def empty(self) -> bool:
        return not self.text.strip()


def clip(text: str, max_lines: int) -> DiffBlock:
    """The first `max_lines` lines, and how many were left out."""
    lines = text.splitlines()
    if len(lines) <= max_lines:
        return DiffBlock(text)
    return DiffBlock("\n".join(lines[:max_lines]) + "\n", len(lines) - max_lines)
