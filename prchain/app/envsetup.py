"""Wiring for `prchain env setup` / `env recipes`: era images built and verified per stage base."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prchain.agent.tasks import ChainTask
from prchain.app.config import Config
from prchain.core.errors import NothingToDo
from prchain.environments.config import EnvironmentConfig
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.era import Era
from prchain.environments.eras.memory import stage_env
from prchain.environments.protocol import Environment, StageSpec
from prchain.verdicts.ladder import AgentRepair, EraReport, Setup, setup_eras
from prchain.verdicts.verify import StageJob

if TYPE_CHECKING:
    from sqlalchemy import Engine


def on_image(config: EnvironmentConfig, image: str) -> EnvironmentConfig:
    """The sandbox config whose repo image is built on the era image (no install commands: the
    era image holds the dependencies)."""
    return config.model_copy(update={"base_image": image, "install_commands": {}})


def image_opener(
    config: EnvironmentConfig, labels: dict[str, str] | None = None, eras: ErasConfig | None = None
) -> Callable[[str, str, str, str], contextlib.AbstractContextManager[Environment]]:
    """Sandboxes on an era image; with `eras`, under the repository's verification memory limit."""

    def open_on(
        repo: str, clone: str, sha: str, image: str
    ) -> contextlib.AbstractContextManager[Environment]:
        from prchain.environments.factory import open_environment  # the docker SDK loads only here

        memory = eras.verify_limit(repo).memory if eras is not None else ""
        limited = config.model_copy(update={"memory": memory}) if memory else config
        env: Any = open_environment(
            on_image(limited, image),
            repo=repo,
            clone_path=clone,
            stages=[StageSpec(1, sha, "")],
            labels={"prchain.era_check": sha[:12], **(labels or {})},
        )
        return env  # type: ignore[no-any-return]

    return open_on


def image_present(tag: str) -> bool:
    from prchain.environments.docker_client import DockerClient

    return DockerClient().image_id(tag) is not None


def image_size(tag: str) -> int:
    from prchain.environments.docker_client import DockerClient

    return DockerClient().image_size(tag)


def era_builder(config: Config, notify: Callable[[str], None]) -> Any:
    def build(job: StageJob, era: Era, plan: Plan) -> tuple[str, float, str, str]:
        from prchain.environments.docker_client import DockerClient
        from prchain.environments.eras.build import build_failure, ensure_era_image

        made = ensure_era_image(
            DockerClient(),
            config.environment,
            config.eras,
            repo=job.repo,
            clone=Path(job.clone_path),
            sha=job.base_sha,
            plan=plan,
            era_key=era.key,
            notify=notify,
        )
        failure = build_failure(made.log, made.exit_code) if not made.image_id else ""
        return (made.tag if made.image_id else ""), made.seconds, made.log, failure

    return build


def setup_from_config(
    config: Config,
    *,
    repo: str | None = None,
    chain_ids: Iterable[int] = (),
    redo: bool = False,
    agent: AgentRepair | None = None,
    notify: Callable[[str], None] = print,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[EraReport], None] | None = None,
    labels: dict[str, str] | None = None,
) -> list[EraReport]:
    """What `prchain env setup` does."""
    from prchain.store.db import make_engine

    engine = make_engine(config.store.url)
    if agent is None:
        from prchain.app.setup_agent import agent_from_config

        agent = agent_from_config(config, engine, notify)
    setup = Setup(
        engine,
        config.eras,
        era_builder(config, notify),
        image_opener(config.environment, labels, config.eras),
        agent,
        redo,
        image_present,
        image_size,
    )
    reports = setup_eras(setup, chain_ids=chain_ids, repo=repo, on_start=on_start, on_done=on_done)
    if not reports:
        raise NothingToDo(
            "no chain stage with a base commit and a clone to set up",
            hint="`prchain chains build` makes chains; the repository needs a local clone",
        )
    return reports


def recipes_from_config(config: Config, repo: str | None = None) -> list[dict[str, Any]]:
    from prchain.environments.eras.memory import recipes
    from prchain.store.db import make_engine

    return recipes(make_engine(config.store.url), repo)


def era_stages(
    config: EnvironmentConfig, engine: Engine | None, task: ChainTask
) -> tuple[EnvironmentConfig, list[StageSpec]]:
    """The sandbox config and stage specs of a chain with each stage's era (sandbox) image, test
    command and setup command; the sandbox moves to a new container where the image changes.
    Stages without an era recipe keep the repository's default image."""
    eras = [
        stage_env(engine, s.stage_id) if engine is not None and s.stage_id else None
        for s in task.stages
    ]
    sandboxes: dict[str, str] = {}
    specs = []
    for stage, era in zip(task.stages, eras, strict=True):
        extra: dict[str, str] = {}
        if era is not None:
            if era.image not in sandboxes:
                sandboxes[era.image] = sandbox_image(config, task.repo, task.clone_path, era.image)
            extra = {
                "image": sandboxes[era.image],
                "test_command": era.test_command,
                "setup_command": era.setup_command,
            }
        specs.append(
            StageSpec(stage.idx, stage.base_sha, stage.gold_patch, entry=stage.entry, **extra)
        )
    return config, specs


def sandbox_image(config: EnvironmentConfig, repo: str, clone: str, era_image: str) -> str:
    """The sandbox layer (agent user, root-only mirror) on top of an era image, built once."""
    from prchain.environments.docker_client import DockerClient
    from prchain.environments.images import ensure_repo_image

    made = ensure_repo_image(
        DockerClient(), config, repo, clone, lambda _m: None, base_image=era_image, commands=[]
    )
    return made.tag
