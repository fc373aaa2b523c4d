"""T(p̂): do a stage's verified tests pass on the sandbox's current state?

`stage_tests` reads what `prchain tests verify` stored for a chain stage; `run_tests` checks them
on whatever the sandbox holds now (the agent's patch, a curated trajectory's patch, ...).

The run happens on a snapshot: the sandbox is snapshotted, the files the gold test patch touches
are reset to the stage's starting version and the patch applied, the tests run, and the snapshot is
restored. The agent's worktree comes back byte for byte (its uncommitted work included); only its
git index is reset, which no diff of the environment depends on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Engine, select

from environments.protocol import Environment
from prchain.verdicts.pytest_report import is_passing
from prchain.verdicts.sandbox import apply_patch, run_suite
from sql.db import session_scope
from sql.models import ChainStage, StageVerification

MISSING = "missing"  # a required test that the run did not report at all
DEFAULT_REPORT_PATH = "/tmp/prchain-junit.xml"


@dataclass
class StageTests:
    """A stage's hidden tests, as verified: what T(p̂) checks."""

    fail_to_pass: list[str]
    pass_to_pass: list[str]
    test_command: str  # the command as run, test files filled in
    test_files: list[str]
    test_patch: str = ""  # the gold test patch, applied before the run
    report_path: str = DEFAULT_REPORT_PATH
    tail_chars: int = 4000

    @property
    def required(self) -> list[str]:
        return [*self.fail_to_pass, *self.pass_to_pass]


@dataclass
class TestVerdict:
    __test__ = False  # not a pytest test class despite its name

    passed: bool  # T(p̂) = 1
    outcomes: dict[str, str]  # every reported test, and each required one missing from the report
    output_tail: str
    failing: list[str] = field(default_factory=list)  # required tests that did not pass
    error: str | None = None  # the run could not happen (the test patch did not apply)


def stage_tests(engine: Engine, stage_id: int) -> StageTests | None:
    """The verified tests of chain stage `stage_id` (ChainStage.id); None unless it is usable."""
    with session_scope(engine) as session:
        row = session.execute(
            select(StageVerification, ChainStage.gold_test_patch)
            .join(ChainStage, ChainStage.id == StageVerification.chain_stage_id)
            .where(StageVerification.chain_stage_id == stage_id)
        ).first()
        if row is None or row[0].status != "usable":
            return None
        found, test_patch = row
        return StageTests(
            list(found.fail_to_pass),
            list(found.pass_to_pass),
            found.test_command,
            list(found.test_files),
            test_patch,
        )


def run_tests(env: Environment, tests: StageTests, timeout: float) -> TestVerdict:
    """Run the stage's tests on the sandbox's current state; the state is restored afterwards.

    The agent's processes are ended first: one left running could wait for the hidden test patch
    to appear and rewrite the tree under the tests."""
    env.end_agent_processes()
    snapshot = env.snapshot()
    try:
        error = apply_patch(env, tests.test_patch, reset=True)
        if error is not None:
            return TestVerdict(
                False, {}, error, failing=tests.required, error="the test patch does not apply"
            )
        run = run_suite(
            env,
            tests.test_command,
            timeout=timeout,
            report_path=tests.report_path,
            tail_chars=tests.tail_chars,
        )
    finally:
        env.restore(snapshot)
    return verdict(tests, run.outcomes, run.output_tail)


def verdict(tests: StageTests, outcomes: dict[str, str], output_tail: str) -> TestVerdict:
    """T(p̂) from a run's outcomes: every required test reported as passing."""
    seen = dict(outcomes)
    for test in tests.required:
        seen.setdefault(test, MISSING)
    failing = [t for t in tests.required if not is_passing(seen[t])]
    return TestVerdict(bool(tests.required) and not failing, seen, output_tail, failing)
