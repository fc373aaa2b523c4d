"""How a test run is read, the same for every ecosystem: a `TestReport` turns a test command into a
script that leaves a machine-readable report, and that report (or, failing it, the console output)
into per-test outcomes.

Test ids are `<where>::<name>`: pytest's node ids (`tests/test_x.py::Class::test_y[p]`), Go's
`<package>::TestName/sub`, cargo's `<target>::module::test`, surefire's `<class>::method`, a JS
runner's `<file>::<describe> > <test>`. An id without `::` that errored is a unit that never ran
(a test module that did not import, a package or crate that did not compile): an environment fact,
counted apart from failing tests (`prchain.verdicts.outcomes.count`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol, get_args, runtime_checkable

Outcome = Literal["passed", "xfailed", "xpassed", "skipped", "failed", "error"]
OUTCOMES: tuple[str, ...] = get_args(Outcome)
# SWE-bench counts an expected failure as passing; so does pytest a non-strict unexpected pass (the
# junit report even calls it passed). Anything else, skips included, is not a pass.
PASSING = frozenset({"passed", "xfailed", "xpassed"})
# Where a test command takes the stage's test targets (`TestReport.targets`, shell-quoted).
FILES_PLACEHOLDER = "{files}"
# When one test is reported twice (a failure, then an error in its teardown) the worse one wins.
_RANK = {name: rank for rank, name in enumerate(OUTCOMES)}


NO_SPACE = "No space left on device"  # ENOSPC as Python and the shell say it
# Said after a root error of a full disk: the limits are the user's to raise. A compiled workspace
# fills a tmpfs sandbox's /tmp with its build (ruff's 2023 era: cargo's target directory, in /tmp,
# filled 256m on its first crate; tokio's 2020 workspace, 4g over a stage's three runs).
DISK_HINT = (
    " (the sandbox's disk is full: raise environment.scratch_limit, the size of /tmp and the "
    "agent's home, or environment.disk_limit, of /work)"
)


def disk_hinted(root: str, output: str) -> str:
    """A run's root error, with DISK_HINT where the disk filled: the error says so, or the output
    does (a build that filled the disk halfway fails on something else: bytes' doctests with
    `error: doctest failed`, a link with `linking with cc failed`)."""
    if NO_SPACE in root or (root and NO_SPACE in output):
        return root + DISK_HINT
    return root


def is_passing(outcome: str | None) -> bool:
    return outcome in PASSING


def reported_passes(outcomes: dict[str, str], reported: dict[str, str]) -> dict[str, str]:
    """`outcomes` without the passes that only the console shows. In a clean room the console is
    shared with the tested code, which can print a runner's summary of every test passing and end
    the process before the runner writes its report (issue 77, round 5: pytest's `-rA` summary
    and `os._exit(0)`); only what came through root's pipe can pass a test, the console can still
    fail one. `sandbox.run_suite` and the Harbor verifier (`harbor_each.outcomes_of`) both apply
    it."""
    return {t: o for t, o in outcomes.items() if not is_passing(o) or is_passing(reported.get(t))}


def record(outcomes: dict[str, str], test: str, outcome: str) -> None:
    """Set `test`'s outcome unless a worse one is recorded already."""
    previous = outcomes.get(test)
    if previous is None or _RANK[outcome] > _RANK[previous]:
        outcomes[test] = outcome


class TestReport(Protocol):
    """The test-report reader of one ecosystem (or one runner of it)."""

    def script(self, command: str, report_path: str) -> str:
        """A shell script that runs `command` (the recipe's test command, as the agent runs it)
        so that a machine-readable report ends at `report_path` (left absent if none was
        written). It must not change what the command runs, only how the result is recorded."""
        ...

    def parse(self, report: str | None, output: str) -> dict[str, str]:
        """Test id → outcome (one of OUTCOMES) from the report, else from the console output."""
        ...

    def root_error(self, output: str) -> str:
        """The first error that explains a broken run (an import or compile error), or ""."""
        ...

    def narrowed(self, suite: str) -> str:
        """The recipe's whole-suite command with `{files}` where the stage's targets go, or
        `suite` unchanged when the runner cannot be narrowed."""
        ...

    def targets(self, test_paths: list[str]) -> list[str]:
        """What replaces `{files}` in the test command for a stage whose test patch leaves these
        test files in place: the files themselves, their packages, or [] when the runner cannot
        narrow (the whole suite then runs)."""
        ...

    def names(self, test_id: str) -> list[str]:
        """The names the test is defined under in its source, outermost first (a class, a
        module, a describe block, then the test itself), as a patch would spell them; [] when
        none can be told. `prchain.verdicts.touched` looks for them in the gold test patch."""
        ...


