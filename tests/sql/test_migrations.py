"""Migrations: one head, migrations equal to the models, every released store shape upgraded in
place with its rows kept, newer stores refused, new stores made at head once.

The shapes in tests/data/stores/ are the DDL of earlier commits' prchain/store/models (SQLite and
PostgreSQL), rendered from those commits; cef42d3 is main before migrations existed.
"""

from __future__ import annotations

import ast
import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, inspect, text
from sqlalchemy.engine import make_url

from prchain.core.errors import StoreOutdated, StoreTooNew, StoreUnrecognised
from prchain.store import migrate
from prchain.store.models import Base
from prchain.store.opener import make_engine

STORES = Path(__file__).resolve().parents[1] / "data" / "stores"
# commit → the revision its store shape corresponds to
SHAPES = {
    "a3722e7": "0001_first_store",
    "fa84d32": "0002_verifications",
    "73e212c": "0003_mine_runs",
    "6b3e21a": "0004_p2t",
    "14c895e": "0005_chain_leases",
    "cbc76c8": "0006_chain_builds",
    "cef42d3": "0007_llm_repairs",
}


def _diff(engine: Engine) -> list[object]:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))


def _raw(url: str) -> Engine:
    """An engine that neither checks nor creates anything."""
    return make_engine(url, create=False)


def test_one_head_and_unique_revision_ids() -> None:
    ids = []
    for path in sorted(migrate.VERSIONS.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "revision":
                ids.append(ast.literal_eval(node.value))
                assert path.stem == ids[-1], f"{path.name}: file name and revision id differ"
    assert len(ids) == len(set(ids)), "two migrations share a revision id: renumber yours"
    heads = migrate._script().get_heads()
    assert len(heads) == 1, f"more than one head {heads}: set down_revision to main's head"


def test_migrations_from_scratch_equal_the_models(db_url: str) -> None:
    """Fails when a model changed without a migration (or a migration without the model)."""
    from alembic import command

    engine = _raw(db_url)
    with engine.connect() as connection:
        command.upgrade(migrate.alembic_config(connection), "head")
        connection.commit()
    assert _diff(engine) == [], "models and migrations differ: `make migration m=...`"
    engine.dispose()


def test_a_new_store_is_created_at_head_and_equals_the_models(db_url: str) -> None:
    engine = make_engine(db_url)
    assert migrate.current(engine).stamped == migrate.head()
    assert _diff(engine) == []
    engine.dispose()


def _load_shape(url: str, commit: str) -> Engine:
    dialect = make_url(url).get_backend_name()
    engine = _raw(url)
    lines = (STORES / f"{commit}.{dialect}.sql").read_text().splitlines()
    ddl = "\n".join(line for line in lines if not line.startswith("--"))
    with engine.begin() as connection:
        for statement in filter(None, (s.strip() for s in ddl.split(";\n"))):
            connection.exec_driver_sql(statement.rstrip(";"))
        # rows every shape can hold: they must survive the upgrade
        connection.execute(
            text(
                "INSERT INTO repos (full_name, source, created_at) VALUES ('acme/calc', 'git', :t)"
            ),
            {"t": "2026-11-01 10:00:00"},
        )
        connection.execute(
            text(
                "INSERT INTO llm_cache (cache_key, role, model, response, created_at"
                + (", valid, scrubbed_chars" if commit in ("14c895e", "cbc76c8", "cef42d3") else "")
                + ") VALUES ('k1', 'query', 'm', '{\"x\": 1}', :t"
                + (", true, 0" if commit in ("14c895e", "cbc76c8", "cef42d3") else "")
                + ")"
            ),
            {"t": "2026-11-01 10:00:00"},
        )
    return engine


@pytest.mark.parametrize("commit", list(SHAPES))
def test_a_released_store_is_identified_refused_then_upgraded(db_url: str, commit: str) -> None:
    engine = _load_shape(db_url, commit)
    assert migrate.current(engine).shape == SHAPES[commit]
    with pytest.raises(StoreOutdated, match=f"earlier prchain .schema {SHAPES[commit]}"):
        make_engine(db_url)

    result = migrate.upgrade(engine, "the store")
    assert (result.before, result.after, result.stamped_shape) == (
        SHAPES[commit],
        migrate.head(),
        True,
    )
    assert _diff(engine) == []
    with engine.connect() as connection:
        assert connection.scalar(text("SELECT full_name FROM repos")) == "acme/calc"
        row = connection.execute(text("SELECT valid, scrubbed_chars FROM llm_cache")).one()
        assert (bool(row[0]), row[1]) == (True, 0)
    make_engine(db_url).dispose()  # now accepted
    assert migrate.upgrade(engine, "the store").before == migrate.head()  # a rerun is a no-op
    engine.dispose()


def test_an_older_stamped_store_is_refused_until_upgraded(db_url: str) -> None:
    from alembic import command

    engine = _raw(db_url)
    with engine.connect() as connection:
        command.upgrade(migrate.alembic_config(connection), "0005_chain_leases")
        connection.commit()
    with pytest.raises(StoreOutdated, match="is at schema 0005_chain_leases; this prchain needs"):
        make_engine(db_url)
    assert migrate.upgrade(engine, "s").before == "0005_chain_leases"
    assert _diff(engine) == []
    engine.dispose()


def test_symbols_of_kept_links_become_not_measured(db_url: str) -> None:
    """Before 0014 a link's `symbols` was 0 where it was not measured; a kept link's 0 always
    meant that (symbols are read only to rescue a drop), a dropped link's 0 may be a count."""
    from alembic import command

    engine = _raw(db_url)
    with engine.connect() as connection:
        command.upgrade(migrate.alembic_config(connection), "0013_chain_links_drop_kind")
        connection.execute(
            text(
                "INSERT INTO repos (id, full_name, source, created_at)"
                " VALUES (1, 'acme/calc', 'git', '2026-11-01 10:00:00')"
            )
        )
        for number in (1, 2, 3, 4):
            connection.execute(
                text(
                    "INSERT INTO pull_requests (id, repo_id, number, title, body, state,"
                    " additions, deletions, changed_files, patch_status, source)"
                    " VALUES (:n, 1, :n, 't', '', 'merged', 1, 0, 1, 'ok', 'git')"
                ),
                {"n": number},
            )
        for newer, kept, rule, symbols in (
            (2, True, None, 0),
            (3, False, "gap_too_long", 0),
            (4, True, None, 2),
        ):
            connection.execute(
                text(
                    "INSERT INTO chain_links (repo_id, newer_pr_id, older_pr_id, kept, rule,"
                    " strength, lineage, symbols, why, evidence)"
                    " VALUES (1, :newer, 1, :kept, :rule, 1, 0, :symbols, '', '[]')"
                ),
                {"newer": newer, "kept": kept, "rule": rule, "symbols": symbols},
            )
        connection.commit()
    migrate.upgrade(engine, "the store")
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT newer_pr_id, symbols FROM chain_links ORDER BY newer_pr_id")
        ).all()
    assert [tuple(row) for row in rows] == [(2, None), (3, 0), (4, 2)]
    assert _diff(engine) == []
    engine.dispose()


