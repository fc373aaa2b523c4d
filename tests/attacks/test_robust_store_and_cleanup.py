"""Issue 52, class 6: text from a log in a fixed-width column, a pruned image taken for a bare
base, and containers of other kinds than sandboxes surviving `env gc` after `kill -9`."""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine

from prchain.cli import main
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.memory import recipe, save_recipe
from prchain.store.db import session_scope
from prchain.store.models import Repo

RUN = f"robust-{os.getpid()}-{uuid.uuid4().hex[:8]}"
# A package name from a build log's "Failed to build" line, far over 40 characters.
LONG_VARIANT = "wheel:" + "a-very-long-distribution-name-from-a-build-log" * 3


def test_a_variant_read_from_a_log_fits_the_store(engine: Engine) -> None:
    with session_scope(engine) as session:
        row = Repo(full_name="acme/long", source="git", clone_path="/nonexistent")
        session.add(row)
        session.flush()
        repo_id = row.id
    values = dict(
        repo_id=repo_id,
        era_key="py311",
        ecosystem="python",
        era_date="2024-01-01",
        base_sha="0" * 40,
        status="unverified",
        method="planner",
        variant=LONG_VARIANT,
    )
    save_recipe(engine, values)
    found = recipe(engine, repo_id, "py311")
    assert found is not None and found["variant"] == LONG_VARIANT


@pytest.mark.docker
def test_a_pruned_era_image_is_no_candidate_never_a_retagged_base(docker_client: Any) -> None:
    from prchain.core.errors import EnvironmentFailure
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.images import ensure_base_image

    gone = f"prchain/era-{RUN}:pruned"
    with pytest.raises(EnvironmentFailure, match="no base image prchain can rebuild"):
        ensure_base_image(docker_client, EnvironmentConfig(base_image=gone), notify=print)
    assert docker_client.image_id(gone) is None


@pytest.mark.docker
@pytest.mark.parametrize("kind", ["sandbox", "clean-room", "era-build", "buildbox"])
def test_env_gc_collects_every_kind_prchain_starts(
    docker_client: Any, base_image: str, kind: str
) -> None:
    """An owner killed with SIGKILL: its pid is gone, its container of any kind is an orphan."""
    from prchain.environments.docker_client import ContainerSpec

    dead = {
        "prchain.managed": "1",
        "prchain.owner_pid": "999999999",
        "prchain.owner_start": "1",
        "prchain.owner_host": __import__("socket").gethostname(),
    }
    labels = {**dead, "prchain.kind": kind, "prchain.test_run": RUN}
    spec = ContainerSpec(
        image=base_image, name=f"prchain-{kind}-{RUN}", labels=labels, environment={}
    )
    container = docker_client.run(spec)
    try:
        result = CliRunner().invoke(main, ["env", "gc", "--label", f"prchain.test_run={RUN}"])
        assert result.exit_code == 0, result.output
        alive = [c["id"] for c in docker_client.containers({"prchain.test_run": RUN})]
        assert container not in alive
    finally:
        docker_client.remove_container(container)


def test_a_remembered_era_whose_image_is_gone_is_no_candidate(engine: Engine) -> None:
    """A verified recipe whose image was pruned: memory offers nothing, the ladder plans anew."""
    from datetime import UTC, datetime

    from prchain.environments.eras.era import Era
    from prchain.environments.eras.manifests import Snapshot
    from prchain.environments.eras.python import Python
    from prchain.setup.ladder import Setup, _memory_candidate

    with session_scope(engine) as session:
        row = Repo(full_name="acme/pruned", source="git", clone_path="/nonexistent")
        session.add(row)
        session.flush()
        repo_id = row.id
    values = dict(
        repo_id=repo_id,
        era_key="old",
        ecosystem="python",
        era_date="2024-01-01",
        base_sha="0" * 40,
        status="verified",
        method="planner",
        image=f"prchain/era-{RUN}:pruned",
    )
    save_recipe(engine, values)
    snap = Snapshot("1" * 40, datetime(2024, 2, 1, tzinfo=UTC), {}, [])
    era = Era("new", Python(), snap)
    kept = Setup(engine, ErasConfig(), None, None, image_exists=lambda tag: True)  # type: ignore[arg-type]
    gone = Setup(engine, ErasConfig(), None, None, image_exists=lambda tag: False)  # type: ignore[arg-type]
    assert _memory_candidate(kept, repo_id, era, None) is not None
    assert _memory_candidate(gone, repo_id, era, None) is None