@runtime_checkable
class Silent(Protocol):
    """A reader that can tell why a run reported no test at all where the run itself stopped on
    nothing: a Maven module whose POM skips its tests (`Tests are skipped.`)."""

    def silence(self, output: str, test_paths: list[str], read: Callable[[str], str | None]) -> str:
        """Why the run reported no test, in a few words, or "": from its output, else from the
        build files of the test files' units (`read`: a path's text in the sandbox, or None)."""
        ...


@runtime_checkable
class Witnessed(Protocol):
    """A reader whose report is written by the tested process itself (Go's test binary prints the
    lines test2json converts), so the agent's code can forge it and end the process before a hidden
    test fails. Root adds a witness: a test of its own per package, named with a nonce and run
    after the others; a package whose witness did not pass has no passing test (`witnessed`)."""

    def witness_files(self, tests: dict[str, str], nonce: str, command: str) -> dict[str, str]:
        """Path → source of the witness of each package of `tests` (hidden test path → text),
        none when `command` would not run it last."""
        ...

    def witness_name(self, nonce: str) -> str:
        """The witness's test name (its id is `<package>::<name>`)."""
        ...


@dataclass(frozen=True)
class Canary:
    """Root's canary in one hidden-test run: a test file of its own (path → source) whose one
    test always fails, the run's command with that file added, and the test's id."""

    files: dict[str, str]
    command: str
    test_id: str


@runtime_checkable
class Canaried(Protocol):
    """A reader whose report is written on the tested process's side (Node's runners' reporters):
    the agent's code, called by a hidden test, can write a report of its own where the real one
    goes and end the run before the real one is written. Root adds a canary to the run, a test
    named with a nonce that always fails; a report that does not show it failing was not written
    by this run's runner, and none of its tests passes (`canaried`)."""

    def canary(
        self,
        command: str,
        test_files: list[str],
        nonce: str,
        texts: Mapping[str, str] | None = None,
    ) -> Canary | None:
        """The canary of a run of `command` on `test_files` (`texts`: the hidden test files'
        text, path → text, as root applied them); None when the command would not run it beside
        them (no test file or class of its own named on the command line)."""
        ...


@dataclass(frozen=True)
class CaseCheck:
    """How root runs one test of a harness other than libtest on its own (shell commands, their
    names quoted), and what its pass must show besides exit status 0: the harness's own line of
    this test's pass, its summary of one passed test, and no line naming a failure; and, when
    it has one, root's canary showing that nothing ran."""

    listed: str  # exits 0 when the executable holds the test (an absent one would pass vacuously)
    run: str  # runs the test alone
    ok: str  # a line containing this (empty: none asked)
    summary: str  # a line equal to this
    failed: str  # no line containing this (lines apart: any of them)
    # Root's canary: the same harness run on a test of a name drawn at random per run, which no
    # build holds; a harness that shows it passing, or does not show that nothing ran, forges
    # what it prints, and none of its tests passes. Empty: no canary.
    canary: str = ""  # runs the canary
    canary_shows: str = ""  # a line equal to this: the harness's summary of nothing run
    canary_never: str = ""  # no line containing this (lines apart: any of them)


