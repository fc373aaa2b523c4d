"""Wiring for `prchain env setup` / `env recipes`: era images built and verified per stage base."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prchain.agent.tasks import ChainTask
from prchain.app.config import Config
from prchain.app.registry import present_on
from prchain.app.store import opened
from prchain.app.work import Lazy
from prchain.core.errors import NothingToDo, PrchainError
from prchain.environments.config import EnvironmentConfig
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.era import Era
from prchain.environments.protocol import Environment, StageSpec
from prchain.setup.ladder import (
    AgentRepair,
    EraItem,
    EraReport,
    Setup,
    plan_eras,
    setup_one,
    waves,
)
from prchain.verdicts.stage import StageSetup, hidden_cutoff, stage_setups, with_hidden
from prchain.verdicts.verify import StageJob

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from prchain.store.handle import Store


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
    """Builds an era image on this node, unless the engine or `scale.registry` has its recipe's."""
    fetch = present_on(config.scale.registry) if config.scale.registry else None

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
            fetch=fetch,
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
    store: Store | None = None,
) -> list[EraReport]:
    """What `prchain env setup` does: one work item per era on the configured backend (threads
    here, or one Ray task each placed by the sandbox slot), in rounds where recipe memory links
    eras (`ladder.waves`), so the store holds what a run era by era holds. Reports come back in
    the eras' order."""
    with opened(config.store.url, store) as store:
        return _setup(
            config,
            store,
            repo=repo,
            chain_ids=chain_ids,
            redo=redo,
            agent=agent,
            notify=notify,
            on_start=on_start,
            on_done=on_done,
            labels=labels,
        )


def _setup(
    config: Config,
    store: Store,
    *,
    repo: str | None,
    chain_ids: Iterable[int],
    redo: bool,
    agent: AgentRepair | None,
    notify: Callable[[str], None],
    on_start: Callable[[int], None] | None,
    on_done: Callable[[EraReport], None] | None,
    labels: dict[str, str] | None,
) -> list[EraReport]:
    from prchain.app.scale import backend_for, portable
    from prchain.scale.protocol import Done, Needs

    eras = plan_eras(store.engine, chain_ids, repo)
    if not eras:
        raise NothingToDo(
            "no chain stage with a base commit and a clone to set up",
            hint="`prchain chains build` makes chains; the repository needs a local clone",
        )
    if on_start is not None:
        on_start(len(eras))
    # once, here, not per round nor again by the work: a Ray worker decides on its node
    decided = agent is not None or config.scale.backend == "local"
    if agent is None and config.scale.backend == "local":
        from prchain.app.setup_agent import agent_from_config

        agent = agent_from_config(config, store.engine, notify)

    def report(done: Done[EraItem, EraReport]) -> EraReport:
        if done.result is not None:
            return replace(done.result, node=done.node)
        _repo_id, job, era, stages = done.item
        return EraReport(
            job.repo, era.key, era.date, stages, "error", reason=f"task lost: {done.lost}"
        )

    def reported(done: Done[EraItem, EraReport]) -> None:
        if on_done is not None:
            on_done(report(done))

    work = SetupWork(
        portable(config), redo, labels or {}, agent, agent_decided=decided, notify=notify
    )
    finished: list[Done[EraItem, EraReport]] = []
    with backend_for(config, workers=1, notify=notify, sandboxes=True) as backend:
        for wave in waves(eras):
            finished += backend.map(work, wave, needs=Needs(sandboxes=1), on_done=reported)
    order = {(item[0], item[2].key): i for i, item in enumerate(eras)}
    return [report(d) for d in sorted(finished, key=lambda d: order[(d.item[0], d.item[2].key)])]


