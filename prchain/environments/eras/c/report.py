"""Per-test outcomes of a C or C++ suite, from each runner's machine-readable output.

The report is a bundle of sections (`### prchain-report <kind> <label>` then the file), gathered
after the test command by the script `CTests.script` wraps it in:

| kind   | written by                                   | test id                                   |
|--------|----------------------------------------------|-------------------------------------------|
| ctest  | `ctest --output-junit` (CMake 3.21 on)       | `ctest::<test name>`                      |
| xml    | GoogleTest binaries ctest or meson ran (`GTEST_OUTPUT`, a file per binary) | `<suite>::<test>` |
| (in ctest's JUnit) | cmocka binaries' XML on stdout (`CMOCKA_MESSAGE_OUTPUT=xml`), kept by ctest | `<ctest test>::<case>` |
| meson  | `meson test`'s meson-logs/testlog.json       | `<project>[:<suite>]::<test name>`        |
| trs    | Automake's test driver, one `.trs` per test script (its `.log` beside it, TAP read from there) | `<script>::<script name>`, a TAP point `<script>::<description>` |

Ids hold no numbers a new test would shift (a TAP point without a description is `#<n>`), so the
same test has the same id in every era and run. A test whose executable did not build has no
outcome at all (ctest's "Not Run: Unable to find executable", meson's missing binary): the unit
did not build, and the build's failed targets (`FAILED: x.o` of ninja, `*** [x.o] Error` of
make) are ids without `::`, errored: environment facts, as Go's packages that did not compile.
Without a report (ctest before 3.21 writes no JUnit), the console's result lines are read.
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
import string
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass

from prchain.environments.eras.reports import CaseCheck, OneTest, record

BUILD_DIR = "/work/.cache/c-build"  # out of the tree, so the agent's diffs never see it
SECTION = "### prchain-report"
_SECTION = re.compile(rf"^{SECTION} (\w+) (.*)$", re.M)
_NOT_BUILT = re.compile(r"unable to find|could not find executable|not found", re.I)
_JUNIT_FAILED = ("failure", "error")
_XML_BLOCK = re.compile(r"<testsuites\b.*?</testsuites>", re.S)
_MESON = {
    "OK": "passed",
    "FAIL": "failed",
    "SKIP": "skipped",
    "EXPECTEDFAIL": "xfailed",
    "UNEXPECTEDPASS": "failed",  # meson counts it a failure
    "TIMEOUT": "failed",
    "ERROR": "error",
}
_AUTOMAKE = {"PASS": "passed", "FAIL": "failed", "SKIP": "skipped", "XFAIL": "xfailed"}
_AUTOMAKE |= {"XPASS": "failed", "ERROR": "error"}  # automake fails the run on both
_TAP = re.compile(r"^(not ok|ok)\b\s*(\d*)\s*(?:-\s*)?([^#\n]*?)\s*(?:#\s*(\w+).*)?$", re.M)
# Console lines, when no report was written.
_CTEST_LINE = re.compile(
    r"Test\s+#\d+: (\S+) \.*\s*(?:\*\*\*)?(Passed|Failed|Not Run(?: \(Disabled\))?|Skipped"
    r"|Exception|Timeout)"
)
_MESON_LINE = re.compile(
    r"^\s*\d+/\d+ (\S.*?)\s+(OK|FAIL|SKIP|EXPECTEDFAIL|UNEXPECTEDPASS|TIMEOUT"
    r"|ERROR)\s",
    re.M,
)
_AUTOMAKE_LINE = re.compile(
    r"^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): (\S+)(?: (\d+)(?: - (.*))?)?$", re.M
)
# The build's failed targets: ninja's `FAILED: x.o`, make's `make[2]: *** [Makefile:9: x.o] Error 1`.
_NINJA_FAILED = re.compile(r"^FAILED: (\S+)", re.M)
_MAKE_FAILED = re.compile(r"^make(?:\[\d+\])?: \*\*\* \[(?:[^\]:]+:\d+: )?([^\]]+)\] Error", re.M)
_COMPILE_ERROR = re.compile(
    r"^\S+:\d+(?::\d+)?: (?:fatal )?error: .+|^.*undefined reference to .+|^CMake Error.*"
    r"|^ERROR: .+|^configure: error: .+|^meson\.build:\d+:\d+: ERROR: .+",
    re.M,
)


def sections(report: str) -> Iterator[tuple[str, str, str]]:
    """(kind, label, text) of each section of a bundle."""
    found = list(_SECTION.finditer(report))
    for here, after in zip(found, [*found[1:], None], strict=True):
        end = after.start() if after else len(report)
        yield here.group(1), here.group(2).strip(), report[here.end() : end].strip("\n")


def parse_bundle(report: str, output: str) -> dict[str, str]:
    """Test id → outcome of every section, and the build's failed targets."""
    outcomes: dict[str, str] = {}
    trs: dict[str, str] = {}
    for kind, label, text in sections(report):
        if kind in ("ctest", "xml"):
            parse_junit(text, outcomes, prefix="ctest" if kind == "ctest" else "")
        elif kind == "meson":
            parse_meson(text, outcomes)
        elif kind == "trs":
            trs[label] = text
        elif kind == "log" and label in trs:
            parse_automake(label, trs[label], text, outcomes)
    build_failures(output, outcomes)
    return outcomes


