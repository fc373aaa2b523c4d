"""Readers of the repository aggregate: each repository's clone. The composition layer calls them
with the engine it opened and hands the answers to the libraries below it, which never open the
store themselves."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, select

from prchain.store.db import session_scope
from prchain.store.models import Repo


def clone_paths(engine: Engine) -> dict[str, Path | None]:
    """Every repository of the store with its clone (None when it has none)."""
    with session_scope(engine) as session:
        rows = session.execute(select(Repo.full_name, Repo.clone_path)).all()
    return {name: Path(path) if path else None for name, path in rows}
