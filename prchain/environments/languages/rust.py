"""Rust's facts (`prchain.environments.languages`)."""

import re
from functools import lru_cache

from prchain.environments.languages import LanguageFacts

# With the newline before it, as `prchain.chains.reading.imports._LONG_IMPORT` (a pattern that
# begins with `^` is tried at every character of the text).
_RUST_CFG_MODULE = re.compile(
    r"\n#\[cfg\((?P<when>.*)\)\]\s*\n(?:#\[.*\]\s*\n)*(?:pub(?:\([\w: ]+\))?\s+)?mod\s+\w+\s*\{"
)


@lru_cache(maxsize=128)  # one version of a file sits under the bases of many PRs
def rust_test_start(text: str) -> int | None:
    """The line number (from 1) where a Rust file's top-level test module (`#[cfg(test)] mod
    tests {`) starts, if it has one: the lines from there on are tests, though the file is not.
    A module compiled only in tests on some platform (`#[cfg(all(test, windows))]`: zellij
    #5014's key tests) is one too; `any(test, feature = "x")` is not, nor `not(test)`.

    The text is read by patterns from each module on, not cut into lines: a build asks this of
    every version of every Rust file it reads (on ruff, files of 5,000 lines)."""
    if "#[cfg(" not in text:
        return None
    padded = "\n" + text  # each line after a newline: line i after the newline at `at` (the i-th)
    lines = padded.count("\n")
    # Per test module: its first line (0-based), the newline before it, and the newline after
    # its last line (rustfmt closes it at column 0) or the end of the text.
    modules: list[tuple[int, int, int]] = []
    for found in _RUST_CFG_MODULE.finditer(padded):
        if _only_in_tests(found["when"]):
            first = text.count("\n", 0, found.start())
            closing = _CLOSING_LINE.search(padded, padded.find("\n", found.start() + 1))
            end = padded.find("\n", closing.start() + 1) if closing else -1
            modules.append((first, found.start(), len(padded) if end < 0 else end))
    # Only the file's tail of test modules: code after a test module in the middle of the file
    # (lancedb's `#[cfg(all(test, feature = "remote"))] mod test_utils` at line 976 of 4,000) is
    # code.
    tail, tail_at = lines, len(padded)
    for first, at, end in reversed(modules):
        if _TOP_LEVEL_CODE.search(padded, end, tail_at):
            break
        tail, tail_at = first, at
    return tail + 1 if tail < lines else None


# A line of only `}` (blanks after it), and a line that is an item at the top of a Rust file (it
# begins with none of a blank, `}`, `*`, `//` and `/*`), each with the newline before it.
_CLOSING_LINE = re.compile(r"\n\}[^\S\n]*(?=\n|\Z)")
_TOP_LEVEL_CODE = re.compile(r"\n(?=[^\s}*])(?!/[/*])")


def _only_in_tests(when: str) -> bool:
    """Whether a `cfg` predicate holds only in test builds: `test`, or `all(...)` of `test` and
    more."""
    when = when.strip()
    if when == "test":
        return True
    if not (when.startswith("all(") and when.endswith(")")):
        return False
    depth, start, terms = 0, 4, []
    for i, char in enumerate(when[4:-1], start=4):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append(when[start:i].strip())
            start = i + 1
    terms.append(when[start:-1].strip())
    return "test" in terms


FACTS = LanguageFacts(
    name="rust",
    source_suffixes=frozenset({".rs"}),
    lock_files=frozenset({"cargo.lock"}),
    # `x_test.rs`, and a crate's `#[cfg(test)] mod test_util;` (arrow-rs's readers' helpers)
    test_file_names=r"_tests?\.rs$|^test_utils?\.rs$",
    tests_in_file=rust_test_start,
    setup_agent=("Rust", "crates.io"),
)