def parse_junit(text: str, outcomes: dict[str, str], prefix: str = "") -> None:
    """A JUnit file: ctest's (`prefix` "ctest": ids by test name) or a test framework's (ids
    `<suite>::<case>`). A ctest test whose executable is missing did not build: no outcome."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return
    for suite in root.iter("testsuite"):
        for case in suite.findall("testcase"):
            name = case.get("name", "")
            where = prefix or suite.get("name") or case.get("classname") or "tests"
            outcome = _junit_outcome(case)
            if name and outcome:
                record(outcomes, f"{where}::{name}", outcome)
            if prefix and name:
                embedded(name, case.findtext("system-out") or "", outcomes)


def embedded(test: str, printed: str, outcomes: dict[str, str]) -> None:
    """The cmocka cases a ctest test printed as XML (`CMOCKA_MESSAGE_OUTPUT=xml`, one document per
    group), as `<ctest test>::<case>`: cmocka names its file by group only, and most projects call
    every group `tests`, so files would overwrite each other; ctest keeps each test's output."""
    for block in _XML_BLOCK.findall(printed):
        try:
            root = ET.fromstring(block)
        except ET.ParseError:
            continue
        for case in root.iter("testcase"):
            outcome = _junit_outcome(case)
            if case.get("name") and outcome:
                record(outcomes, f"{test}::{case.get('name')}", outcome)


def _junit_outcome(case: ET.Element) -> str | None:
    if any(case.find(tag) is not None for tag in _JUNIT_FAILED):
        return "failed"
    skipped = case.find("skipped")
    status = case.get("status", "")
    if skipped is not None or status in ("notrun", "disabled"):
        said = (skipped.get("message", "") if skipped is not None else "") + (
            case.findtext("system-out") or ""
        )
        return None if status == "notrun" and _NOT_BUILT.search(said) else "skipped"
    return "failed" if status == "fail" else "passed"


def parse_meson(text: str, outcomes: dict[str, str]) -> None:
    """meson's testlog.json: one JSON object a line (`name`, `suite`, `result`)."""
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(entry, dict) or "name" not in entry:
            continue
        outcome = _MESON.get(str(entry.get("result", "")), "error")
        record(outcomes, meson_id(str(entry["name"]), entry.get("suite")), outcome)


def meson_id(name: str, suites: object = None) -> str:
    """`project:suite / test` (meson 0.5x on) → `project:suite::test`; a bare name (older logs)
    takes its first suite."""
    where, _, test = name.rpartition(" / ")
    if where:
        return f"{where}::{test}"
    first = suites[0] if isinstance(suites, list) and suites else "meson"
    return f"{first}::{name}"


def parse_automake(script: str, trs: str, log: str, outcomes: dict[str, str]) -> None:
    """One test script: its TAP points when its log is TAP, else the script's own result."""
    points = list(_TAP.finditer(log))
    if points:
        for i, point in enumerate(points, start=1):
            done, number, description, directive = point.groups()
            name = description.strip() or f"#{number or i}"
            record(outcomes, f"{script}::{name}", _tap_outcome(done, directive))
        return
    result = re.search(r"^:global-test-result: (\w+)", trs, re.M) or re.search(
        r"^:test-result: (\w+)", trs, re.M
    )
    if result:
        name = script.rsplit("/", 1)[-1]
        record(outcomes, f"{script}::{name}", _AUTOMAKE.get(result.group(1), "error"))


