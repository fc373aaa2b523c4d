"""What `prchain env …` runs: base and repo images, listing, pruning and orphan cleanup.

The store is read here, once per command, and what it says is handed to
`prchain.environments.admin` as plain data (`StoreImages`): the environments layer never opens it.
Imported inside the commands only (it loads the docker SDK)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from prchain.app.config import Config
from prchain.core.errors import GitError, NothingToDo
from prchain.environments import admin, images
from prchain.environments.admin import StoreImages, build_base, gc
from prchain.environments.config import EnvironmentConfig
from prchain.environments.lifecycle import PrunePlan
from prchain.store import repos
from prchain.store.opener import open_store

__all__ = ["build_base", "build_repo", "gc", "list_all", "prune", "store_images"]

Listing = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def store_images(store_url: str) -> StoreImages | None:
    """Each repository's clone and the era images of its verified recipes; None for a SQLite file
    that does not exist (listing never makes a store)."""
    url = make_url(store_url)
    if url.get_backend_name() == "sqlite" and not Path(url.database or "").is_file():
        return None
    with open_store(store_url) as store:
        return StoreImages(repos.clone_paths(store.engine), store.environments.verified_images())


def build_repo(
    config: EnvironmentConfig,
    repo: str,
    *,
    clone: str | None,
    store_url: str,
    notify: images.Notify = print,
) -> images.RepoImage:
    """`prchain env build`: the repository's image, from `clone` or the clone the miner recorded."""
    return admin.build_repo(
        config, repo, Path(clone) if clone else _clone_of(store_url, repo), notify
    )


def _clone_of(store_url: str, repo: str) -> Path:
    found = store_images(store_url)
    if found is None or repo not in found.clones:
        raise NothingToDo(f"{repo} is not in the store", hint="mine it first, or pass --clone PATH")
    path = found.clones[repo]
    if path is None:
        raise GitError(f"{repo} has no local clone recorded", hint="pass --clone PATH to its clone")
    return path


def list_all(config: Config) -> Listing:
    """`prchain env ls`: prchain's images, each marked as `env prune` would treat it for this
    store, and its containers."""
    from prchain.app.verdicts import environment_config  # the test installs are in the recipe

    return admin.list_all(environment_config(config), store_images(config.store.url))


def prune(config: Config, *, dry_run: bool = False) -> PrunePlan:
    """`prchain env prune`: the store's repositories' images that no recipe in use needs go, and
    their build caches over `eras.cache_limit_gb`."""
    from prchain.app.verdicts import environment_config  # the test installs are in the recipe

    env = environment_config(config)
    store = store_images(config.store.url) or StoreImages({}, [])
    return admin.prune(env, store, eras=config.eras, dry_run=dry_run)
