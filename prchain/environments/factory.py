"""`open_environment`: the one way the agent and curation get a sandbox, by backend name."""

from __future__ import annotations

from collections.abc import Callable

from prchain.core.registry import Registry
from prchain.environments.config import EnvironmentConfig
from prchain.environments.protocol import Environment, StageSpec

Opener = Callable[..., Environment]
BACKENDS: Registry[Callable[[], Opener]] = Registry("environment backend")


@BACKENDS.register("docker")
def _docker() -> Opener:
    # Imported on demand so that loading the config never needs the docker SDK.
    from prchain.environments.docker_env import DockerEnvironment

    return DockerEnvironment


def open_environment(
    config: EnvironmentConfig,
    *,
    repo: str,
    clone_path: str,
    stages: list[StageSpec],
    labels: dict[str, str] | None = None,
) -> Environment:
    """A not-yet-started sandbox for one chain; `with` starts it and always removes it.

    Example: `with open_environment(cfg, repo="acme/calc", clone_path=p, stages=s) as env: env.enter_stage(1)`.
    """
    return BACKENDS.get(config.backend)()(
        config, repo=repo, clone_path=clone_path, stages=stages, labels=labels
    )
