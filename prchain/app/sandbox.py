"""What `prchain env …` runs: base and repo images, listing, pruning and orphan cleanup.

Imported inside the commands only (it loads the docker SDK)."""

from __future__ import annotations

from environments import admin
from environments.admin import build_base, build_repo, gc, list_all
from environments.lifecycle import PrunePlan
from prchain.app.config import Config

__all__ = ["build_base", "build_repo", "gc", "list_all", "prune"]


def prune(config: Config, *, dry_run: bool = False) -> PrunePlan:
    """`prchain env prune`: the store's repositories' images that no recipe in use needs go."""
    from prchain.app.verdicts import environment_config  # the test installs are in the recipe

    return admin.prune(environment_config(config), config.store.url, dry_run=dry_run)
