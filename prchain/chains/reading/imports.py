"""Imports: lines that bring names into a file, no code a stage writes or a later PR builds on.

Read line by line, an import shows itself by its first word (`use`, `import`, `from … import`,
`#include`). One that spans lines (Rust's `use a::{` … `};`, Python's `from a import (` … `)`)
continues on lines of bare names that read as code alone; `import_lines` finds those in a text
that holds the whole statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

# The first line of an import, in the languages mined.
_IMPORT = re.compile(
    r"^\s*(?:(?:pub(?:\([\w:]+\))?\s+)?use\s+(?:[\w{*]|::)|import\s|from\s+\S+\s+import\b|extern\s+crate\b"
    r"|(?:pub(?:\([\w:]+\))?\s+)?mod\s+\w+\s*;|#\s*include\b|package\s+[\w.]+\s*;?\s*$"
    r"|(?:const|let|var)\s+[\w{}, ]+=\s*require\()"
)
# An import that spans lines, with the newline before it: a pattern that begins with `^` is tried
# at every character of the text, one that begins with a literal only where that character stands
# (the text is read with a newline put before it).
_LONG_IMPORT = re.compile(
    r"\n[ \t]*(?:(?:pub(?:\([\w:]+\))?\s+)?use\s[^;]*?\{[^;]*;|from\s+\S+\s+import\s*\([^)]*\))"
)


def is_import(line: str) -> bool:
    """Whether a line starts an import."""
    return _IMPORT.match(line) is not None


@lru_cache(maxsize=128)  # one version of a file sits under the bases of many PRs
def import_lines(text: str) -> frozenset[int]:
    """Numbers (from 1) of the lines an import that spans lines continues on: a line of names
    there (`Clusters, ExtractedPointLight, GlobalClusterSettings,`) reads as code alone, but it is
    an import (bevy #19959 meets #19957 only in one)."""
    found: set[int] = set()
    line, counted = 1, 0  # the line number at offset `counted`, moved forward match by match
    for match in _long_imports("\n" + text):
        start = match.start()  # where its line starts in `text` (one newline was put before)
        line += text.count("\n", counted, start)
        counted = start
        found.update(range(line + 1, line + match.group(0).count("\n")))
    return frozenset(found)


def _long_imports(text: str) -> Iterator[re.Match[str]]:
    """`_LONG_IMPORT.finditer(text)`, tried only at the newlines whose line begins (after blanks)
    with a word an import begins with: trying it at every newline took a twentieth of a cold build
    on ruff, whose files hold 4,000 lines and a few dozen `use`s."""
    end = 0  # matches do not overlap: the next is looked for from the last one's end
    for start in _import_starts(text):
        if start >= end and (match := _LONG_IMPORT.match(text, start)):
            end = match.end()
            yield match


def _import_starts(text: str) -> list[int]:
    """The newlines of `text` followed by blanks and `pub`, `use` or `from`: every place
    `_LONG_IMPORT` can match (each keyword found by a plain substring search)."""
    starts: set[int] = set()
    for word in _IMPORT_WORDS:
        at = text.find(word)
        while at >= 0:
            newline = text.rfind("\n", 0, at)
            if newline >= 0 and not text[newline + 1 : at].strip(" \t"):
                starts.add(newline)
            at = text.find(word, at + 1)
    return sorted(starts)


_IMPORT_WORDS = ("pub", "use", "from")  # what `_LONG_IMPORT` reads first after the blanks