def _tap_outcome(done: str, directive: str | None) -> str:
    said = (directive or "").upper()
    if said == "SKIP":
        return "skipped"
    if said == "TODO":
        return "xfailed" if done == "not ok" else "failed"  # a TODO that passes: automake's XPASS
    return "passed" if done == "ok" else "failed"


def build_failures(output: str, outcomes: dict[str, str]) -> None:
    """Each target the build failed to make, an id without `::`, errored."""
    for target in [*_NINJA_FAILED.findall(output), *_MAKE_FAILED.findall(output)]:
        record(outcomes, target.strip(), "error")


def parse_console(output: str) -> dict[str, str]:
    """Outcomes from the runners' result lines, when no report was written."""
    outcomes: dict[str, str] = {}
    for name, said in _CTEST_LINE.findall(output):
        outcome = {"Passed": "passed", "Skipped": "skipped"}.get(said, "failed")
        if said.startswith("Not Run"):
            outcome = "skipped" if "Disabled" in said else ""
        if outcome:
            record(outcomes, f"ctest::{name}", outcome)
    for name, said in _MESON_LINE.findall(output):
        record(outcomes, meson_id(name), _MESON[said])
    for said, script, number, description in _AUTOMAKE_LINE.findall(output):
        name = (description or (f"#{number}" if number else script.rsplit("/", 1)[-1])).strip()
        record(outcomes, f"{script}::{name}", _AUTOMAKE[said])
    build_failures(output, outcomes)
    return outcomes


def root_error(output: str) -> str:
    """The compiler's or the linker's first error, else the build system's own."""
    found = _COMPILE_ERROR.search(output)
    return found.group(0).strip()[:300] if found else ""


# Run by the script after the test command: every framework XML file of the run, ctest's JUnit,
# meson's test log, Automake's .trs files with their logs, as sections of the report.
_GATHER = r"""{{
  for f in "$PRCHAIN_REPORTS"/ctest/*.xml; do [ -f "$f" ] && echo "{s} ctest ${{f##*/}}" && cat "$f"; done
  for f in "$PRCHAIN_REPORTS"/*.xml; do [ -f "$f" ] && echo "{s} xml ${{f##*/}}" && cat "$f"; done
  [ -f {b}/meson-logs/testlog.json ] && echo "{s} meson testlog" && cat {b}/meson-logs/testlog.json
  find . {b} -name '*.trs' 2>/dev/null | sort -u | while read -r t; do
    s=${{t#./}}; s=${{s%.trs}}; echo "{s} trs $s"; cat "$t"; echo "{s} log $s"; cat "${{t%.trs}}.log" 2>/dev/null
  done
}} > {path}"""


# ctest's listing without running anything (`ctest -N -V`, every CMake): per test its number,
# command, working directory and name. The C room's clean room runs each required test from it.
_LISTED_PROJECT = re.compile(r"^Test project (\S.*)$", re.M)
_LISTED_FIELD = re.compile(r"^(\d+): (Test command|Working Directory): ?(.*)$", re.M)
_LISTED_NAME = re.compile(r"^\s*Test\s+#(\d+): (.+?)\s*$", re.M)
_CTEST_RUN = re.compile(r"(?<![\w-])ctest(?:\s[^;&|\n]*)?$")
LISTING = "prchain-ctest-listing"
GTEST_PASSED = "[  PASSED  ] 1 test."
GTEST_NONE = "[  PASSED  ] 0 tests."  # GoogleTest's summary when its filter matched nothing
CTEST_NONE = "No tests were found!!!"  # ctest's, when -R matched no test
# Root's canaries named beside each GoogleTest case: a program that guesses which name of its
# filter is the case, and remembers it for the runs after, guesses right once in CANARIES + 1.
CANARIES = 3


@dataclass(frozen=True)
class Listed:
    """One test ctest knows: its name, command (argv) and working directory."""

    name: str
    argv: tuple[str, ...]
    directory: str


def listed(listing: str) -> tuple[str, list[Listed]]:
    """(ctest's build directory, its tests) from `ctest -N -V`'s output."""
    project = _LISTED_PROJECT.search(listing)
    fields: dict[str, dict[str, str]] = {}
    for number, field, value in _LISTED_FIELD.findall(listing):
        fields.setdefault(number, {})[field] = value.strip()
    tests = []
    for number, name in _LISTED_NAME.findall(listing):
        found = fields.get(number, {})
        try:
            argv = tuple(shlex.split(found.get("Test command", "")))
        except ValueError:
            argv = ()
        where = found.get("Working Directory") or (project.group(1).strip() if project else "")
        tests.append(Listed(name, argv, where))
    return (project.group(1).strip() if project else BUILD_DIR), tests


