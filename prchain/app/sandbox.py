"""What `prchain env …` runs: base and repo images, listing, pruning and orphan cleanup.

Imported inside the commands only (it loads the docker SDK)."""

from __future__ import annotations

from typing import Any

from prchain.app.config import Config
from prchain.environments import admin
from prchain.environments.admin import build_base, build_repo, gc
from prchain.environments.lifecycle import PrunePlan

__all__ = ["build_base", "build_repo", "gc", "list_all", "prune"]

Listing = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def list_all(config: Config) -> Listing:
    """`prchain env ls`: prchain's images, each marked as `env prune` would treat it for this
    store, and its containers."""
    from prchain.app.verdicts import environment_config  # the test installs are in the recipe

    return admin.list_all(environment_config(config), config.store.url)


def prune(config: Config, *, dry_run: bool = False) -> PrunePlan:
    """`prchain env prune`: the store's repositories' images that no recipe in use needs go, and
    their build caches over `eras.cache_limit_gb`."""
    from prchain.app.verdicts import environment_config  # the test installs are in the recipe

    env = environment_config(config)
    return admin.prune(env, config.store.url, eras=config.eras, dry_run=dry_run)
