"""Sessions, the dialect-aware upsert every writer uses, and a driver failure as one line. Opening
a store (making its engine) is `prchain.store.opener`'s alone."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from sqlalchemy import Engine, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from prchain.core.errors import StoreUnavailable
from prchain.store.models import Base


def shown_url(url: URL) -> str:
    """The URL as shown to a user: password masked."""
    return url.render_as_string(hide_password=True)


def store_error(exc: DBAPIError, url: URL | None = None) -> StoreUnavailable:
    """A driver failure as one line: the first line of the driver's own message."""
    reason = str(exc.orig or exc).strip().splitlines()
    first = reason[0] if reason else type(exc).__name__
    where = f" {shown_url(url)}" if url is not None else ""
    if "not a database" in first or "malformed" in first:
        return StoreUnavailable(
            f"the store{where} is not a usable SQLite database: {first}",
            hint="the file is damaged or not a database; restore it or point --db at another file",
        )
    return StoreUnavailable(f"cannot use the store{where}: {first}")


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
    columns = tuple(rows[0])
    if update is None:
        update = [c for c in columns if c not in conflict and c != "id"]
    key = _Statement(cast(Table, model.__table__), columns, tuple(conflict), tuple(update))
    _execute_many(session, key, rows)


def insert_rows(session: Session, model: type[Base], rows: Sequence[dict[str, Any]]) -> None:
    """Plain bulk insert (the caller deleted what these rows replace)."""
    if rows:
        _execute_many(session, _Statement(cast(Table, model.__table__), tuple(rows[0])), rows)


@dataclass(frozen=True)
class _Statement:
    table: Table
    columns: tuple[str, ...]
    conflict: tuple[str, ...] | None = None  # None: a plain INSERT
    update: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Compiled:
    sql: str
    positional: bool
    order: tuple[str, ...]  # the bind names, in the order a positional statement takes them
    processors: tuple[Callable[[Any], Any] | None, ...]  # the column types' conversions
    defaults: tuple[Callable[[], Any] | None, ...]  # for bound columns the rows leave out


def _execute_many(session: Session, key: _Statement, rows: Sequence[dict[str, Any]]) -> None:
    """executemany with a statement compiled once per shape.

    SQLAlchemy's own executemany rebuilds every row's parameters through the compiler; on a
    15k-PR ingest that cost more than SQLite's inserting. Here each column's type conversion
    (datetimes, JSON, booleans) is applied directly and the driver gets plain tuples or dicts.
    """
    connection = session.connection()
    compiled = _compile(key, connection.dialect)
    converted = [
        [
            value if fn is None else fn(value)
            for value, fn in zip(_values(row, compiled), compiled.processors, strict=True)
        ]
        for row in rows
    ]
    if compiled.positional:
        params: list[Any] = [tuple(values) for values in converted]
    else:
        params = [dict(zip(compiled.order, values, strict=True)) for values in converted]
    connection.exec_driver_sql(compiled.sql, params)


def _values(row: dict[str, Any], compiled: _Compiled) -> list[Any]:
    """The row's values in bind order; a column the row leaves out gets its Python-side default."""
    return [
        row[name] if default is None else default()
        for name, default in zip(compiled.order, compiled.defaults, strict=True)
    ]


@lru_cache(maxsize=256)
def _compile(key: _Statement, dialect: Dialect) -> _Compiled:
    name = dialect.name
    if key.conflict is not None and name not in ("sqlite", "postgresql"):
        raise NotImplementedError(f"upsert is not implemented for {name}")
    stmt: Any = key.table.insert()
    if key.conflict is not None:
        # Both dialects' Insert have the same on_conflict API.
        stmt = sqlite.insert(key.table) if name == "sqlite" else postgresql.insert(key.table)
        if key.update:
            stmt = stmt.on_conflict_do_update(
                index_elements=list(key.conflict), set_={c: stmt.excluded[c] for c in key.update}
            )
        else:
            stmt = stmt.on_conflict_do_nothing(index_elements=list(key.conflict))
    compiled = stmt.compile(dialect=dialect, column_keys=list(key.columns))
    order = tuple(compiled.positiontup or ()) if dialect.positional else tuple(compiled.binds)
    processors = compiled._bind_processors  # the conversions SQLAlchemy itself would apply
    defaults = tuple(None if n in key.columns else _default(key.table, n) for n in order)
    return _Compiled(
        str(compiled), dialect.positional, order, tuple(processors.get(n) for n in order), defaults
    )


def _default(table: Table, name: str) -> Callable[[], Any]:
    """A column's Python-side INSERT default as a no-argument function."""
    default: Any = table.c[name].default
    if default is None:
        return lambda: None
    if default.is_scalar:
        return lambda: default.arg
    if default.is_callable:
        return lambda: default.arg(None)  # SQLAlchemy wraps plain functions to take a context
    raise NotImplementedError(f"{table.name}.{name}: SQL-expression defaults need session.execute")
