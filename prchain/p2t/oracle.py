"""T(p̂): whether a curated stage's patch passes the stage's tests. The forward phase only needs
`passes(env)`; the app chooses the implementation (per-test verdicts once a stage is verified)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from environments.protocol import Environment

TEST_PATCH_FILE = "/tmp/p2t-tests.patch"


class TestOracle(Protocol):
    def passes(self, env: Environment) -> bool: ...


@dataclass
class GoldTestsOracle:
    """Apply the hidden gold test patch, run the test command, put the sandbox back.

    A coarse T(p̂): the whole command must exit 0 (per-test FAIL_TO_PASS / PASS_TO_PASS verdicts
    replace it where a stage has been verified).
    """

    __test__ = False
    test_patch: str
    command: str
    timeout: float
    last_output: str = ""  # the tail of the last run, for the stage's recorded reason

    def passes(self, env: Environment) -> bool:
        snapshot = env.snapshot()
        try:
            if self.test_patch.strip():
                env.write_file(TEST_PATCH_FILE, self.test_patch.rstrip("\n") + "\n")  # git needs it
                applied = env.execute(f"git apply --whitespace=nowarn {TEST_PATCH_FILE}")
                if applied.exit_code != 0:
                    self.last_output = f"the test patch does not apply: {applied.output[-500:]}"
                    return False
            result = env.execute(self.command, timeout=self.timeout)
            self.last_output = result.output[-1500:]
            return result.exit_code == 0 and not result.timed_out
        finally:
            env.restore(snapshot)