@dataclass
class SetupWork(Lazy):
    """Set up one era (`prchain env setup`) on this node, then push its verified image to
    `scale.registry` for the nodes that did not build it. Its agent and progress lines are the
    driver's on this machine; a Ray worker makes its own agent from the config and prints to its
    log."""

    redo: bool = False
    labels: dict[str, str] = field(default_factory=dict)
    agent: AgentRepair | None = None
    # the driver made `agent` (None: off, and it said so once): the work does not ask again
    agent_decided: bool = False
    notify: Callable[[str], None] = print
    _setup: Setup | None = field(default=None, init=False, repr=False)

    def __call__(self, item: EraItem) -> EraReport:
        report = self.sized(setup_one(self.setup(), item), item)
        registry = self.config.scale.registry
        if registry and report.result in ("verified", "known") and not report.reason:
            try:
                self.publish(registry, item)
            except PrchainError as exc:  # the recipe is stored; a rerun pushes it (exit 1 says so)
                report = replace(report, reason=f"not pushed to {registry}: {exc}")
        return report

    def setup(self) -> Setup:
        engine = self.engine()
        with self._lock:
            if self._setup is None:
                agent = self.agent
                if agent is None and not self.agent_decided:
                    from prchain.app.setup_agent import agent_from_config

                    agent = agent_from_config(self.config, engine, self.notify)
                self._setup = Setup(
                    engine,
                    self.config.eras,
                    era_builder(self.config, self.notify),
                    image_opener(self.config.environment, self.labels, self.config.eras),
                    agent,
                    self.redo,
                    present_on(self.config.scale.registry),
                    image_size,
                )
            return self._setup

    def sized(self, report: EraReport, item: EraItem) -> EraReport:
        """The report with its era image's own and total size (the accounting of `tasks images
        save`: an image's own layers weigh its size minus its parent's)."""
        from prchain.environments.docker_client import DockerClient
        from prchain.environments.eras.memory import recipe
        from prchain.environments.transfer import own_and_total

        known = recipe(self.engine(), item[0], item[2].key)
        if known is None or not known["image"]:
            return report
        own, total = own_and_total(DockerClient(), known["image"])
        return replace(report, image=known["image"], image_bytes=total, own_bytes=own)

    def publish(self, registry: str, item: EraItem) -> None:
        from prchain.app.registry import publish
        from prchain.environments.eras.memory import recipe

        known = recipe(self.engine(), item[0], item[2].key)
        if known is not None and known["image"] and image_present(known["image"]):
            digest = publish(registry, known["image"])
            self.notify(f"pushed {known['image']} to {registry} ({digest[:19]})")

    def close(self) -> None:
        super().close()
        self._setup = None

    def __getstate__(self) -> dict[str, Any]:
        # the agent and the progress printer stay on the driver; a worker builds its own agent
        return {"config": self.config, "redo": self.redo, "labels": self.labels}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"], state["redo"], state["labels"])  # type: ignore[misc]


def recipes_from_config(
    config: Config, repo: str | None = None, *, store: Store | None = None
) -> list[dict[str, Any]]:
    from prchain.environments.eras.memory import recipes

    with opened(config.store.url, store) as store:
        return recipes(store.engine, repo)


def era_stages(
    config: EnvironmentConfig,
    engine: Engine | None,
    task: ChainTask,
    registry: str | None = None,
    eras: ErasConfig | None = None,
) -> tuple[EnvironmentConfig, list[StageSpec]]:
    """The sandbox config and stage specs of a chain with each stage's era (sandbox) image, test
    command and setup command; the sandbox moves to a new container where the image changes.
    Stages without an era recipe keep the repository's default image. An era image this node
    lacks is pulled from `registry`. A stage whose hidden side adds requirements gets the image
    of its clean room too (`hidden_image`), which no agent's sandbox runs."""
    wanted = [s.stage_id for s in task.stages if s.stage_id]
    read = stage_setups(engine, stage_ids=wanted) if engine is not None else []
    setups = {s.stage_id: s for s in read}
    of_stages = [
        setups[s.stage_id].usable_era if s.stage_id in setups else None for s in task.stages
    ]
    sandboxes: dict[str, str] = {}
    specs = []
    for stage, era in zip(task.stages, of_stages, strict=True):
        extra: dict[str, str] = {}
        if era is not None:
            if era.image not in sandboxes:
                if registry:
                    from prchain.app.registry import fetch

                    fetch(registry, era.image)
                sandboxes[era.image] = sandbox_image(config, task.repo, task.clone_path, era.image)
            extra = {
                "image": sandboxes[era.image],
                "test_command": era.test_command,
                "setup_command": era.setup_command,
            }
            found = with_hidden(setups[stage.stage_id])
            if found.hidden:
                extra["room_image"] = hidden_image(config, eras or ErasConfig(), found, era.image)
        specs.append(
            StageSpec(stage.idx, stage.base_sha, stage.gold_patch, entry=stage.entry, **extra)
        )
    return config, specs


def hidden_image(
    config: EnvironmentConfig, eras: ErasConfig, stage: StageSetup, era_image: str
) -> str:
    """`era_image` with what `stage`'s hidden side adds (prchain/environments/eras/hidden.py),
    built once per era image and requirements; the image of every room that runs its hidden
    tests, and of no agent's sandbox."""
    from prchain.environments.docker_client import DockerClient
    from prchain.environments.eras.hidden import ensure_hidden_layer

    return ensure_hidden_layer(
        DockerClient(),
        config,
        eras,
        stage.repo,
        era_image,
        list(stage.hidden),
        hidden_cutoff(stage),
    )


def sandbox_image(config: EnvironmentConfig, repo: str, clone: str, era_image: str) -> str:
    """The sandbox layer (agent user, root-only mirror) on top of an era image, built once."""
    from prchain.environments.docker_client import DockerClient
    from prchain.environments.images import ensure_repo_image

    made = ensure_repo_image(
        DockerClient(), config, repo, clone, lambda _m: None, base_image=era_image, commands=[]
    )
    return made.tag
