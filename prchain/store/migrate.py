"""The store's schema revision: checked when a command opens the store, new stores made at head,
older ones brought up by `prchain db upgrade` (Alembic, migrations in prchain/store/migrations/versions).

A store made before migrations existed has no `alembic_version` table. Its tables say which
released shape it has (`SHAPES`); the upgrade stamps that revision and migrates from there.

Creating and upgrading hold the store's schema lock for the whole transaction (PostgreSQL: an
advisory lock; SQLite: BEGIN IMMEDIATE), so two commands starting on one new store never both
create it, and two upgrades never interleave.

To add a migration after changing prchain/store/models: `make migration m="what changed"` (see
docs/data-integrity.md).
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, create_engine, inspect, text

from prchain.core.errors import StoreOutdated, StoreTooNew, StoreUnrecognised
from prchain.store.models import Base

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).with_name("migrations")
VERSIONS = MIGRATIONS / "versions"
_PG_LOCK = 0x70726368  # "prch": the advisory lock every schema change on PostgreSQL takes

# Released shapes before migrations, newest first: the revision and the table (or table.column)
# that revision added. A store holding a marker and every older one has that revision's shape.
SHAPES: tuple[tuple[str, str], ...] = (
    ("0007_llm_repairs", "llm_repairs"),
    ("0006_chain_builds", "chain_builds"),
    ("0005_chain_leases", "chain_leases"),
    ("0004_p2t", "p2t_graphs"),
    ("0003_mine_runs", "mine_runs"),
    ("0002_verifications", "stage_verifications"),
    ("0001_first_store", "rollouts.action_format"),
)


@dataclass(frozen=True)
class Revision:
    """Where a store stands: its stamped revision, or (unstamped) the released shape it has."""

    stamped: str | None  # the alembic_version row; None when the table is missing
    shape: str | None = (
        None  # unstamped only: a SHAPES revision, "" for an empty store, None unknown
    )

    @property
    def current(self) -> str | None:
        return self.stamped if self.stamped is not None else self.shape or None


def alembic_config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("file_template", "%%(rev)s")  # the id already holds the slug
    config.attributes["connection"] = connection
    return config


@lru_cache(maxsize=1)
def _script() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def head() -> str:
    """The revision this code's models correspond to (a test keeps it the only head)."""
    heads = _script().get_heads()
    if len(heads) != 1:
        raise RuntimeError(f"prchain/store/migrations has {len(heads)} heads {heads}: merge them")
    return heads[0]


def known(revision: str) -> bool:
    from alembic.util import CommandError

    try:
        return _script().get_revision(revision) is not None
    except CommandError:
        return False


def revision_of(connection: Connection) -> Revision:
    """The store's revision, read without writing anything."""
    if inspect(connection).has_table("alembic_version"):
        stamped = connection.scalar(text("SELECT version_num FROM alembic_version"))
        return Revision(stamped=stamped or "")
    return Revision(stamped=None, shape=shape_of(connection))


def shape_of(connection: Connection) -> str | None:
    """An unstamped store's released shape: "" when it has no tables, None when unrecognised."""
    found = inspect(connection)
    tables = set(found.get_table_names())
    if not tables:
        return ""
    columns: dict[str, set[str]] = {}

    def present(marker: str) -> bool:
        table, _, column = marker.partition(".")
        if table not in tables:
            return False
        if not column:
            return True
        if table not in columns:
            columns[table] = {c["name"] for c in found.get_columns(table)}
        return column in columns[table]

    for at, (revision, marker) in enumerate(SHAPES):
        if present(marker):
            older = SHAPES[at + 1 :]
            return revision if all(present(m) for _, m in older) else None
    return None


def check(engine: Engine, shown: str, *, create: bool = True) -> None:
    """Make sure the store is at head: an empty one is created there (when `create`); anything
    else is one clear error (older → `prchain db upgrade`, newer → refused)."""
    with _snapshot(engine) as connection:
        state = revision_of(connection)
    if state.stamped == head():
        return
    if state.stamped is None and state.shape == "" and create:
        _create_at_head(engine)
        return
    raise _mismatch(state, shown)


@contextmanager
def _snapshot(engine: Engine) -> Iterator[Connection]:
    """A read transaction: its reads see the store as it was at one moment. Read one by one, the
    revision mark and the tables are two moments, and a command creating the store between them
    shows its tables without its mark (one new store in 40, opened by four commands at once)."""
    with engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            connection.commit()  # the driver's own transaction handling would not begin one
            connection.exec_driver_sql("BEGIN")
        else:
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
        try:
            yield connection
        finally:
            connection.rollback()


