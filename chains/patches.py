"""Split a PR's gold diff into its code part and its test part (SWE-bench's patch / test_patch).

Each file section of the diff is kept byte for byte (hunk headers untouched, so `git apply` sees
exactly what git wrote); unidiff only tells us which path a section changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

_SECTION = re.compile(r"^diff --git ", re.MULTILINE)
_PLAIN = re.compile(r"diff --git a/([^\s\"]+) b/([^\s\"]+)\n")
_HEADER = re.compile(r"^diff --git (?:\"?a/)?(.+?)\"? (?:\"?b/)?(.+?)\"?$", re.MULTILINE)

# Directory names whose contents are tests or test data (fixtures, snapshots).
TEST_DIRS = frozenset(
    {"test", "tests", "testing", "__tests__", "spec", "specs", "fixtures", "snapshots", "testdata"}
)
_TEST_NAME = re.compile(
    r"(^test_.*\.py$)|(_test\.(py|go|rs|rb|c|cc|cpp)$)|(^conftest\.py$)|(\.(spec|test)\.[jt]sx?$)"
    r"|(Tests?\.(java|kt|cs|scala)$)|(\.snap(\.new)?$)"
)


@dataclass(frozen=True)
class SplitPatch:
    code: str
    test: str
    code_paths: tuple[str, ...]
    test_paths: tuple[str, ...]


@lru_cache(maxsize=1 << 16)
def is_test_path(path: str) -> bool:
    """True for test sources and test data, by directory name or file-name convention.

    Cached: loading the graph asks once per file of every PR, and a repository's PRs keep
    touching the same few thousand paths (ruff: 144k file rows, 25k distinct paths)."""
    parts = path.split("/")  # str.split, not pathlib: this runs once per file of every stage
    if any(part.lower() in TEST_DIRS for part in parts[:-1]):
        return True
    return bool(_TEST_NAME.search(parts[-1]))


def file_sections(diff: str) -> list[str]:
    """The diff cut at each `diff --git` header; text before the first header is dropped."""
    starts = [m.start() for m in _SECTION.finditer(diff)]
    ends = [*starts[1:], len(diff)]
    return [diff[a:b] for a, b in zip(starts, ends, strict=False)]


def section_path(section: str) -> str:
    """The path a section changes (the new path of a rename, the old path of a deletion)."""
    plain = _PLAIN.match(section)
    if plain and plain.group(1) == plain.group(2):
        return plain.group(
            1
        )  # the common "a/x b/x" header; unidiff reads the rest (renames, quoting)
    # Only the header lines name the path; parsing the hunks too would cost most of the time.
    header = section.split("\n@@", 1)[0] + "\n"
    try:
        files = PatchSet(header)
        if files:
            return str(files[0].path).strip('"')  # unidiff keeps git's quotes around odd names
    except (UnidiffParseError, UnicodeError):
        pass  # git diffs unidiff cannot read still carry their paths in the header line
    match = _HEADER.search(section)
    return match.group(2) if match else ""


def split_patch(diff: str) -> SplitPatch:
    """Partition a unified git diff into (code, test) parts, each a valid diff on its own."""
    code: list[str] = []
    test: list[str] = []
    code_paths: list[str] = []
    test_paths: list[str] = []
    for section in file_sections(diff):
        path = section_path(section)
        if is_test_path(path):
            test.append(section)
            test_paths.append(path)
        else:
            code.append(section)
            code_paths.append(path)
    return SplitPatch("".join(code), "".join(test), tuple(code_paths), tuple(test_paths))
