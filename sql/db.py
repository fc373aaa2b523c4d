"""Engines, sessions and the dialect-aware upsert every writer uses."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Engine, Table, create_engine, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from sql.models import Base


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers (stats, chains) run while a miner writes; NORMAL sync is safe under WAL.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def make_engine(url: str, *, create: bool = True) -> Engine:
    """An engine for any SQLAlchemy URL; SQLite parent directories are made and tables created."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, future=True)
    if parsed.get_backend_name() == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    if create:
        Base.metadata.create_all(engine)
    return engine


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def session_scope(engine: Engine) -> Iterator[Session]:
    """One transaction: committed on success, rolled back on any exception."""
    with session_factory(engine)() as session, session.begin():
        yield session


def upsert(
    session: Session,
    model: type[Base],
    rows: Sequence[dict[str, Any]],
    conflict: Sequence[str],
    *,
    update: Sequence[str] | None = None,
) -> None:
    """Insert rows; on a unique conflict update `update` columns (all non-key columns by default).

    Reruns therefore never duplicate rows. Works on SQLite and PostgreSQL.
    """
    if not rows:
        return
    table = cast(Table, model.__table__)
    dialect = session.get_bind().dialect.name
    if dialect not in ("sqlite", "postgresql"):
        raise NotImplementedError(f"upsert is not implemented for {dialect}")
    # Both dialects' Insert have the same on_conflict API; the union type keeps mypy honest.
    stmt: sqlite.Insert | postgresql.Insert = (
        sqlite.insert(table) if dialect == "sqlite" else postgresql.insert(table)
    )
    columns = set(rows[0])
    if update is None:
        update = [c for c in columns if c not in conflict and c != "id"]
    if update:
        stmt = stmt.on_conflict_do_update(
            index_elements=list(conflict), set_={c: stmt.excluded[c] for c in update}
        )
    else:
        stmt = stmt.on_conflict_do_nothing(index_elements=list(conflict))
    session.execute(stmt, list(rows))