def _mismatch(state: Revision, shown: str) -> Exception:
    want = head()
    if state.stamped is None and state.shape == "":
        return StoreOutdated(f"the store {shown} is empty: it has no prchain tables yet")
    if state.stamped is None and state.shape is None:
        return StoreUnrecognised(
            f"the store {shown} holds tables that are not a prchain store's (no revision mark)"
        )
    if state.stamped is None:
        return StoreOutdated(
            f"the store {shown} was made by an earlier prchain (schema {state.shape}, "
            f"no revision mark); this prchain needs {want}"
        )
    if not known(state.stamped):
        return StoreTooNew(
            f"the store {shown} is at schema {state.stamped!r}, which this prchain "
            f"(schema {want}) does not know: a newer prchain wrote it; refusing to touch it"
        )
    return StoreOutdated(
        f"the store {shown} is at schema {state.stamped}; this prchain needs {want}"
    )


def _create_at_head(engine: Engine) -> None:
    with _locked(engine) as connection:
        state = revision_of(connection)  # another command may have created it meanwhile
        if state.stamped is None and state.shape == "":
            Base.metadata.create_all(connection)
            _stamp(connection, head())


def _stamp(connection: Connection, revision: str) -> None:
    from alembic.migration import MigrationContext

    MigrationContext.configure(connection).stamp(_script(), revision)


@dataclass(frozen=True)
class Upgrade:
    before: str | None  # the revision the store had (an unstamped store: its shape); None = empty
    after: str
    stamped_shape: bool  # the store had no revision mark and was identified by its tables


def upgrade(engine: Engine, shown: str) -> Upgrade:
    """Bring the store to head in one locked transaction (an empty store is created at head).

    On SQLite foreign keys are off meanwhile: rebuilding a table (batch mode) drops the old one,
    and with foreign keys on that would cascade-delete the rows that point at it.
    """
    from alembic import command

    with _locked(engine, foreign_keys=False) as connection:
        state = revision_of(connection)
        if state.stamped is None and state.shape == "":
            Base.metadata.create_all(connection)
            _stamp(connection, head())
            return Upgrade(None, head(), False)
        if (
            state.stamped is None
            and state.shape is None
            or (state.stamped is not None and not known(state.stamped))
        ):
            raise _mismatch(state, shown)
        if state.stamped is None:
            assert state.shape is not None
            _stamp(connection, state.shape)
        command.upgrade(alembic_config(connection), "head")
        return Upgrade(state.current, head(), state.stamped is None)


@contextmanager
def _locked(engine: Engine, *, foreign_keys: bool = True) -> Iterator[Connection]:
    """One transaction holding the store's schema lock; committed when the block succeeds."""
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            connection.commit()  # pragmas apply outside a transaction only
            if not foreign_keys:
                connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        elif connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK})
        try:
            yield connection
            connection.commit()
        except BaseException:
            connection.rollback()
            raise
        finally:
            if sqlite and not foreign_keys:
                connection.exec_driver_sql("PRAGMA foreign_keys=ON")


def current(engine: Engine) -> Revision:
    with engine.connect() as connection:
        return revision_of(connection)


def new_revision(message: str, *, versions: Path = VERSIONS) -> Path:
    """Write a migration taking head to today's models (autogenerated: review it before landing).

    The id is the next number plus a slug of the message, e.g. 0009_chain_superseded.
    """
    from alembic import command

    slug = re.sub(r"[^a-z0-9]+", "_", message.lower()).strip("_")[:40] or "change"
    numbers = [int(p.name[:4]) for p in versions.glob("[0-9][0-9][0-9][0-9]_*.py")]
    rev_id = f"{max(numbers, default=0) + 1:04d}_{slug}"
    with tempfile.TemporaryDirectory() as scratch:
        engine = create_engine(f"sqlite:///{scratch}/head.db")
        try:
            with engine.connect() as connection:
                command.upgrade(alembic_config(connection), "head")
                connection.commit()
                command.revision(
                    alembic_config(connection), message, autogenerate=True, rev_id=rev_id
                )
        finally:
            engine.dispose()
    return versions / f"{rev_id}.py"


def _main() -> None:
    parser = argparse.ArgumentParser(prog="python -m prchain.store.migrate")
    sub = parser.add_subparsers(dest="command", required=True)
    revision = sub.add_parser("revision", help="autogenerate a migration for the models' changes")
    revision.add_argument("message")
    args = parser.parse_args()
    if args.command == "revision":
        path = new_revision(args.message)
        print(f"wrote {path}: review it (NOT NULL columns need a server_default for old rows)")


if __name__ == "__main__":
    _main()