def each(listing: str, required: list[str]) -> list[OneTest]:
    """The required tests root runs on their own (RUN_CASES): a ctest test (`ctest::<name>`) by
    ctest, a GoogleTest case (`<Suite>::<Case>`) by its binary with `--gtest_filter`, each with
    root's canaries, test names drawn for this run that no build holds. A case of a test ctest
    knows by name (cmocka's `<ctest test>::<case>`) is `apart`."""
    build, tests = listed(listing)
    names = {t.name for t in tests}
    runs = []
    ctest_canary = drawn()  # one per run: RUN_CASES runs it once (jansson's stages hold 215 tests)
    for test in required:
        where, _, name = test.partition("::")
        if where == "ctest" and name:
            runs.append(OneTest(test, "ctest", name, build, ctest_check(name, ctest_canary)))
        elif name and where not in names:
            case = f"{where}.{name}"
            canaries = [f"{where}.{drawn()}" for _ in range(CANARIES)]
            runs += [OneTest(test, t.argv[0], case, t.directory, gtest_check(t, case, canaries))
                     for t in gtest_candidates(tests, case)]  # fmt: skip
    return runs


def drawn() -> str:
    """A test's name drawn at random (a capital, then 7 to 19 letters and digits): neither its
    spelling nor its length tells the tested program it is root's. A GoogleTest canary takes the
    suite of the case it stands beside, so the suite does not tell either."""
    rest = string.ascii_letters + string.digits
    size = 7 + secrets.randbelow(13)
    return secrets.choice(string.ascii_uppercase) + "".join(
        secrets.choice(rest) for _ in range(size)
    )


def apart(listing: str, required: list[str]) -> list[str]:
    """The required cases of a test ctest knows by name (cmocka's groups print their cases'
    XML; cmocka cannot run one case alone): read from the sealed run's report."""
    names = {t.name for t in listed(listing)[1]}
    return [t for t in required if t.partition("::")[0] in names]


def gtest_candidates(tests: list[Listed], case: str) -> list[Listed]:
    """The ctest tests that run `case`'s binary: those registered for it alone
    (gtest_discover_tests, gtest_add_tests), else every test's binary once."""
    own = [t for t in tests if t.argv and f"--gtest_filter={case}" in t.argv]
    if own:
        return own[:1]
    seen: dict[str, Listed] = {}
    for t in tests:
        if t.argv:
            seen.setdefault(t.argv[0], t)
    return list(seen.values())


def ctest_check(name: str, canary: str) -> CaseCheck:
    """ctest's run of one test; its canary, `ctest -R` of a name no test has, must say that no
    test was found. What ctest prints is ctest's own (the tested program's output is not shown
    without `--output-on-failure`, and no file that configures ctest crosses): the canary holds
    the harness itself to its filter, and a test's pass is its program's exit status."""
    exact = shlex.quote(f"^{re.escape(name)}$")
    return CaseCheck(
        f"ctest -N -R {exact} | grep -qx 'Total Tests: 1'",
        f"ctest -R {exact}",
        "",
        "100% tests passed, 0 tests failed out of 1",
        "The following tests FAILED",
        f"ctest -R {shlex.quote(f'^{re.escape(canary)}$')}",
        CTEST_NONE,
        "tests passed",
    )


