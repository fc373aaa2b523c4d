"""Deterministic gates in front of the judge: a stage that fails one is not judged at all.

An LLM judge scored an empty stage diff 1.0 (issue 20, finding 1), so what can be decided without a
model is decided here, and each failure is a stage reason a user can read:
- the stage's query still names identifiers the gold patch adds: the stage is not rolled out;
- the agent changed nothing (or only whitespace, or only file modes): fail, unjudged;
- the diff carries compiled files, sources shown as binary or diff-hiding attributes: fail,
  unjudged (the judge would read one thing while the tests run another);
- the agent changed only tests or test configuration while the gold patch changes code: fail,
  unjudged (a conftest.py that passes every test is not an implementation).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prchain.chains.reading.patches import (
    file_sections,
    is_test_config_path,
    is_test_path,
    section_path,
)

# Section header lines that are a change in their own right, even with no +/- line under them.
_STRUCTURAL = ("new file mode", "deleted file mode", "rename from", "copy from", "GIT binary patch")
_BINARY = "Binary files "
# What the interpreter or a loader runs although no one can read it in a diff.
_COMPILED = re.compile(r"(^|/)__pycache__/|\.(pyc|pyo|so|pyd|dylib|dll|class|o|a|wasm)$")
# Text sources: shown as binary, they hide from the judge what the tests run.
_TEXT_SOURCE = re.compile(r"\.(py|pyi|pyx|pxd|rs|go|[cm]?js|jsx|ts|tsx|java|kt|c|h|cc|cpp|hpp|rb)$")
# .gitattributes lines that change how a file is diffed (or what is stored for it).
_HIDING_ATTRIBUTE = re.compile(r"(^|\s)(-diff\b|binary\b|diff=|filter=)")


def _hunk_sides(section: str) -> list[tuple[list[str], list[str]]]:
    """Each hunk's old and new text, whitespace squeezed out of each line, blank lines dropped."""
    hunks: list[tuple[list[str], list[str]]] = []
    for line in section.splitlines():
        if line.startswith("@@"):
            hunks.append(([], []))
            continue
        if not hunks or line[:1] not in (" ", "-", "+"):
            continue
        squeezed = "".join(line[1:].split())
        if squeezed:
            old, new = hunks[-1]
            if line[0] != "+":
                old.append(squeezed)
            if line[0] != "-":
                new.append(squeezed)
    return hunks


def is_substantive(section: str) -> bool:
    """Does this file section change content, not only whitespace or the file mode? Content is
    compared in order: a hunk that only reorders lines changes the file."""
    if any(line.startswith(_STRUCTURAL) for line in section.splitlines()):
        return True
    if any(line.startswith(_BINARY) and line.endswith(" differ") for line in section.splitlines()):
        return True
    return any(old != new for old, new in _hunk_sides(section))


def changed_paths(diff: str) -> list[str]:
    """Paths whose content the diff really changes."""
    return [section_path(s) for s in file_sections(diff) if is_substantive(s)]


def is_test_side(path: str) -> bool:
    return is_test_path(path) or is_test_config_path(path)


def no_change(idx: int, diff: str) -> str | None:
    if changed_paths(diff):
        return None
    return (
        f"stage {idx}: the agent changed nothing (the stage diff is empty or whitespace-only); "
        "not judged"
    )


def tests_only(idx: int, diff: str, gold_patch: str) -> str | None:
    changed = changed_paths(diff)
    gold_code = [p for p in changed_paths(gold_patch) if not is_test_side(p)]
    if not changed or not gold_code or not all(is_test_side(p) for p in changed):
        return None
    return (
        f"stage {idx}: the agent changed only tests or test configuration "
        f"({', '.join(sorted(changed)[:5])}) where the gold patch changes code; not judged"
    )


def unreadable(idx: int, diff: str) -> str | None:
    """Compiled files, text sources shown as binary, or attributes that change how files are
    diffed: what the judge would read is not what the tests run (issue 52)."""
    found = []
    for section in file_sections(diff):
        path = section_path(section)
        if _COMPILED.search(path):
            found.append(f"{path}: compiled code")
        elif _TEXT_SOURCE.search(path) and _shown_as_binary(section):
            found.append(f"{path}: a source shown as binary")
        elif path.rsplit("/", 1)[-1] == ".gitattributes" and _hides_diffs(section):
            found.append(f"{path}: attributes that change how files are diffed")
    if not found:
        return None
    return (
        f"stage {idx}: the diff carries what the judge cannot read ({'; '.join(found[:5])}); "
        "not judged"
    )


def _shown_as_binary(section: str) -> bool:
    return any(
        line.startswith("GIT binary patch")
        or (line.startswith(_BINARY) and line.endswith(" differ"))
        for line in section.splitlines()
    )


def _hides_diffs(section: str) -> bool:
    added = [
        line[1:]
        for line in section.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]
    return any(_HIDING_ATTRIBUTE.search(line.split("#", 1)[0]) for line in added)


def before_judge(idx: int, diff: str, gold_patch: str) -> str | None:
    """The reason the submitted stage diff fails without a judge, or None to judge it."""
    return unreadable(idx, diff) or no_change(idx, diff) or tests_only(idx, diff, gold_patch)


REDO_LEAKING = "prchain queries build --redo-leaking"


def leaking_query(idx: int, leaks: Sequence[str]) -> str | None:
    """The reason a stage is not rolled out: its query (or overview) names gold identifiers."""
    if not leaks:
        return None
    names = ", ".join(sorted(leaks)[:8])
    return (
        f"stage {idx}: its query names identifiers the gold patch adds ({names}); not rolled out. "
        f"Regenerate it with `{REDO_LEAKING}`"
    )


def needs_action(reason: str | None) -> bool:
    """Whether a rollout's reason names a stage skipped for something the user must fix (its
    query leaks) rather than a verdict on the agent's work."""
    return bool(reason) and REDO_LEAKING in str(reason)
