"""What `prchain env …` runs: base and repo images, listing, pruning and orphan cleanup.

Imported inside the commands only (it loads the docker SDK)."""

from __future__ import annotations

from environments.admin import build_base, build_repo, gc, list_all, prune

__all__ = ["build_base", "build_repo", "gc", "list_all", "prune"]
