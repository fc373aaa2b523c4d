"""Readers of the repository aggregate: each repository's clone, and the era images its verified
recipes name. The composition layer calls them with the engine it opened and hands the answers to
the libraries below it, which never open the store themselves."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, select

from prchain.store.db import session_scope
from prchain.store.models import EnvRecipe, Repo


def clone_paths(engine: Engine) -> dict[str, Path | None]:
    """Every repository of the store with its clone (None when it has none)."""
    with session_scope(engine) as session:
        rows = session.execute(select(Repo.full_name, Repo.clone_path)).all()
    return {name: Path(path) if path else None for name, path in rows}


def verified_era_images(engine: Engine) -> list[tuple[str, str]]:
    """(repository, era image tag) of every verified recipe in the store's recipe memory."""
    with session_scope(engine) as session:
        rows = session.execute(
            select(Repo.full_name, EnvRecipe.image)
            .join(Repo, Repo.id == EnvRecipe.repo_id)
            .where(EnvRecipe.status == "verified", EnvRecipe.image != "")
        ).all()
    return [(repo, image) for repo, image in rows]
