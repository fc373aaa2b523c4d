"""Deterministic gates in front of the judge: a stage that fails one is not judged at all.

An LLM judge scored an empty stage diff 1.0 (issue 20, finding 1), so what can be decided without a
model is decided here, and each failure is a stage reason a user can read:
- the stage's query still names identifiers the gold patch adds: the stage is not rolled out;
- the agent changed nothing (or only whitespace, or only file modes): fail, unjudged;
- the agent changed only tests or test configuration while the gold patch changes code: fail,
  unjudged (a conftest.py that passes every test is not an implementation).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from chains.patches import file_sections, is_test_config_path, is_test_path, section_path

# Section header lines that are a change in their own right, even with no +/- line under them.
_STRUCTURAL = ("new file mode", "deleted file mode", "rename from", "copy from", "GIT binary patch")
_BINARY = "Binary files "


def _content_lines(section: str, sign: str) -> Counter[str]:
    """The section's added (or removed) lines with all whitespace removed, blank ones dropped."""
    lines = Counter[str]()
    for line in section.splitlines():
        if line.startswith(sign) and not line.startswith(sign * 3):
            squeezed = "".join(line[1:].split())
            if squeezed:
                lines[squeezed] += 1
    return lines


def is_substantive(section: str) -> bool:
    """Does this file section change content, not only whitespace or the file mode?"""
    if any(line.startswith(_STRUCTURAL) for line in section.splitlines()):
        return True
    if any(line.startswith(_BINARY) and line.endswith(" differ") for line in section.splitlines()):
        return True
    return _content_lines(section, "+") != _content_lines(section, "-")


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


def before_judge(idx: int, diff: str, gold_patch: str) -> str | None:
    """The reason the submitted stage diff fails without a judge, or None to judge it."""
    return no_change(idx, diff) or tests_only(idx, diff, gold_patch)


def leaking_query(idx: int, leaks: Sequence[str]) -> str | None:
    """The reason a stage is not rolled out: its query (or overview) names gold identifiers."""
    if not leaks:
        return None
    names = ", ".join(sorted(leaks)[:8])
    return (
        f"stage {idx}: its query names identifiers the gold patch adds ({names}); not rolled out. "
        "Regenerate it with `prchain queries build --redo-leaking`"
    )
