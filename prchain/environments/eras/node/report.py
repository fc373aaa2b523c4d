"""Per-test outcomes of a JavaScript/TypeScript suite, keyed `<file>::<describe> > <test>`.

Every runner leaves one jest-style JSON report (`testResults[].assertionResults[]`): jest's own
`--json --outputFile`, vitest's json reporter (jest-compatible), and for mocha and `node --test`
the two small reporters beside this module, which the toolchain layer installs under
/usr/local/lib/prchain-node. A test file that failed to load (a syntax error, a missing module, a
TypeScript error under ts-jest) is `<file>` with outcome error: an environment fact, not a test.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Mapping
from importlib import resources
from typing import Any

from prchain.environments.carry import WORKDIR
from prchain.environments.eras.reports import FILES_PLACEHOLDER, Canary, record

REPORTERS = "/usr/local/lib/prchain-node"  # where the toolchain layer puts the reporters
MOCHA_REPORTER = f"{REPORTERS}/mocha_reporter.js"
NODE_REPORTER = f"{REPORTERS}/node_test_reporter.mjs"
JEST_LAUNCHER = f"{REPORTERS}/jest_json.js"


def reporter_files() -> dict[str, str]:
    """The reporters and jest's launcher (files beside this module) by name: the toolchain layer
    installs them, and every clean room writes them again before it runs (an image built by an
    older prchain keeps the launcher of its day: stylelint's Node 8 eras, built before jest's
    report was written at the file's own position, read every hidden test as failing)."""
    return {
        name: resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
        for name in (posixpath.basename(p) for p in (MOCHA_REPORTER, NODE_REPORTER, JEST_LAUNCHER))
    }


BIN = "node_modules/.bin/"
RUNNERS = ("jest", "vitest", "mocha")

# jest's statuses (vitest uses the same words); anything else (todo, disabled) did not run.
_STATUS = {"passed": "passed", "failed": "failed", "focused": "passed"}
# Test files as the runners find them by default: jest's `__tests__/` and `*.test|spec.*`, mocha's
# and node's `test/` directory, node's `test-*` and `*-test|_test.*`; and the files of a directory
# under `tests/` (eslint's `tests/lib/rules/*.js`, which its own task runner hands mocha), but not
# every file of `tests/`: helpers such as commander's tests/testHelpers.js are no test file.
TEST_FILE = re.compile(
    r"(^|/)(__tests__/.*|[^/]*[._-](test|spec)|test/.*|tests/[^/]+/.*|test-[^/]*|test)"
    r"\.[cm]?[jt]sx?$"
)


# mocha gives each test and hook 2 s unless the project says otherwise: a test file run alone,
# its first hook loading the project cold (hexojs/hexo's `hexo.init()` under ts-node: 5 s at load
# 4), timed out in every run of verification, where the whole suite had warmed it. A project that
# names no time of its own (in its command, a `.mocharc.*`, test/mocha.opts or package.json's
# `mocha` key) gets MOCHA_TIMEOUT_MS, in verification and every clean room alike.
MOCHA_TIMEOUT_MS = 30_000
MOCHA_TIME = "prchain_mocha_time"
_OWN_TIME = re.compile(r"(^|\s)(-t|--timeout|--no-timeouts?)(\s|=|$)")
_MOCHA_TIME = (
    f"{MOCHA_TIME}='--timeout {MOCHA_TIMEOUT_MS}'; "
    "if grep -qsE '(^|[[:space:]\"])(timeout|-t|--timeout|--no-timeouts?)([[:space:]\"=:]|$)' "
    '.mocharc.* test/mocha.opts || node -e "process.exit(Object.keys('
    "require('./package.json').mocha || {}).includes('timeout') ? 0 : 1)\" 2>/dev/null; "
    f"then {MOCHA_TIME}=; fi"
)

# Where prchain's mocha reporter writes its report: an environment variable, not mocha's
# `--reporter-options output=…`, which mocha before 2.2 (2015) refuses as an unknown option
# (eslint's eras of 2013-2014).
REPORT_VARIABLE = "PRCHAIN_NODE_REPORT"


def report_flags(runner: str, report_path: str) -> str:
    """The options that make `runner` write its report to `report_path` (the console output
    stays: verification reads its root error from it)."""
    path = shlex.quote(report_path)
    if runner == "vitest":
        return f"--reporter=default --reporter=json --outputFile={path}"
    if runner == "mocha":  # the path comes in REPORT_VARIABLE, the time in $MOCHA_TIME (script)
        return f"--reporter {MOCHA_REPORTER} ${MOCHA_TIME}"
    return (  # node --test
        "--test-reporter=spec --test-reporter-destination=stdout "
        f"--test-reporter={NODE_REPORTER} --test-reporter-destination={path}"
    )


_INVOCATION = re.compile(
    r"(?P<runner>(?:node_modules/\.bin/)?(?:jest|vitest|mocha)\b(?:\s+run\b)?|\bnode\s+--test\b)"
)


def with_report(command: str, report_path: str) -> str:
    """`command` with the report options right after its runner (the first one it names); jest
    through the launcher that keeps them out of process.argv (jest_json.js)."""
    found = _INVOCATION.search(command)
    if not found:
        return command
    word = found.group("runner")
    runner = "node" if word.startswith("node ") else word.removeprefix(BIN).split()[0]
    if runner == "jest":
        launcher = f"node {JEST_LAUNCHER} {shlex.quote(report_path)} {word}"
        return f"{command[: found.start()]}{launcher}{command[found.end() :]}"
    flags = report_flags(runner, report_path)
    return f"{command[: found.end()]} {flags}{command[found.end() :]}"


def relative(path: str, root: str = WORKDIR) -> str:
    return path[len(root) + 1 :] if path.startswith(root.rstrip("/") + "/") else path


def parse_report(text: str, root: str = WORKDIR) -> dict[str, str]:
    """Test id → outcome of a jest-style JSON report; ValueError if it is not one."""
    try:
        tree = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a JSON test report: {exc}") from None
    if not isinstance(tree, dict) or not isinstance(tree.get("testResults"), list):
        raise ValueError("not a jest-style report: no testResults")
    outcomes: dict[str, str] = {}
    for suite in tree["testResults"]:
        _read_file(outcomes, suite, root)
    return outcomes


def _read_file(outcomes: dict[str, str], suite: dict[str, Any], root: str) -> None:
    file = relative(str(suite.get("name", "")), root)
    cases = suite.get("assertionResults") or []
    if not cases:  # nothing ran: a file that failed to load is an error, an empty one nothing
        if suite.get("status") == "failed" or suite.get("message"):
            record(outcomes, file, "error")
        return
    for case in cases:
        names = [str(t) for t in case.get("ancestorTitles") or [] if t]
        test = " > ".join([*names, str(case.get("title", ""))])
        record(outcomes, f"{file}::{test}", _STATUS.get(str(case.get("status")), "skipped"))


# vitest's verbose lines: `✓ test/a.test.ts > describe > test 3ms` (√ and × on some terminals).
_ANSI = re.compile(r"\x1b\[[0-9;]*m|\x00")
_CONSOLE_TEST = re.compile(
    r"^\s*(?P<mark>[√✓×✗↓])\s+(?P<file>\S+\.[cm]?[jt]sx?) > (?P<rest>.+?)(?:\s+\d+(?:\.\d+)?m?s)?$"
)
_MARKS = {"√": "passed", "✓": "passed", "×": "failed", "✗": "failed", "↓": "skipped"}


def console_outcomes(output: str) -> dict[str, str]:
    """Test id → outcome from vitest's verbose console lines."""
    outcomes: dict[str, str] = {}
    for line in _ANSI.sub("", output).splitlines():
        found = _CONSOLE_TEST.match(line)
        if found:
            test = f"{found.group('file')}::{found.group('rest').strip()}"
            record(outcomes, test, _MARKS[found.group("mark")])
    return outcomes


# mocha loads every test file before it runs one, and stops at the first that fails to load
# without a report: the file is the first test file of Node's require stack, the `path:line`
# that a SyntaxError starts with, or the first stack frame in one (an error its code threw:
# eslint 2024's docs/…/sample-data/test-file.js, `ReferenceError: x is not defined`).
_REQUIRED_BY = re.compile(r"^- (\S+)$")
_AT_LINE = re.compile(r"^(\S+):\d+$")
_FRAME = re.compile(r"^at (?:.* \()?(?:file://)?(/\S+?):\d+:\d+\)?$")  # ESM: file:///…
_MOCHA_CRASH = "Exception during run: "


def load_error(output: str, root: str = WORKDIR) -> dict[str, str]:
    """`<file>` → error for a test file that did not load, when a run left no report."""
    for line in output.splitlines():
        line = line.strip().removeprefix(_MOCHA_CRASH)
        found = _REQUIRED_BY.match(line) or _AT_LINE.match(line) or _FRAME.match(line)
        if found and TEST_FILE.search(relative(found.group(1), root)):
            return {relative(found.group(1), root): "error"}
    return {}


# ---- the root error -----------------------------------------------------------------------------

_TS_ERROR = re.compile(r"error TS\d+:.*")
_SUITE_FAILED = re.compile(r"Test suite failed to run|Failed Suites|FAIL .*\[")
_ERROR_LINE = re.compile(
    r"^((\w+\.)*\w*(Error|Exception)( \[\w+\])?:.*|Cannot find module .*|"
    r"npm ERR! .*|ERR_PNPM_\w+.*|error .*Couldn't find .*)"
)


def root_error(output: str) -> str:
    """The first TypeScript error, else the message under jest's or vitest's 'failed to run', else
    the first `SomeError: …` line."""
    # pnpm sets its error code off with a thin space (U+2009): `ERR_PNPM_FETCH_403\u2009 GET …`
    lines = [
        line.replace("\u2009", " ").strip().removeprefix(_MOCHA_CRASH)
        for line in output.splitlines()
    ]
    for line in lines:
        found = _TS_ERROR.search(line)
        if found:
            return line[:300]
    for i, line in enumerate(lines):
        if _SUITE_FAILED.search(line):
            after = next((n for n in lines[i + 1 :] if n and not n.startswith("FAIL")), "")
            if after:
                return after[:300]
    return next((line[:300] for line in lines if _ERROR_LINE.match(line)), "")


class JsReport:
    """The reader of jest, vitest, mocha and `node --test`: it finds the runner in the command."""

    def __init__(self, root: str = WORKDIR) -> None:
        self.root = root  # test files are named relative to it (the agent's checkout)

    def script(self, command: str, report_path: str) -> str:
        """An image of a toolchain layer older than the jest launcher gets the options on jest's
        command line instead."""
        run, report = with_report(command, report_path), shlex.quote(report_path)
        start = f"rm -f {report}; export {REPORT_VARIABLE}={report}"
        if MOCHA_REPORTER in run:
            start += "; " + (f"{MOCHA_TIME}=" if _OWN_TIME.search(command) else _MOCHA_TIME)
        if JEST_LAUNCHER not in run:
            return f"{start}; {run}"
        flags = command.replace("jest", f"jest --json --outputFile={report}", 1)
        return f"{start}; if [ -f {JEST_LAUNCHER} ]; then {run}; else {flags}; fi"

    def parse(self, report: str | None, output: str) -> dict[str, str]:
        """The report, else the test lines of the console (vitest before 0.10 wrote a flat list
        without describe blocks), else the test file that did not load."""
        try:
            found = parse_report(report, self.root) if report else {}
        except ValueError:
            found = {}
        return found or console_outcomes(output) or load_error(output, self.root)

    def root_error(self, output: str) -> str:
        return root_error(output)

    def narrowed(self, suite: str) -> str:
        """The suite's command with its own file and directory arguments replaced by `{files}`
        (jest and vitest take them as patterns, mocha and node as files; options are kept)."""
        if FILES_PLACEHOLDER in suite or not _INVOCATION.search(suite):
            return suite
        words = shlex.split(suite)
        kept = [
            w
            for i, w in enumerate(words)
            if not (_positional_path(w) and (i == 0 or words[i - 1] not in _VALUE_OPTIONS))
        ]
        return " ".join([*map(shell_word, kept), FILES_PLACEHOLDER])

    def targets(self, test_paths: list[str]) -> list[str]:
        """Test files, not the fixtures and helpers beside them (`node --test tests/fixtures/x.js`
        would run a fixture program as a test)."""
        return [p for p in test_paths if TEST_FILE.search(p) and not _NOT_TESTS.search(p)]

    def names(self, test_id: str) -> list[str]:
        """`test/a.test.ts::parser > reads a line` → [parser, reads a line]: the titles the
        source gives `describe` and `it`/`test`."""
        _, _, titles = test_id.partition("::")
        return [t for t in titles.split(" > ") if t]

    def canary(
        self,
        command: str,
        test_files: list[str],
        nonce: str,
        texts: Mapping[str, str] | None = None,
    ) -> Canary | None:
        """A test file beside the first hidden test file the command names, named and suffixed
        like it (so the runner's configuration takes it as a test file), run with it (reports.
        Canaried): jest, vitest, mocha and `node --test`."""
        found = _INVOCATION.search(command)
        if found is None:
            return None
        word = found.group("runner")
        runner = "node --test" if word.startswith("node ") else word.removeprefix(BIN).split()[0]
        source = _CANARIES.get(runner)
        if source is None:
            return None
        for hidden in test_files:
            word = f" {shlex.quote(hidden)}"
            at = command.find(word, found.end())
            end = at + len(word)
            if at < 0 or (end < len(command) and not command[end].isspace()):
                continue
            name = posixpath.basename(hidden)
            parts = name.split(".")
            middle = parts[1:-1] or ["test"]
            path = posixpath.join(
                posixpath.dirname(hidden), ".".join([f"prchain-canary-{nonce}", *middle, parts[-1]])
            )
            title = f"prchain canary {nonce}"
            run = f"{command[:end]} {shlex.quote(path)}{command[end:]}"
            return Canary({path: source.format(title=json.dumps(title))}, run, f"{path}::{title}")
        return None


# Root's canary test per runner: one test that always fails. `node --test` gets node:test by a
# dynamic import, which loads in a CommonJS and in an ES module file alike; mocha's globals are
# its BDD interface's `it` or its TDD interface's `test`, as `--ui` chose (looked up with
# `typeof`: Node before 12 has no `globalThis`, and eslint's canaries of 2016-2019 did not load);
# vitest's `test` is imported, as its configuration may leave out the globals (vitest transforms
# every test file, `.cjs` and `.tsx` too, so the import loads in each: run on vitest 1.6.0, and
# 0.9.4 in `.js`).
_CANARIES = {
    "jest": "test({title}, () => {{\n  throw new Error({title});\n}});\n",
    "vitest": (
        "import {{ test }} from 'vitest';\n\n"
        "test({title}, () => {{\n  throw new Error({title});\n}});\n"
    ),
    "mocha": (
        "(typeof it === 'function' ? it : test)({title}, () => {{\n"
        "  throw new Error({title});\n}});\n"
    ),
    "node --test": (
        "import('node:test').then(({{ test }}) =>\n"
        "  test({title}, () => {{\n    throw new Error({title});\n  }}),\n);\n"
    ),
}


def _positional_path(word: str) -> bool:
    """A test file, directory or glob given to the runner (never an option or its value)."""
    if word.startswith("-") or "=" in word.split("/", 1)[0]:
        return False
    return "*" in word or bool(re.search(r"\.[cm]?[jt]sx?$", word)) or word.rstrip("/") in _DIRS


_NOT_TESTS = re.compile(r"(^|/)(__)?(fixtures?|mocks?|helpers?|support|utils|data)[^/]*/")
# Options whose value may look like a path and is not a test file (`--config jest.config.js`).
_VALUE_OPTIONS = {
    "--config",
    "-c",
    "--require",
    "-r",
    "--file",
    "--import",
    "--loader",
    "--setupFiles",
    "--rootDir",
    "--roots",
    "--project",
    "--dir",
    "--root",
    "--extension",
    "--ignore",
}
_DIRS = {"test", "tests", "spec", "src", "__tests__", "./test", "./tests", "./spec", "./src"}


def shell_word(word: str) -> str:
    """`word` as the shell reads it back; an assignment keeps its name bare (`A='x y'`)."""
    if re.fullmatch(r"[\w@%+=:,./{}-]+", word):
        return word
    name, is_assignment, value = word.partition("=")
    if is_assignment and re.fullmatch(r"[A-Za-z_]\w*", name):
        return f"{name}={shlex.quote(value)}"
    return shlex.quote(word)
