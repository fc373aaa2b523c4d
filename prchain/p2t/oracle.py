"""T(p̂): whether a curated stage's patch passes the stage's tests. The forward phase only needs
`passes(env)`; the app chooses the implementation (per-test verdicts once a stage is verified).

Both run in the verdicts' clean room (docs/sandbox.md): a fresh container with the stage base, the
agent's change minus its test files and test configuration, and the hidden test patch, so nothing
the agent planted in its sandbox can decide the verdict or see the hidden tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from prchain.environments.protocol import Environment
from prchain.verdicts.oracle import run_command_clean


class TestOracle(Protocol):
    def passes(self, env: Environment) -> bool: ...


@dataclass
class GoldTestsOracle:
    """Run the test command on the agent's change plus the hidden gold test patch, in a clean room.

    A coarse T(p̂): the whole command must exit 0 (per-test FAIL_TO_PASS / PASS_TO_PASS verdicts
    replace it where a stage has been verified).
    """

    __test__ = False
    test_patch: str
    command: str
    timeout: float
    last_output: str = ""  # the tail of the last run, for the stage's recorded reason

    def passes(self, env: Environment) -> bool:
        run = run_command_clean(env, self.test_patch, self.command, self.timeout)
        self.last_output = (f"{run.error}: " if run.error else "") + run.output[-1500:]
        return run.passed
