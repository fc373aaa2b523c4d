"""What `prchain env …` does: base and repo images, listing, pruning, removing orphan containers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select

from environments import cleanup, images
from environments.config import EnvironmentConfig
from environments.docker_client import MANAGED_LABEL, DockerClient
from prchain.core.errors import GitError, NothingToDo
from sql.db import make_engine, session_scope
from sql.models import Repo


def build_base(config: EnvironmentConfig, notify: images.Notify = print) -> str:
    """The base image's id, built once (quick when cached: one inspect call)."""
    return images.ensure_base_image(DockerClient(), config, notify)


def clone_of(store_url: str, repo: str) -> Path:
    """The local clone the miner recorded for owner/name."""
    engine = make_engine(store_url)
    try:
        with session_scope(engine) as session:
            row = session.scalars(select(Repo).where(Repo.full_name == repo)).first()
            path = row.clone_path if row else None
    finally:
        engine.dispose()
    if row is None:
        raise NothingToDo(f"{repo} is not in the store", hint="mine it first, or pass --clone PATH")
    if not path:
        raise GitError(f"{repo} has no local clone recorded", hint="pass --clone PATH to its clone")
    return Path(path)


def build_repo(
    config: EnvironmentConfig,
    repo: str,
    *,
    clone: str | None,
    store_url: str,
    notify: images.Notify = print,
) -> images.RepoImage:
    path = Path(clone) if clone else clone_of(store_url, repo)
    if not path.exists():
        raise GitError(f"clone {path} of {repo} does not exist")
    return images.ensure_repo_image(DockerClient(), config, repo, path, notify)


def list_all() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Managed images and managed containers (with whether their owner still runs)."""
    client = DockerClient()
    containers = client.containers({MANAGED_LABEL: "1"})
    for container in containers:
        container["owner_alive"] = cleanup.owner_alive(container["labels"])
    return images.list_images(client), containers


def prune(*, everything: bool = False) -> list[str]:
    return images.prune_images(DockerClient(), keep_latest=not everything)


def gc(*, everything: bool = False) -> list[dict[str, Any]]:
    return cleanup.gc(DockerClient(), everything=everything)
