"""Per-test outcomes from pytest, keyed by node id (`path/to/test_x.py::Class::test_y[param]`).

Two readers: the junit XML report (`--junitxml`, family xunit1 so each case names its file) is the
primary one; the `-rA` short summary in the console output is the fallback when no report was
written (pytest crashed before writing it, or the command is not plain pytest). Node ids are the
same in both, so SWE-bench-style lists can be compared across them.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from prchain.environments.eras.reports import (
    FILES_PLACEHOLDER,
    OUTCOMES,
    PASSING,
    Outcome,
    is_passing,
    record,
)

__all__ = ["OUTCOMES", "PASSING", "Outcome", "Pytest", "is_passing", "parse_outcomes", "root_error"]

# pytest's options that make both readers work whatever the command looks like; a module that
# fails to import must not hide the outcomes of all the others
# (passed through the PYTEST_ADDOPTS environment variable).
PYTEST_OPTIONS = "-rA --continue-on-collection-errors -o junit_family=xunit1 --junitxml={path}"
# Every run's temporary directories in one place pytest clears when a run starts: each run of a
# stage's suite starts from the same /tmp. pytest's own default keeps the last three runs' (numpy's
# TestIO writes 64 MB files), and in a sandbox whose /tmp is a small tmpfs the third run of the
# same tests failed on a full disk where the first had passed.
BASETEMP = "${TMPDIR:-/tmp}/prchain-pytest"

_SUMMARY_HEADER = re.compile(r"^=+ short test summary info =+$")
_SUMMARY_END = re.compile(r"^=+ .* =+$")
_SUMMARY_WORDS = {
    "PASSED": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "XFAIL": "xfailed",
    "XPASS": "xpassed",
}


_record = record


# ---- junit XML ----------------------------------------------------------------------------------


def parse_junit(text: str) -> dict[str, str]:
    """Node id → outcome for every test case of a junit XML report; ValueError if it is not XML."""
    try:
        root = ET.fromstring(_first_document(text))
    except ET.ParseError as exc:
        raise ValueError(f"not a junit XML report: {exc}") from None
    outcomes: dict[str, str] = {}
    for case in root.iter("testcase"):
        if not case.get("name") and not case.get("classname"):
            continue  # the test an interrupt (Ctrl-C, a time limit) stopped: no outcome
        _record(outcomes, junit_nodeid(case.attrib), _case_outcome(case))
    return outcomes


def _first_document(text: str) -> str:
    """The report up to the end of its first root element: what pytest wrote into the room's pipe
    comes first, anything a process wrote there afterwards does not count."""
    opened = text.find("<testsuite")
    if opened < 0:
        return text
    end = "</testsuites>" if text.startswith("<testsuites", opened) else "</testsuite>"
    at = text.find(end, opened)
    return text[: at + len(end)] if at >= 0 else text


def _case_outcome(case: ET.Element) -> str:
    tags = {child.tag: child for child in case}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "failed"
    skipped = tags.get("skipped")
    if skipped is not None:
        return "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
    return "passed"


def junit_nodeid(attrs: dict[str, str]) -> str:
    """Rebuild pytest's node id from a test case's classname, name and (xunit1) file."""
    classname, name, file = attrs.get("classname", ""), attrs.get("name", ""), attrs.get("file")
    if not classname:  # a collection error: the name is the module's dotted path
        return file or name.replace(".", "/") + ".py"
    if file:
        module = file[:-3].replace("/", ".") if file.endswith(".py") else file
        if classname == module or classname.startswith(module + "."):
            classes = classname[len(module) :].strip(".")
            return "::".join(p for p in (file, *classes.split("."), name) if p)
    # No usable file attribute: the module ends before the first capitalised (class) component.
    parts = classname.split(".")
    cut = next((i for i, p in enumerate(parts) if p[:1].isupper()), len(parts))
    path = "/".join(parts[:cut]) + ".py"
    return "::".join([path, *parts[cut:], name])


# ---- the -rA short summary ---------------------------------------------------------------------


def parse_summary(output: str) -> dict[str, str]:
    """Node id → outcome from the `short test summary info` lines of `pytest -rA`.

    Skips are reported there by location, not by node id, so they are absent (not passing either).
    """
    outcomes: dict[str, str] = {}
    inside = False
    for line in output.splitlines():
        if _SUMMARY_HEADER.match(line):
            inside = True
            continue
        if not inside:
            continue
        if _SUMMARY_END.match(line):
            inside = False
            continue
        word, _, rest = line.partition(" ")
        if word in _SUMMARY_WORDS and rest:
            _record(outcomes, summary_nodeid(rest), _SUMMARY_WORDS[word])
    return outcomes


def summary_nodeid(rest: str) -> str:
    """The node id at the start of a summary line, before its ` - message` (brackets respected)."""
    depth = 0
    for i, char in enumerate(rest):
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        elif depth == 0 and rest.startswith(" - ", i):
            return rest[:i]
    if depth:  # unbalanced brackets in a parameter id: cut after the last closing bracket instead
        end = rest.rfind("] - ")
        if end >= 0:
            return rest[: end + 1]
    return rest.rstrip()


def parse_outcomes(report: str | None, output: str) -> dict[str, str]:
    """The junit report when there is a readable one with test cases, else the console summary."""
    if report:
        try:
            found = parse_junit(report)
        except ValueError:
            found = {}
        if found:
            return found
    return parse_summary(output)


# ---- the root error ----------------------------------------------------------------------------

# pytest's `E   SomeError: …` lines carry the exception; other tools print `SomeError: …` bare.
_E_LINE = re.compile(r"^E\s+((\w+\.)*\w*(Error|Exception|Exit)\b.*)")
_ROOT = re.compile(r"^((\w+\.)*\w*(Error|Exception)|Fatal Python error)\b[: ].*")


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


PYTEST = "python -m pytest -p no:cacheprovider"
# Test modules by name: pytest's defaults, and the `*_tests.py` / `tests.py` suites that set their
# own `python_files` (arrow 2016, markupsafe 2017).
_PYTEST_MODULE = re.compile(r"^(test_.*|.*_tests?|tests)\.py$")


def _configured(path: str, patterns: Sequence[str]) -> bool:
    """Whether pytest's `python_files` globs take `path` (a glob with a `/` is matched against
    the path's end, the others against its name, as pytest does)."""
    name = path.rsplit("/", 1)[-1]
    return path.endswith(".py") and any(
        fnmatch.fnmatchcase(path, g) or fnmatch.fnmatchcase(path, f"*/{g}")
        if "/" in g
        else fnmatch.fnmatchcase(name, g)
        for g in patterns
    )


