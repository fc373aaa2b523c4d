"""Which tests decide whether a curated stage is admitted: the stage's verified tests when it has
them, else its hidden gold tests run by the repo's configured test command."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from prchain.agent.tasks import ChainTask, StageTask
from prchain.app.config import Config
from prchain.app.p2t.parts import full_gold
from prchain.core.errors import NothingToDo
from prchain.environments.protocol import Environment
from prchain.p2t.oracle import GoldTestsOracle, TestOracle
from prchain.p2t.patches import split_patch, touched_files


@dataclass
class VerifiedOracle:
    """T(p̂) from the stage's verified FAIL_TO_PASS / PASS_TO_PASS (`prchain tests verify`)."""

    check: Callable[[Environment, int], Any]
    stage_id: int
    last_output: str = ""

    def passes(self, env: Environment) -> bool:
        verdict = self.check(env, self.stage_id)
        self.last_output = verdict.output_tail if verdict is not None else "no verified tests"
        return verdict is not None and bool(verdict.passed)


def default_oracle(
    config: Config, task: ChainTask, stage: StageTask, engine: Engine | None = None
) -> TestOracle:
    """The stage's verified tests when it has them; else its hidden gold tests run by the repo's
    test command (verdicts.repos or environment.test_command), whole-command pass/fail."""
    from prchain.app.verdicts import tests_oracle
    from prchain.verdicts.oracle import stage_tests

    if engine is not None and stage.stage_id and stage_tests(engine, stage.stage_id) is not None:
        return VerifiedOracle(tests_oracle(config, engine), stage.stage_id)
    gold = full_gold(engine, stage) if engine is not None else stage.gold_patch
    test_patch = split_patch(gold)[1]
    command = _test_command(config, task.repo, test_patch)
    return GoldTestsOracle(test_patch, command, config.environment.test_timeout)


def _test_command(config: Config, repo: str, test_patch: str) -> str:
    """The repo's configured test command, `{files}` filled with the files the test patch touches."""
    repo_tests = config.verdicts.repos.get(repo)
    command = repo_tests.test if repo_tests else config.environment.test_command.get(repo)
    if command and "{files}" in command:
        command = command.replace("{files}", " ".join(touched_files(test_patch)))
    if not command:
        raise NothingToDo(
            f"no test command is configured for {repo}: a curated stage is admitted "
            "only when its tests pass",
            hint=f"run `prchain tests verify`, or set verdicts.repos.{repo}.test "
            "(see docs/verdicts.md)",
        )
    return command