def gtest_check(test: Listed, case: str, canaries: list[str]) -> CaseCheck:
    """GoogleTest's own lines for `case` run alone: listed by the binary, passed, and its
    summary of one passed test; the arguments ctest gives it kept but its filter. Every filter
    also names root's canaries (each time in an order drawn anew), which real GoogleTest neither
    lists nor runs, so no run tells the program which name is the case, the listing included;
    and the canaries run alone must show GoogleTest's summary of nothing run: a program that
    prints a pass for what its filter names shows a canary listed or passing."""
    exe = shlex.quote(test.argv[0])
    kept = [a for a in test.argv[1:] if not a.startswith(("--gtest_filter", "--gtest_output"))]
    args = " ".join(shlex.quote(a) for a in kept)

    def named(*names: str) -> str:
        drawn_order = list(names)
        secrets.SystemRandom().shuffle(drawn_order)
        return shlex.quote(f"--gtest_filter={':'.join(drawn_order)}")

    def leaf(name: str) -> str:
        return name.split(".", 1)[1]

    listing = (
        f"awk -v c={shlex.quote(leaf(case))} -v n={shlex.quote(' '.join(map(leaf, canaries)))} "
        '\'BEGIN { split(n, k, " "); for (i in k) bad[k[i]] = 1 } $1 == c { f = 1 } '
        "($1 in bad) { b = 1 } END { exit !(f && !b) }'"
    )
    marks = "\n".join(f"] {c}" for c in canaries)
    return CaseCheck(
        f"{exe} --gtest_list_tests {named(case, *canaries)} | {listing}",
        f"env -u GTEST_OUTPUT {exe} {args} {named(case, *canaries)}",
        f"[       OK ] {case} (",
        GTEST_PASSED,
        f"[  FAILED  ]\n{marks}",
        f"env -u GTEST_OUTPUT {exe} {args} {named(*canaries)}",
        GTEST_NONE,
        f"[       OK ]\n[ RUN      ]\n{marks}",
    )


class CTests:
    """The reader of every C/C++ room's runner: ctest, meson test, Automake's `make check`.
    In a clean room ctest's tests and GoogleTest's cases run each on its own (reports.RunsEach):
    a report file is written by the tested program itself."""

    def build_script(self, command: str, report_path: str) -> str | None:
        """The command with its ctest run replaced by ctest's listing (`ctest -N -V`: nothing
        runs), written to `report_path`; None without a ctest run to replace (meson, make)."""
        if not _CTEST_RUN.search(command):
            return None
        path = shlex.quote(report_path)
        listing = _CTEST_RUN.sub('ctest -N -V > "$PRCHAIN_LIST"', command)
        return (
            f"[ -p {path} ] || rm -f {path}; PRCHAIN_LIST=$(mktemp); "
            f'( {listing}\n); rc=$?; cat "$PRCHAIN_LIST" > {path}; rm -f "$PRCHAIN_LIST"; '
            "exit $rc"
        )

    def each(self, report: str, required: list[str]) -> list[OneTest]:
        return each(report, required)

    def apart(self, report: str, required: list[str]) -> list[str]:
        return apart(report, required)

    def script(self, command: str, report_path: str) -> str:
        """The command with ctest asked for JUnit (when it can write it), GoogleTest for XML files
        in a fresh directory and cmocka for XML on stdout; the report gathered afterwards."""
        path = shlex.quote(report_path)
        junit = (
            'J=""; ctest --help 2>/dev/null | grep -q -- --output-junit && '
            'J="--output-junit $PRCHAIN_REPORTS/ctest/ctest.xml"'
        )
        with_junit = re.sub(r"(?<![\w-])ctest(?=\s|$)", "ctest $J", command)
        gather = _GATHER.format(s=SECTION, b=BUILD_DIR, path=path)
        return (
            f"rm -f {path}; PRCHAIN_REPORTS=$(mktemp -d); mkdir -p $PRCHAIN_REPORTS/ctest; "
            f"rm -f {BUILD_DIR}/meson-logs/testlog.json; "
            "export GTEST_OUTPUT=xml:$PRCHAIN_REPORTS/ CMOCKA_MESSAGE_OUTPUT=xml; "
            f"{junit}; ( {with_junit}\n); rc=$?; {gather}; exit $rc"
        )

    def parse(self, report: str | None, output: str) -> dict[str, str]:
        """The report's outcomes over the console's: ctest before 3.21 writes no JUnit, so its
        result lines are read beside the test frameworks' files."""
        found = parse_bundle(report, output) if report else {}
        return {**parse_console(output), **found}

    def root_error(self, output: str) -> str:
        return root_error(output)

    def narrowed(self, suite: str) -> str:
        """Unchanged: a C suite's tests are registered with the build, not found by file."""
        return suite

    def targets(self, test_paths: list[str]) -> list[str]:
        return []

    def names(self, test_id: str) -> list[str]:
        """`ctest::foo_test` → [foo_test] (the add_test name); a framework's `Suite::Case` →
        [Case] (the function the patch writes); a TAP point's description is no name."""
        where, _, name = test_id.partition("::")
        if not name or "/" in where:
            return []
        return [name]
