"""What `prchain tasks export --runnable`, `tasks images save|load` and `tasks eval` run.

Imported inside the commands only: the image work loads the docker SDK.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prchain.app.config import Config
from prchain.app.envsetup import hidden_image
from prchain.app.store import opened
from prchain.core.errors import NothingToDo, PrchainError
from prchain.environments.config import EnvironmentConfig
from prchain.environments.protocol import Environment, StageSpec
from prchain.environments.transfer import ImageSizes
from prchain.export.registry import convert
from prchain.verdicts.golden import EvalSettings, StageResult, by_chain, evaluate, planned
from prchain.verdicts.runnable import (
    ImageResolver,
    RunnableSummary,
    StageImage,
    export_runnable,
    flat_path,
)
from prchain.verdicts.taskfile import (
    ENVIRONMENT_KEYS,
    ConvertSummary,
    Patches,
    images_of,
    read_predictions,
    read_tasks,
    stated_images,
)

if TYPE_CHECKING:
    from prchain.store.handle import Store

__all__ = ["by_chain", "flat_path"]  # for the CLI, which reaches the library only through here


def stage_images(config: EnvironmentConfig) -> ImageResolver:
    """The stage image of each era image: its sandbox layer, built once from the repository's
    clone unless the engine has it; or why there is none."""
    from prchain.environments.docker_client import DockerClient

    client = DockerClient()
    made: dict[tuple[str, str], StageImage | str] = {}

    def resolve(repo: str, clone: str, era_image: str) -> StageImage | str:
        if (repo, era_image) not in made:
            made[repo, era_image] = _stage_image(client, config, repo, clone, era_image)
        return made[repo, era_image]

    return resolve


def _stage_image(
    client: Any, config: EnvironmentConfig, repo: str, clone: str, era_image: str
) -> StageImage | str:
    from prchain.app.envsetup import sandbox_image

    era = client.image_info(era_image)
    if era is None:
        return f"era image {era_image} is not in the Docker engine"
    if not clone:
        return f"{repo} has no local clone to build the stage image from"
    try:
        tag = sandbox_image(config, repo, clone, era_image)
    except PrchainError as exc:
        return f"the stage image could not be built: {exc}"
    return StageImage(tag, client.image_info(tag).id, era_image, era.id)


def export_runnable_from_config(
    config: Config,
    out: str,
    *,
    strategy: str | None = None,
    unverified: bool = False,
    store: Store | None = None,
) -> RunnableSummary:
    """`prchain tasks export OUT --runnable`."""
    with opened(config.store.url, store, readonly=True) as store:
        engine = store.engine
        return export_runnable(
            engine,
            out,
            stage_images(config.environment),
            strategy=strategy,
            unverified=unverified,
            hidden=lambda stage: hidden_image(
                config.environment, config.eras, stage, stage.era.image if stage.era else ""
            ),
        )


# ---- images that travel -------------------------------------------------------------------------


def task_image_sizes(tasks: str, *, every: bool = False) -> ImageSizes:
    """The images a task file's stages need and what they weigh, separately and deduplicated."""
    from prchain.environments.docker_client import DockerClient
    from prchain.environments.transfer import sizes

    names = images_of(read_tasks(tasks), every)
    if not names:
        raise NothingToDo(
            f"{tasks} names no runnable stage's image",
            hint="`prchain tasks export OUT --runnable` after `env setup` and `tests verify`",
        )
    found = sizes(DockerClient(), names)
    for name, digest in names.items():
        if name in found.images and digest and found.images[name] != digest:
            found.missing.append(f"{name} (the engine's is {found.images[name][:19]})")
    return found


def save_task_images(found: ImageSizes, out: str) -> int:
    """Write the images `task_image_sizes` found as one archive; its size in bytes."""
    from prchain.environments.docker_client import DockerClient
    from prchain.environments.transfer import save

    if found.missing:
        raise NothingToDo(
            f"the engine lacks {len(found.missing)} of the images: {', '.join(found.missing[:3])}",
            hint="build them where the tasks were mined, or load them first",
        )
    return save(DockerClient(), list(found.images), out)


@dataclass
class Loaded:
    names: list[str]
    missing: list[str] = field(default_factory=list)  # the task file's images still absent
    kept: list[str] = field(default_factory=list)  # already in the engine, as the file states


