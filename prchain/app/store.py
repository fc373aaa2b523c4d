"""The store as the CLI sees it: opening one (once per command), its schema revision and upgrading
it, and a driver failure turned into one clear line."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy.exc import DBAPIError

    from prchain.core.errors import StoreUnavailable
    from prchain.store.handle import Store
    from prchain.store.migrate import Upgrade

__all__ = [
    "StoreRevision",
    "open_store",
    "opened",
    "store_error",
    "store_revision",
    "upgrade_store",
]


@contextmanager
def opened(url: str, store: Store | None = None, *, readonly: bool = False) -> Iterator[Store]:
    """`store` when the caller holds one (a job's steps share theirs), else the store at `url`,
    opened for this call and closed after it."""
    if store is not None:
        yield store
        return
    with open_store(url, readonly=readonly) as fresh:
        yield fresh


# SQLAlchemy loads when a command opens the store, not when `--help` imports this module.
def open_store(url: str, *, readonly: bool = False) -> Store:
    """The store at `url`, opened (its schema checked, an empty one created) for one command."""
    from prchain.store.opener import open_store as open_

    return open_(url, readonly=readonly)


def store_error(exc: DBAPIError) -> StoreUnavailable:
    """A driver failure as one line."""
    from prchain.store.db import store_error as one_line

    return one_line(exc)


@dataclass(frozen=True)
class StoreRevision:
    url: str  # password masked
    current: str | None  # None: an empty store
    head: str
    stamped: bool  # False: the store predates migrations (its shape was recognised) or is empty
    recognised: bool  # False: its revision is unknown to this prchain or its tables are not ours


def _shown(url: str) -> str:
    from sqlalchemy.engine import make_url

    from prchain.store.db import shown_url

    return shown_url(make_url(url))


def store_revision(url: str) -> StoreRevision:
    """Where the store stands, read without changing anything."""
    from prchain.store import migrate
    from prchain.store.opener import make_engine

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
    from prchain.store.opener import make_engine

    engine = make_engine(url, create=False)
    try:
        return migrate.upgrade(engine, _shown(url))
    finally:
        engine.dispose()
