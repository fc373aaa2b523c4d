"""Substance of a stage: changed lines of code, not comments, docstrings, blank lines or config.

A unified diff only holds the hunks, so each hunk is lexed twice with Pygments (the lexer chosen by
file name): its new side (context and added lines) and its old side (context and removed lines). A
changed line counts when it holds a token that is neither a comment, a docstring nor white space.
Files that are tests, fixtures, documentation, CI, lock or configuration files never count
(`chains.filters.counts_as_code`); a file no lexer knows counts its non-blank changed lines.

Lexing a hunk on its own can misread a hunk that starts inside a long docstring or block comment;
three lines of context make that rare, and the error is toward counting (never toward dropping a
real code change).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from chains.filters import counts_as_code
from chains.patches import file_sections, section_path

if TYPE_CHECKING:
    import networkx as nx
    from pygments.lexer import Lexer
    from sqlalchemy import Engine


@dataclass
class Hunk:
    """One hunk as its two sides; `added`/`removed` are indexes of changed lines in each side."""

    new: list[str]
    old: list[str]
    added: list[int]
    removed: list[int]


@lru_cache(maxsize=512)
def _lexer(name: str) -> Lexer | None:
    """The Pygments lexer for a file name (by name and extension), or None when none fits."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(name, stripnl=False, stripall=False, ensurenl=True)
    except ClassNotFound:
        return None


def lexer_for(path: str) -> Lexer | None:
    return _lexer(path.rsplit("/", 1)[-1])


def hunks(section: str) -> Iterator[Hunk]:
    """The hunks of one file section of a unified diff."""
    current: Hunk | None = None
    for line in section.split("\n"):
        if line.startswith("@@"):
            if current is not None:
                yield current
            current = Hunk([], [], [], [])
        elif current is None or line.startswith("\\"):
            continue  # the file header, or "\ No newline at end of file"
        elif line.startswith("+"):
            current.added.append(len(current.new))
            current.new.append(line[1:])
        elif line.startswith("-"):
            current.removed.append(len(current.old))
            current.old.append(line[1:])
        elif line.startswith(" ") or line == "":
            current.new.append(line[1:])
            current.old.append(line[1:])
    if current is not None:
        yield current


def code_line_flags(lines: list[str], lexer: Lexer | None) -> list[bool]:
    """For each line: does it hold code (a token that is not comment, docstring or white space)?"""
    if lexer is None:
        return [bool(line.strip()) for line in lines]
    from pygments.token import Comment, String

    flags = [False] * len(lines)
    row = 0
    for ttype, value in lexer.get_tokens("\n".join(lines) + "\n"):
        if value.strip() and ttype not in Comment and ttype not in String.Doc:
            flags[min(row, len(lines) - 1)] = True
            # A multi-line token (a plain string) makes every line it spans code.
            for extra in range(1, value.rstrip("\n").count("\n") + 1):
                flags[min(row + extra, len(lines) - 1)] = True
        row += value.count("\n")
    return flags


def section_code_lines(section: str) -> int:
    """Changed lines of code in one file section (0 for a file that never counts)."""
    path = section_path(section)
    if not path or not counts_as_code(path):
        return 0
    lexer = lexer_for(path)
    total = 0
    for hunk in hunks(section):
        if hunk.added:
            new = code_line_flags(hunk.new, lexer)
            total += sum(new[i] for i in hunk.added)
        if hunk.removed:
            old = code_line_flags(hunk.old, lexer)
            total += sum(old[i] for i in hunk.removed)
    return total


def patch_code_lines(diff: str) -> int:
    """Changed lines of code of a whole PR diff: what a stage must reach to teach something."""
    return sum(section_code_lines(section) for section in file_sections(diff))


def measure_stages(
    graph: nx.DiGraph, engine: Engine, minimum: int, batch: int = 500
) -> dict[int, int]:
    """Lexed code lines of every PR that has an edge (only those can be stages of a chain).

    A PR whose file counts (comments and docstrings included) are already under `minimum` keeps
    that count unlexed: lexing only ever lowers it."""
    from sqlalchemy import select

    from sql.models import PRPatch

    prs = graph.graph["prs"]
    wanted = sorted(pr for pr in graph if graph.degree(pr))
    measured = {pr: prs[pr].code_lines for pr in wanted if prs[pr].code_lines < minimum}
    todo = [pr for pr in wanted if pr not in measured]
    with engine.connect() as conn:
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            query = select(PRPatch.pr_id, PRPatch.diff).where(PRPatch.pr_id.in_(chunk))
            measured.update((pr, patch_code_lines(diff or "")) for pr, diff in conn.execute(query))
    return measured


def thin_stages(graph: nx.DiGraph, measured: dict[int, int], minimum: int) -> list[int]:
    """PRs with an edge whose code change is under `minimum` lines: no stage of a chain may be."""
    return sorted(pr for pr, lines in measured.items() if lines < minimum and pr in graph)
