"""The geo repository (a 3-PR chain whose PRs carry tests) and sandboxes on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from prchain.chains.reading.patches import split_patch
from prchain.dev.repos import ChainRepo, make_tested_repo

GEO_REPO = "acme/geo"
GEO_TEST_COMMAND = "python3 -m pytest -p no:cacheprovider {files}"


@pytest.fixture(scope="session")
def geo_repo(tmp_path_factory: pytest.TempPathFactory) -> ChainRepo:
    return make_tested_repo(tmp_path_factory.mktemp("geo") / "geo")


@pytest.fixture
def geo_env(
    docker_client: Any, base_image: str, geo_repo: ChainRepo
) -> Iterator[Callable[..., Any]]:
    """Opens a sandbox on the geo chain #1 ← #2 ← #3 (code patches carried, as rollouts do)."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment
    from prchain.environments.protocol import StageSpec

    opened: list[Any] = []

    def open_env() -> Any:
        stages = [
            StageSpec(
                idx, geo_repo.prs[idx].base_sha, split_patch(geo_repo.prs[idx].gold_patch).code
            )
            for idx in (1, 2, 3)
        ]
        env = DockerEnvironment(
            EnvironmentConfig(),
            repo=GEO_REPO,
            clone_path=str(geo_repo.path),
            stages=stages,
            client=docker_client,
        ).start()
        opened.append(env)
        return env

    yield open_env
    for env in opened:
        env.close()
