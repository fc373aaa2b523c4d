"""Opening the store: the one place an engine is made. Only the composition layer (`prchain.app`,
`prchain.cli`) imports this module (an import-linter contract holds it); everything below is
handed the `Store` it opened."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random_exponential

from prchain.core.errors import PrchainError, StoreUnavailable
from prchain.store.db import shown_url, store_error
from prchain.store.handle import Store


def _locked_out(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


# Switching a new file to WAL takes its lock without waiting on the busy handler, so commands
# starting together on a new store can be refused; the switch is retried for as long as
# busy_timeout would have waited.
_into_wal = Retrying(
    retry=retry_if_exception(_locked_out),
    wait=wait_random_exponential(multiplier=0.01, max=0.5),
    stop=stop_after_delay(30),
    reraise=True,
)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers (stats, chains) run while a miner writes; NORMAL sync is safe under WAL.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    _into_wal(cursor.execute, "PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_readonly_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA query_only=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _readonly_connector(path: str) -> Callable[[], sqlite3.Connection]:
    """Open the file read-only; a WAL store in a place we cannot write (no -shm can be made
    beside it) is read as the file stands (`immutable`): nobody can be writing it there."""
    uri = f"file:{quote(path)}?mode=ro"

    def connect() -> sqlite3.Connection:
        connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            connection.close()
            connection = sqlite3.connect(f"{uri}&immutable=1", uri=True, check_same_thread=False)
        return connection

    return connect


def make_engine(url: str, *, create: bool = True, readonly: bool = False) -> Engine:
    """An engine for any SQLAlchemy URL; SQLite parent directories are made.

    With `create`, the store's schema revision is checked (`prchain.store.migrate.check`): an empty store is
    created at the current revision; an older one raises StoreOutdated (`prchain db upgrade`), a
    newer one StoreTooNew. Workers pass create=False: their driver has checked.

    `readonly` (commands that only read: stats, export, report, show ...): an existing SQLite file
    is opened read-only, so a store on a read-only disk or owned by someone else can be read, and
    nothing is created in it.

    A URL that cannot be read, a server that refuses us and a file that is not a database are
    StoreUnavailable: one line naming the store (password masked) and the driver's reason.
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreUnavailable(
            f"the store URL {url.split('@')[-1]!r} is not a database URL",
            hint="write it like sqlite:///data/prchain.db or postgresql+psycopg://user:pw@host/db",
        ) from None
    try:
        file = parsed.database if parsed.get_backend_name() == "sqlite" else None
        if file in ("", ":memory:"):
            file = None
        readonly = readonly and file is not None and Path(file).is_file()
        if readonly and file is not None:
            engine = create_engine(url, creator=_readonly_connector(file))
        else:
            if file is not None:
                Path(file).parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url, future=True)
    except (NoSuchModuleError, ArgumentError, ImportError, OSError) as exc:
        raise StoreUnavailable(f"cannot open the store {shown_url(parsed)}: {exc}") from None
    if parsed.get_backend_name() == "sqlite":
        pragmas = _sqlite_readonly_pragmas if readonly else _sqlite_pragmas
        event.listen(engine, "connect", pragmas)
    if create:
        from prchain.store.migrate import check  # Alembic loads only for commands that open a store

        try:
            check(engine, shown_url(parsed), create=not readonly)
        except DBAPIError as exc:
            engine.dispose()
            raise store_error(exc, parsed) from None
        except PrchainError:
            engine.dispose()
            raise
    return engine


def open_store(url: str, *, create: bool = True, readonly: bool = False) -> Store:
    """The store at `url` as one `Store` (see `make_engine` for `create` and `readonly`); close it
    (or use it as a context manager) when the command is done."""
    engine = make_engine(url, create=create, readonly=readonly)
    return Store(engine, shown_url(make_url(url)))
