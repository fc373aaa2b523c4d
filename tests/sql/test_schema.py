from sqlalchemy import inspect

from prchain.store.db import upsert
from prchain.store.models import Base, Repo
from prchain.store.schema import SCHEMA_FILE, render_schema


def test_schema_sql_matches_models() -> None:
    assert SCHEMA_FILE.read_text() == render_schema(), (
        "prchain/store/schema.sql drifted: run `make schema`"
    )


def test_every_model_table_is_created(engine) -> None:
    created = set(inspect(engine).get_table_names())
    assert set(Base.metadata.tables) <= created


def test_upsert_updates_instead_of_duplicating(engine) -> None:
    from sqlalchemy import func, select
    from sqlalchemy.orm import Session

    with Session(engine) as session, session.begin():
        upsert(session, Repo, [{"full_name": "acme/calc", "source": "git"}], ["full_name"])
        upsert(session, Repo, [{"full_name": "acme/calc", "source": "github"}], ["full_name"])
    with Session(engine) as session:
        assert session.scalar(select(func.count()).select_from(Repo)) == 1
        assert session.scalar(select(Repo.source)) == "github"
