"""Splitting a gold patch into its code part and its test part (the tests are hidden from agents).

The split is the chain side's (`prchain.chains.reading.patches`): a test file is one by each
room's test-file names and the shared test directories, in every language."""

from __future__ import annotations

import re

from prchain.chains.reading import patches as gold

# A test function a test patch adds, by its own line: Python's `def test_x`, Go's `func TestX(`,
# Rust's `fn x()` under `#[test]` (or any attribute that ends in `test]`: `#[tokio::test]`), and
# Java's method under `@Test`.
_TEST_FUNCTION = re.compile(
    r"^\+\s*(?:async\s+)?def\s+(test_\w+)"
    r"|^\+\s*func\s+(Test\w+)\s*\("
    r"|^\+\s*#\[[\w:]*test\]\s*\n\+\s*(?:pub\s+)?(?:async\s+)?fn\s+(\w+)"
    r"|^\+\s*@Test\b.*\n\+\s*(?:public\s+)?(?:static\s+)?void\s+(\w+)\s*\(",
    re.MULTILINE,
)


def split_patch(patch: str) -> tuple[str, str]:
    """(code part, test part) of a gold patch."""
    split = gold.split_patch(patch)
    return split.code, split.test


def touched_files(patch: str) -> list[str]:
    return [gold.section_path(section) for section in gold.file_sections(patch)]


def test_names(test_patch: str) -> list[str]:
    """Test functions a test patch adds (hidden from every exported message)."""
    return sorted({name for found in _TEST_FUNCTION.findall(test_patch) for name in found if name})
