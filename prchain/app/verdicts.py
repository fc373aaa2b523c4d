"""Wiring for test verdicts: the sandbox config with each repo's test dependencies, `prchain tests
verify`, and the T(p̂) check a rollout runs after the judge."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from prchain.app.config import Config
from prchain.app.envsetup import hidden_image, on_image
from prchain.app.store import opened
from prchain.app.work import Lazy
from prchain.core.errors import NothingToDo
from prchain.environments.config import EnvironmentConfig
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.memory import recipes
from prchain.environments.protocol import Environment, StageSpec
from prchain.verdicts.oracle import TestVerdict, run_tests, stage_tests
from prchain.verdicts.stage import stage_setup
from prchain.verdicts.verify import StageJob, StageReport, find_stages

if TYPE_CHECKING:
    from prchain.store.handle import Store


def environment_config(config: Config) -> EnvironmentConfig:
    """The sandbox config with each repository's test install commands baked into its image."""
    extra = {repo: tests.install for repo, tests in config.verdicts.repos.items() if tests.install}
    if not extra:
        return config.environment
    merged = dict(config.environment.install_commands)
    for repo, commands in extra.items():
        merged[repo] = [*merged.get(repo, []), *commands]
    return config.environment.model_copy(update={"install_commands": merged})


def verify_opener(
    config: EnvironmentConfig,
    engine: Engine | None = None,
    registry: str | None = None,
    eras: ErasConfig | None = None,
) -> Callable[[StageJob], contextlib.AbstractContextManager[Environment]]:
    """A fresh sandbox per stage whose only stage starts at B_t (no earlier gold patch reverted),
    on the stage's era image when `env setup` made one (pulled from `registry` when this node's
    engine lacks it, never built here), with the layer of what its hidden side adds when it adds
    something (`hidden_image`)."""

    def open_env(job: StageJob) -> contextlib.AbstractContextManager[Environment]:
        from prchain.app.registry import fetch
        from prchain.environments.factory import open_environment  # the docker SDK loads only here

        now = stage_setup(engine, job.stage_id) if engine is not None else None
        era = now.usable_era if now is not None else None
        if era is not None and registry:
            fetch(registry, era.image)
        image = era.image if era is not None else ""
        if era is not None and job.hidden:
            image = hidden_image(config, eras or ErasConfig(), job, era.image)
        env: Any = open_environment(
            on_image(config, image) if era is not None else config,
            repo=job.repo,
            clone_path=job.clone_path,
            stages=[StageSpec(1, job.base_sha, "")],
            labels={"prchain.verify": str(job.stage_id)},
        )
        return env  # type: ignore[no-any-return]

    return open_env


def verify_from_config(
    config: Config,
    *,
    chain_ids: Iterable[int] = (),
    redo: bool = False,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[StageReport], None] | None = None,
    store: Store | None = None,
) -> list[StageReport]:
    """What `prchain tests verify` does."""

    with opened(config.store.url, store) as store:
        engine = store.engine
        chain_ids = list(chain_ids)
        if not find_stages(engine, chain_ids):
            raise NothingToDo(
                "no chain stage to verify", hint="`prchain chains build` makes chains"
            )
        if not config.verdicts.repos and not recipes(engine):
            raise NothingToDo(
                "no repository has a test command",
                hint="`prchain env setup` makes era recipes (or set verdicts.repos.<owner/name>.test); "
                "see docs/environments.md",
            )
        return verify_on_backend(config, store, chain_ids, redo, on_start, on_done)


