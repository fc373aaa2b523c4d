"""The store as the CLI sees it: opening one, its schema revision and upgrading it, and a driver
failure turned into one clear line."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import make_url

from prchain.store.db import make_engine, store_error
from prchain.store.migrate import Upgrade

__all__ = ["StoreRevision", "make_engine", "store_error", "store_revision", "upgrade_store"]


@dataclass(frozen=True)
class StoreRevision:
    url: str  # password masked
    current: str | None  # None: an empty store
    head: str
    stamped: bool  # False: the store predates migrations (its shape was recognised) or is empty
    recognised: bool  # False: its revision is unknown to this prchain or its tables are not ours


def _shown(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


def store_revision(url: str) -> StoreRevision:
    """Where the store stands, read without changing anything."""
    from prchain.store import migrate

    engine = make_engine(url, create=False, readonly=True)
    try:
        state = migrate.current(engine)
    finally:
        engine.dispose()
    if state.stamped is not None:
        recognised = migrate.known(state.stamped)
    else:
        recognised = state.shape is not None
    return StoreRevision(
        _shown(url), state.current, migrate.head(), state.stamped is not None, recognised
    )


def upgrade_store(url: str) -> Upgrade:
    """Bring the store to this prchain's schema (an empty one is created)."""
    from prchain.store import migrate

    engine = make_engine(url, create=False)
    try:
        return migrate.upgrade(engine, _shown(url))
    finally:
        engine.dispose()
