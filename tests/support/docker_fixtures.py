"""pytest fixtures for real containers (loaded by tests/conftest.py as a plugin).

`docker_client` skips a test when no engine answers (and fails in CI, where one must); the base
image is built once if missing; the 3-PR calc repository and its image are made once per session.
Use `make_env(**config_overrides)` for a sandbox that is always removed after the test.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.repos import ChainRepo, make_chain_repo

CALC_REPO = "acme/calc"
CALC_CHAIN = (1, 2, 3)  # PR numbers of the chain, stage order


@dataclass
class CalcChain:
    repo: ChainRepo
    stages: list[Any]  # prchain.environments.protocol.StageSpec, 1-based idx

    @property
    def path(self) -> Path:
        return self.repo.path


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def docker_client() -> Any:
    from prchain.core.errors import EnvironmentFailure
    from prchain.environments.docker_client import DockerClient

    try:
        return DockerClient()
    except EnvironmentFailure as exc:
        if _in_ci():
            pytest.fail(f"CI needs a Docker engine: {exc}")
        pytest.skip(f"no Docker engine: {exc}")


@pytest.fixture(scope="session")
def base_image(docker_client: Any) -> str:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.images import ensure_base_image

    return ensure_base_image(docker_client, EnvironmentConfig(), notify=print)


@pytest.fixture(scope="session")
def calc_chain(tmp_path_factory: pytest.TempPathFactory) -> CalcChain:
    """The 3-PR chain #1 ← #2 ← #3 as stages (base sha, gold patch); commits are deterministic."""
    from prchain.environments.protocol import StageSpec

    repo = make_chain_repo(tmp_path_factory.mktemp("calc") / "calc")
    stages = [
        StageSpec(idx, repo.prs[number].base_sha, repo.prs[number].gold_patch)
        for idx, number in enumerate(CALC_CHAIN, start=1)
    ]
    return CalcChain(repo, stages)


@pytest.fixture(scope="session")
def calc_image(docker_client: Any, base_image: str, calc_chain: CalcChain) -> Any:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.images import ensure_repo_image

    return ensure_repo_image(
        docker_client, EnvironmentConfig(), CALC_REPO, calc_chain.path, notify=print
    )


@pytest.fixture
def make_env(
    docker_client: Any, calc_image: Any, calc_chain: CalcChain
) -> Iterator[Callable[..., Any]]:
    """Opens DockerEnvironments on the calc chain with config overrides (and extra container
    labels); closes them all afterwards."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    opened: list[DockerEnvironment] = []

    def open_env(labels: dict[str, str] | None = None, **overrides: Any) -> DockerEnvironment:
        config = EnvironmentConfig(**overrides)
        env = DockerEnvironment(
            config,
            repo=CALC_REPO,
            clone_path=str(calc_chain.path),
            stages=calc_chain.stages,
            client=docker_client,
            labels=labels,
        ).start()
        opened.append(env)
        return env

    yield open_env
    for env in opened:
        env.close()
