"""What a suite run says about its environment: counts with collection errors apart, and the root
error (the first exception pytest reports), read from the whole output, never a cut tail."""

from __future__ import annotations

import re
from dataclasses import dataclass

from prchain.verdicts.pytest_report import is_passing


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    collection_errors: int = 0
    first_error: str = ""

    @property
    def ran(self) -> int:
        return self.passed + self.failed + self.errors

    @property
    def share(self) -> float:
        return self.passed / self.ran if self.ran else 0.0

    def verified(self, pass_share: float) -> bool:
        return not self.collection_errors and self.passed > 0 and self.share >= pass_share


# pytest's `E   SomeError: …` lines carry the exception; other tools print `SomeError: …` bare.
_E_LINE = re.compile(r"^E\s+((\w+\.)*\w*(Error|Exception|Exit)\b.*)")
_ROOT = re.compile(r"^((\w+\.)*\w*(Error|Exception)|Fatal Python error)\b[: ].*")


def count(outcomes: dict[str, str]) -> Counts:
    """Counts of one suite run; a test id without `::` that errored is a module that did not collect."""
    found = Counts()
    for test, outcome in outcomes.items():
        if "::" not in test and outcome == "error":
            found.collection_errors += 1
        elif is_passing(outcome):
            found.passed += 1
        elif outcome == "failed":
            found.failed += 1
        elif outcome == "error":
            found.errors += 1
        else:
            found.skipped += 1
    return found


def root_error(output: str) -> str:
    """The first exception pytest reports (`E   ImportError: …`), else the first bare one."""
    lines = [line.strip() for line in output.splitlines()]
    for line in lines:
        found = _E_LINE.match(line)
        if found:
            return found.group(1)[:300]
    for line in lines:
        if _ROOT.match(line):
            return line[:300]
    return _internal_error(lines)


def _internal_error(lines: list[str]) -> str:
    """pytest's own crash (`INTERNALERROR> …`, exit code 3, or 2 before collection): the exception
    it ends with, which no other line shows (pytest 2.8 on 3.9: `AssertionError` in its config)."""
    inner = [line.removeprefix("INTERNALERROR>").strip() for line in lines]
    inner = [
        line for line, raw in zip(inner, lines, strict=True) if raw.startswith("INTERNALERROR>")
    ]
    for line in reversed(inner):
        found = _E_LINE.match(line)
        text = found.group(1) if found else line
        if _BARE.match(text):
            return f"pytest INTERNALERROR: {text}"[:300]
    return ""


_BARE = re.compile(r"^(\w+\.)*\w*(Error|Exception|Exit)\b(:|$)")