def load_task_images(archive: str, tasks: str) -> Loaded:
    """Load from an archive only the images the task file names, each checked against its stated
    digest (prchain.environments.archive); then which runnable stages' images are still absent."""
    from prchain.environments.docker_client import DockerClient
    from prchain.environments.transfer import load

    client = DockerClient()
    chains = read_tasks(tasks)
    done = load(client, archive, stated_images(tasks, chains))
    loaded = Loaded(done.loaded, kept=done.kept)
    for name, digest in images_of(chains).items():
        info = client.image_info(name)
        if info is None or info.id != digest:
            loaded.missing.append(name)
    return loaded


def push_task_images(tasks: str, registry: str, *, every: bool = False) -> dict[str, str]:
    """Push the images a task file needs to `registry`; name → manifest digest."""
    from prchain.environments.docker_client import DockerClient
    from prchain.environments.transfer import push

    found = task_image_sizes(tasks, every=every)
    if found.missing:
        raise NothingToDo(f"the engine lacks {', '.join(found.missing[:3])}")
    return push(DockerClient(), list(found.images), registry)


def pull_task_images(tasks: str, registry: str) -> Loaded:
    """Pull the images a task file needs from `registry` under their own names; those still
    missing, or not the image the file names."""
    from prchain.environments.docker_client import DockerClient
    from prchain.environments.transfer import pull

    client = DockerClient()
    names = images_of(read_tasks(tasks))
    loaded = Loaded(list(names), pull(client, list(names), registry))
    for name, digest in names.items():
        info = client.image_info(name)
        if name not in loaded.missing and (info is None or (digest and info.id != digest)):
            loaded.missing.append(name)
    return loaded


# ---- golden evaluation -------------------------------------------------------------------------


def _opener(
    config: EnvironmentConfig,
) -> Callable[
    [str, list[StageSpec], dict[str, str]], contextlib.AbstractContextManager[Environment]
]:
    def open_env(
        repo: str, stages: list[StageSpec], labels: dict[str, str]
    ) -> contextlib.AbstractContextManager[Environment]:
        from prchain.environments.factory import open_environment  # the docker SDK loads only here

        # No clone: every stage's image already holds the repository's mirror.
        env: Any = open_environment(config, repo=repo, clone_path="", stages=stages, labels=labels)
        return env  # type: ignore[no-any-return]

    return open_env


def results_path(tasks: str, predictions: str | None) -> Path:
    """Where results go by default: beside the task file, one file per predictions file."""
    source = Path(tasks)
    suffix = f".{Path(predictions).stem}" if predictions else ".gold"
    return source.with_name(f"{source.stem}{suffix}.eval.jsonl")


def eval_from_config(
    config: Config,
    tasks: str,
    *,
    predictions: str | None = None,
    results: str | None = None,
    chain_ids: Iterable[int] = (),
    on_start: Callable[[int], None] | None = None,
    on_stage: Callable[[StageResult], None] | None = None,
) -> list[StageResult]:
    """`prchain tasks eval TASKS [--predictions FILE]`."""
    from prchain.environments.docker_client import DockerClient

    wanted = set(chain_ids)
    chains = [
        c for c in read_tasks(tasks, ENVIRONMENT_KEYS) if not wanted or c["chain_id"] in wanted
    ]
    patches = read_predictions(predictions) if predictions else Patches()
    total = planned(chains, patches)
    if not total:
        raise NothingToDo(
            f"no runnable stage of {tasks} has a patch to run"
            + (f" in {predictions} (its instance_ids name none)" if predictions else ""),
            hint="`prchain tasks export OUT --runnable` says which stages run and why the others do not",
        )
    if on_start is not None:
        on_start(total)
    client = DockerClient()

    def digest(name: str) -> str | None:
        info = client.image_info(name)
        return info.id if info is not None else None

    settings = EvalSettings(
        config.verdicts.timeout, config.verdicts.report_path, config.verdicts.output_tail_chars
    )
    target = results or results_path(tasks, predictions)
    return evaluate(
        chains, patches, _opener(config.environment), digest, settings, target, on_stage
    )


# ---- other harnesses' task formats -------------------------------------------------------------


def convert_tasks(config: Config, tasks: str, out: str, to: str) -> ConvertSummary:
    """`prchain tasks convert TASKS OUT --to FORMAT`: the runnable stages of a task file in
    another harness's form (the `harness` formats of prchain/export/registry.py)."""
    return convert(
        to, read_tasks(tasks, ENVIRONMENT_KEYS), out, timeout=config.verdicts.timeout,
        cap=config.environment.max_report_bytes,
    )  # fmt: skip
