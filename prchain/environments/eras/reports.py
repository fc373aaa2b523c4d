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


def is_passing(outcome: str | None) -> bool:
    return outcome in PASSING


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
class CaseCheck:
    """How root runs one test of a harness other than libtest on its own (shell commands, their
    names quoted), and what its pass must show besides exit status 0: the harness's own line of
    this test's pass, its summary of one passed test, and no line naming a failure."""

    listed: str  # exits 0 when the executable holds the test (an absent one would pass vacuously)
    run: str  # runs the test alone
    ok: str  # a line containing this (empty: none asked)
    summary: str  # a line equal to this
    failed: str  # no line containing this


@dataclass(frozen=True)
class OneTest:
    """One hidden test run on its own: `exe --exact name` (libtest), or `check`'s commands, from
    `directory` (the package's root, where cargo runs it), judged by its exit status."""

    test_id: str
    exe: str
    name: str
    directory: str
    check: CaseCheck | None = None


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


@dataclass(frozen=True)
class Seal:
    """Root's two tests of one clean-room run (`Sealed`), each named with a nonce of its own made
    per run: the witness (`witnesses` of them, one per unit the run reports apart, all must pass)
    and the canary, which always fails with a message bearing its nonce. `files` (path → source)
    are written before any tested code runs and sealed with the hidden tests; `command` is the
    test command that runs them with the hidden tests. Every test id holding one of the nonces is
    root's, never a stage's: it leaves the outcomes before they are judged or stored."""

    files: dict[str, str]
    command: str
    witness: str
    canary: str
    mark: str  # the nonce in the files' own names (a file-level error id carries it)
    witnesses: int = 1

    def owns(self, test_id: str) -> bool:
        return any(n in test_id for n in (self.witness, self.canary, self.mark))


def canary_message(nonce: str) -> str:
    """The canary's failure message: the report must show it, nonce included."""
    return f"prchain canary {nonce} fails"


@runtime_checkable
class Sealed(Protocol):
    """A reader whose report is written inside the tested process (jest's and mocha's JSON in
    the test process, surefire's TEST-*.xml in files the forked JVM can write): the agent's code
    can write an all-passed report and end the process. Root adds a witness, run with the hidden
    tests (last, where the runner writes its report as it goes), that must be reported passed,
    and a canary that must be reported failed with its own nonce in the message; otherwise no
    test of the run passes (`sealed`)."""

    def seal(
        self, tests: dict[str, str], nonces: tuple[str, str, str], command: str
    ) -> Seal | None:
        """Root's tests for a run of `command` over the hidden tests `tests` (path → text), with
        nonces (witness, canary, file mark); None when `command` would not run them as asked."""
        ...

    def canary_failed(self, report: str | None, nonce: str) -> bool:
        """The report shows the canary `nonce` failed with `canary_message(nonce)`."""
        ...


def sealed(outcomes: dict[str, str], seal: Seal, canary_failed: bool) -> dict[str, str]:
    """`outcomes` without root's tests; every passing test failed unless each witness passed and
    the canary failed with its message: a report without them is not the runner's whole run."""
    kept = {k: v for k, v in outcomes.items() if not seal.owns(k)}
    witnessed = sum(1 for k, v in outcomes.items() if seal.witness in k and is_passing(v))
    canary = canary_failed and any(seal.canary in k and v == "failed" for k, v in outcomes.items())
    if witnessed >= seal.witnesses and canary:
        return kept
    return {k: "failed" if is_passing(v) else v for k, v in kept.items()}