@dataclass(frozen=True)
class OneTest:
    """One hidden test run on its own: `exe --exact name` (libtest), or `check`'s commands, from
    `directory` (the package's root, where cargo runs it), judged by its exit status."""

    test_id: str
    exe: str
    name: str
    directory: str
    check: CaseCheck | None = None
    # `name@version` of the test's package: cargo runs a test with its CARGO_PKG_* variables
    # (coreutils' util_version reads CARGO_PKG_VERSION at run time), so root does too
    package: str = ""


def each_arguments(runs: list[OneTest]) -> tuple[list[str], str]:
    """The root script's arguments for `runs` and which script takes them: RUN_CASES's nine
    fields a test ("cases") when every test has its harness's check, else RUN_EACH's four
    ("libtest": libtest's, witnessed by root's tracer). One rule for the clean room
    (`clean_room.run_each`) and Harbor's verifier (`verdicts/harbor_each.py`, on the stage
    image's python3, 3.9 and newer)."""
    checked = [(run, run.check) for run in runs if run.check is not None]
    if not runs or len(checked) < len(runs):
        return [
            p for run in runs for p in (run.directory, run.exe, run.name, run.package)
        ], "libtest"
    args = [
        part
        for run, c in checked
        for part in (
            run.directory, c.listed, c.run, c.ok, c.summary, c.failed,
            c.canary, c.canary_shows, c.canary_never,
        )
    ]  # fmt: skip
    return args, "cases"


@runtime_checkable
class RunsEach(Protocol):
    """A reader whose runner reports only on the console the tested code shares (libtest on stable
    has no machine-readable format): whatever the code prints can pose as a result. In a clean
    room the test executables are built first (no tested code runs then), and root runs each
    required test on its own and reads its exit status, which no printed line can change."""

    def build_script(self, command: str, report_path: str) -> str | None:
        """A script that builds `command`'s test executables without running them and writes the
        build's listing to `report_path`; None when `command` cannot be built so."""
        ...

    def each(self, report: str, required: list[str]) -> list[OneTest]:
        """The required tests found among the built executables the listing names."""
        ...

    def apart(self, report: str, required: list[str]) -> list[str]:
        """The required tests not run on their own but read from the sealed report run (tests
        the harness cannot run alone: rustdoc's, cmocka's cases)."""
        ...

    def parse(self, report: str | None, output: str) -> dict[str, str]: ...


@runtime_checkable
class JudgesSome(Protocol):
    """A reader some of whose tests no clean room can judge: Rust's doc tests are compiled from
    the doc comments of the source files the agent writes, so a hidden one is the agent's own
    text (and rustdoc judges it by its child's exit status alone). Verification keeps them out of
    FAIL_TO_PASS and PASS_TO_PASS; a clean room counts a required one as failed."""

    def judged(self, test_id: str) -> bool: ...


def judged_only(reader: object, outcomes: dict[str, str]) -> dict[str, str]:
    """`outcomes` without the tests `reader` cannot judge in a clean room (JudgesSome)."""
    if not isinstance(reader, JudgesSome):
        return outcomes
    return {test: outcome for test, outcome in outcomes.items() if reader.judged(test)}


def witnessed(outcomes: dict[str, str], required: list[str], name: str) -> dict[str, str]:
    """`outcomes` without the witnesses, each required test of a package whose witness `name` did
    not pass failed: that package's run ended before its last test, whatever it printed."""
    kept = {k: v for k, v in outcomes.items() if not k.endswith(f"::{name}")}
    for test in required:
        package = test.split("::", 1)[0]
        if not is_passing(outcomes.get(f"{package}::{name}")) and is_passing(kept.get(test)):
            kept[test] = "failed"
    return kept


def canaried(outcomes: dict[str, str], required: list[str], canary: str) -> dict[str, str]:
    """`outcomes` without the canary's; every required test failed when the canary is not there
    failing (or failing to load): the report is not the run's own."""
    file = canary.split("::", 1)[0]
    kept = {k: v for k, v in outcomes.items() if k.split("::", 1)[0] != file}
    shown = outcomes.get(canary, outcomes.get(file))
    if shown in ("failed", "error"):
        return kept
    for test in required:
        if is_passing(kept.get(test)):
            kept[test] = "failed"
    return kept
