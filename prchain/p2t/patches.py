"""Splitting a gold patch into its code part and its test part (the tests are hidden from agents)."""

from __future__ import annotations

import re

_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)
_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_tests?\.py$|(^|/)conftest\.py$"
)


def is_test_path(path: str) -> bool:
    return _TEST_PATH.search(path) is not None


def file_sections(patch: str) -> list[tuple[str, str]]:
    """(path, section text) for each file of a unified git diff."""
    starts = [(m.start(), m.group(2)) for m in _FILE.finditer(patch)]
    return [
        (path, patch[start : starts[i + 1][0] if i + 1 < len(starts) else len(patch)])
        for i, (start, path) in enumerate(starts)
    ]


def split_patch(patch: str) -> tuple[str, str]:
    """(code part, test part) of a gold patch."""
    code: list[str] = []
    tests: list[str] = []
    for path, section in file_sections(patch):
        (tests if is_test_path(path) else code).append(section)
    return "".join(code), "".join(tests)


def touched_files(patch: str) -> list[str]:
    return [path for path, _ in file_sections(patch)]


def test_names(test_patch: str) -> list[str]:
    """Test functions a test patch adds (hidden from every exported message)."""
    return sorted(set(re.findall(r"^\+\s*(?:async\s+)?def\s+(test_\w+)", test_patch, re.MULTILINE)))
