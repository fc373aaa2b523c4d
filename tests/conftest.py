"""Fixtures shared by the whole suite: databases (SQLite and PostgreSQL) and the local fake servers."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from prchain.store.opener import make_engine

pytest_plugins = [
    "tests.support.github_fixtures",
    "tests.support.llm_fixtures",
    "tests.support.docker_fixtures",
    "tests.support.foreign_docker",
    "tests.support.browser",
]

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # xdist hands its workers the controller's terminal width; prchain's tables in a pipe or a
    # log keep their own width (prchain.cli.safe), as they do for a user.
    os.environ.pop("COLUMNS", None)
POSTGRES_URL = os.environ.get("PRCHAIN_TEST_POSTGRES_URL", "")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with a slow test first, then those with a Docker test, then the rest (each group
    in collection order, each module's tests together): `make test` hands xdist's workers a module
    at a time in this order, so the long ones start early and the quick ones fill the end, where
    a slow module started last would keep one worker busy while the others wait."""

    def module(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    def rank(item: pytest.Item) -> int:
        return (
            0 if item.get_closest_marker("slow") else 1 if item.get_closest_marker("docker") else 2
        )

    first: dict[str, int] = {}
    for item in items:
        first[module(item)] = min(rank(item), first.get(module(item), 2))
    items.sort(key=lambda item: first[module(item)])


@pytest.fixture(autouse=True, scope="session")
def _own_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """prchain's own cache (the commit-graphs chain builds write) in the run's directory, never
    the user's, for the tests' processes and those they start. Session scope: module fixtures
    build chains before any test's fixtures run."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PRCHAIN_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "prchain-cache"))
        yield


def _postgres_admin() -> Engine | None:
    if not POSTGRES_URL:
        return None
    engine = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect():
            return engine
    except Exception:
        return None


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[Engine]:
    engine = _postgres_admin()
    if engine is None:
        if IN_CI:
            pytest.fail(
                f"PostgreSQL is not reachable at PRCHAIN_TEST_POSTGRES_URL={POSTGRES_URL!r}"
            )
        pytest.skip("PostgreSQL not reachable (run `make install` to start it)")
    yield engine
    engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database URL: a SQLite file, or a new PostgreSQL database dropped afterwards."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'prchain.db'}"
        return
    admin: Engine = request.getfixturevalue("postgres_admin")
    name = f"prchain_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    yield url
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'prchain.db'}"


@pytest.fixture
def sqlite_engine(sqlite_url: str) -> Iterator[Engine]:
    """SQLite only: for tests whose subject is not the store (e.g. each run starts a container)."""
    eng = make_engine(sqlite_url)
    yield eng
    eng.dispose()


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    eng = make_engine(db_url)
    yield eng
    eng.dispose()