def verify_on_backend(
    config: Config,
    store: Store,
    chain_ids: list[int],
    redo: bool,
    on_start: Callable[[int], None] | None,
    on_done: Callable[[StageReport], None] | None,
) -> list[StageReport]:
    """One work item per chain stage on the configured backend (threads, or one Ray task each),
    `verdicts.workers` sandboxes at once; each stage is verified exactly as `verify_one` does.
    Reports come back in stage order."""
    from prchain.app.scale import backend_for, portable
    from prchain.scale.protocol import Done, Needs

    jobs = find_stages(store.engine, chain_ids)
    if on_start is not None:
        on_start(len(jobs))

    def report(done: Done[StageJob, StageReport]) -> StageReport:
        if done.result is None:
            return StageReport(done.item, "error", f"task lost: {done.lost}")
        return done.result

    def reported(done: Done[StageJob, StageReport]) -> None:
        if on_done is not None:
            on_done(report(done))

    with backend_for(config, workers=config.verdicts.workers, sandboxes=True) as backend:
        finished = backend.map(
            VerifyWork(portable(config), redo=redo),
            jobs,
            needs=Needs(sandboxes=1),
            on_done=reported,
        )
    order = {job.stage_id: i for i, job in enumerate(jobs)}
    return sorted((report(d) for d in finished), key=lambda r: order[r.job.stage_id])


TestsOracle = Callable[[Environment, int], TestVerdict | None]


def tests_oracle(config: Config, engine: Engine) -> TestsOracle:
    """T(p̂) for a rollout: (sandbox, chain stage id) → the verdict, None without verified tests."""

    def check(env: Environment, stage_id: int) -> TestVerdict | None:
        tests = stage_tests(engine, stage_id)
        if tests is None:
            return None
        tests.report_path = config.verdicts.report_path
        tests.tail_chars = config.verdicts.output_tail_chars
        return run_tests(env, tests, config.verdicts.timeout)

    return check


def show_stage(
    config: Config, chain_id: int, idx: int, *, store: Store | None = None
) -> dict[str, Any]:
    """What `prchain tests show CHAIN:IDX` prints: the stage's recipe, commands, counts per run,
    per-test outcomes, the root error and the reason."""
    from prchain.store.environments import stage_with_verification

    with opened(config.store.url, store) as store:
        engine = store.engine
        with store.session() as session:
            row = stage_with_verification(session, chain_id, idx)
            if row is None:
                raise NothingToDo(
                    f"chain {chain_id} has no stage {idx}", hint="`prchain chains ls` lists chains"
                )
            stage, number, found = row
            shown: dict[str, Any] = {
                "chain": chain_id,
                "idx": idx,
                "pr": number,
                "base": stage.base_sha,
            }
            if found is not None:
                shown |= {
                    "status": found.status,
                    "reason": found.reason or "",
                    "test_command": found.test_command,
                    "fail_to_pass": list(found.fail_to_pass),
                    "pass_to_pass": list(found.pass_to_pass),
                    "flaky": list(found.flaky),
                    "runs": dict(found.runs),
                    "output_tail": found.output_tail,
                }
        now = stage_setup(engine, stage.id)
        era = now.era if now is not None else None
        if era is not None:
            shown["era"] = {
                "image": era.image,
                "status": era.status,
                "test_command": era.test_command,
                "setup_command": era.setup_command,
                "root_error": era.root_error,
            }
        return shown


@dataclass
class VerifyWork(Lazy):
    """Verify one chain stage's tests (`prchain tests verify`) in its own sandbox."""

    redo: bool = False

    def __call__(self, job: StageJob) -> StageReport:
        from prchain.store.leases import holding
        from prchain.verdicts.verify import StageReport, verify_one

        engine = self.engine()
        opener = verify_opener(  # era images per stage
            environment_config(self.config), engine, self.config.scale.registry, self.config.eras
        )
        # under the stage's "verify" lease, as `verify_stages` does: two runs never run one stage
        with holding(engine, "verify", str(job.stage_id)) as lease:
            if lease is None:
                return StageReport(job, "busy", "another `tests verify` is running it")
            return verify_one(engine, job, self.config.verdicts, opener, self.redo)

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "redo": self.redo}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"], state["redo"])  # type: ignore[misc]