class Pytest:
    """pytest's reader: the junit report through PYTEST_ADDOPTS, whatever the command looks like.
    `patterns`: the project's own `python_files` globs, where it sets them (PyGithub's
    `tests/*.py`), which name test modules beside pytest's defaults."""

    def __init__(self, patterns: Sequence[str] = ()) -> None:
        self.patterns = tuple(patterns)

    def script(self, command: str, report_path: str) -> str:
        # The room's own options (the image's plugins) come first; a report path the tester
        # cannot remove (the room's pipe) stays.
        options = shlex.quote(PYTEST_OPTIONS.format(path=report_path))
        keep = '"${PYTEST_ADDOPTS:+$PYTEST_ADDOPTS }"'
        return (
            f"rm -f {shlex.quote(report_path)} 2>/dev/null; "
            f'export PYTEST_ADDOPTS={keep}{options}" --basetemp={BASETEMP}"; {command}'
        )

    def parse(self, report: str | None, output: str) -> dict[str, str]:
        return parse_outcomes(report, output)

    def root_error(self, output: str) -> str:
        return root_error(output)

    def narrowed(self, suite: str) -> str:
        """pytest's own arguments are kept, its test directory is replaced by `{files}`."""
        if FILES_PLACEHOLDER in suite or not suite.startswith(PYTEST):
            return suite
        flags = [w for w in suite[len(PYTEST) :].split() if w.startswith("-")]  # --assert=plain
        return " ".join([PYTEST, *flags, FILES_PLACEHOLDER])

    def targets(self, test_paths: list[str]) -> list[str]:
        """Only test modules by name (test_*.py, *_test.py, *_tests.py, tests.py): a file named on
        the command line is collected whatever its name, and helpers such as a benchmark module
        under the test directory need plugins the repository does not run by default."""
        return [
            p
            for p in test_paths
            if _PYTEST_MODULE.match(p.rsplit("/", 1)[-1]) or _configured(p, self.patterns)
        ]

    def names(self, test_id: str) -> list[str]:
        """`tests/test_x.py::TestX::test_y[p]` → [TestX, test_y]."""
        return [n.split("[", 1)[0] for n in test_id.split("::")[1:] if n.split("[", 1)[0]]