def test_a_store_from_a_newer_prchain_is_refused(db_url: str) -> None:
    engine = make_engine(db_url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0999_from_the_future'"))
    with pytest.raises(StoreTooNew, match="0999_from_the_future.*does not know"):
        make_engine(db_url)
    with pytest.raises(StoreTooNew):
        migrate.upgrade(engine, "s")
    engine.dispose()


def test_foreign_tables_are_not_taken_for_a_store(db_url: str) -> None:
    engine = _raw(db_url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE invoices (id INTEGER PRIMARY KEY)"))
    with pytest.raises(StoreUnrecognised):
        make_engine(db_url)
    with pytest.raises(StoreUnrecognised):
        migrate.upgrade(engine, "s")
    assert inspect(engine).get_table_names() == ["invoices"]
    engine.dispose()


def _open_together(url: str, commands: int = 4) -> list[BaseException]:
    """Open the store at `url` from `commands` threads at once; what each raised."""
    errors: list[BaseException] = []

    def open_store() -> None:
        try:
            make_engine(url).dispose()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(commands)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_commands_starting_together_create_one_store(db_url: str) -> None:
    assert _open_together(db_url) == []
    engine = create_engine(db_url)
    with engine.connect() as connection:
        assert connection.scalar(text("SELECT count(*) FROM alembic_version")) == 1
    engine.dispose()


def test_new_sqlite_files_switch_to_wal_under_contention(tmp_path: Path) -> None:
    # SQLite refuses a second connection's switch to WAL at once, without its busy handler; about
    # one new file in twenty failed here before the switch was retried.
    for attempt in range(40):
        path = tmp_path / f"store{attempt}.db"
        assert _open_together(f"sqlite:///{path}") == [], f"new store {attempt}"
        with sqlite3.connect(path) as connection:
            assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def _cli(*args: str) -> tuple[int, str]:
    from click.testing import CliRunner

    from prchain.cli import main

    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_cli_says_upgrade_then_upgrades_then_refuses_a_newer_store(db_url: str) -> None:
    """Finding 1: every command failed on an older store; a newer one failed with 'no such column'."""
    _load_shape(db_url, "cef42d3").dispose()
    code, output = _cli("stats", "--db", db_url)
    errors = [line for line in output.splitlines() if line.startswith(("error:", "hint:"))]
    assert code == 1 and len(errors) == 2 and "prchain db upgrade" in errors[1], output
    code, output = _cli("db", "current", "--db", db_url)
    assert code == 1 and "predates migrations" in output
    code, output = _cli("db", "upgrade", "--db", db_url)
    assert code == 0 and "recognised by its tables" in output, output
    code, output = _cli("stats", "--db", db_url, "--json")
    assert code == 0 and '"repos": 1,' in output, output  # the row made before the upgrade
    assert _cli("db", "current", "--db", db_url)[0] == 0

    engine = _raw(db_url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0999_newer'"))
    engine.dispose()
    for command in (["stats"], ["db", "upgrade"]):
        code, output = _cli(*command, "--db", db_url)
        errors = [line for line in output.splitlines() if line.startswith("error:")]
        assert code == 1 and len(errors) == 1 and "newer prchain" in errors[0], output
