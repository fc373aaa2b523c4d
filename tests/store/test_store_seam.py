"""The store seam: one `Store` per command, opened by the composition layer, and the llm_calls
aggregate whose SQL lives in prchain/store/llm_calls.py alone (on SQLite and PostgreSQL)."""

from __future__ import annotations

import ast
from datetime import timedelta
from pathlib import Path

from sqlalchemy import text

from prchain.store.models.base import utcnow
from prchain.store.opener import open_store

ROOT = Path(__file__).resolve().parents[2]


def _call(role: str, cost: float, **fields: object) -> dict[str, object]:
    return {"role": role, "model": "m", "cache_key": f"{role}-{cost}", "prompt_tokens": 10,
            "completion_tokens": 5, "cost_usd": cost, **fields}  # fmt: skip


def test_a_store_holds_its_engine_and_dialect_and_closes(db_url: str) -> None:
    with open_store(db_url) as store:
        assert store.dialect in ("sqlite", "postgresql")
        assert db_url.startswith(store.dialect)
        with store.session() as session:
            assert session.execute(text("SELECT count(*) FROM llm_calls")).scalar() == 0
        assert store.engine.pool.checkedout() == 0
    if store.engine.url.password:  # the PostgreSQL URL: shown with its password masked
        assert "***" in store.url


def test_llm_calls_are_written_and_read_through_the_store(db_url: str) -> None:
    with open_store(db_url) as store:
        calls = store.llm_calls
        assert calls.last_id() == 0
        first = calls.add(_call("judge", 0.25))
        second = calls.add(_call("judge", 0.5, status="ok"))
        cached = calls.add(_call("judge", 0.0, cached=True))
        calls.mark(second, "leaked", "named the gold patch")
        calls.mark(10_000, "leaked", "no such call: nothing happens")
        assert calls.last_id() == cached
        assert calls.cost_after(first) == 0.5
        assert calls.history("judge") == (1, 10.0, 5.0)  # the leaked and the cached left out
        paid = calls.paid(since=utcnow() - timedelta(hours=1))
        assert [(c.id, c.tokens, c.cost_usd) for c in paid] == [
            (first, 15, 0.25),
            (second, 15, 0.5),
        ]
        assert [c.id for c in calls.paid(since=utcnow(), after_id=first)] == [second]
        from prchain.store.llm_calls import count_by_role_and_status, paid_by_role

        with store.session() as session:
            assert paid_by_role(session) == [("judge", 2, 30, 0.75)]
            assert count_by_role_and_status(session, ("leaked",)) == [("judge", "leaked", 1)]
            row = session.execute(text("SELECT error FROM llm_calls WHERE id = :i"), {"i": second})
            assert row.scalar() == "named the gold patch"


def _names_the_model(tree: ast.Module, model: str) -> bool:
    return any(
        (isinstance(node, ast.Name) and node.id == model)
        or (isinstance(node, ast.alias) and node.name == model)
        or (isinstance(node, ast.Attribute) and node.attr == model)
        for node in ast.walk(tree)
    )


def test_only_the_store_names_the_llm_calls_model() -> None:
    outside = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "prchain").rglob("*.py"))
        if "prchain/store/" not in path.as_posix()
        and _names_the_model(ast.parse(path.read_text()), "LLMCall")
    ]
    assert outside == []
    assert _names_the_model(ast.parse("from prchain.store.models import LLMCall\n"), "LLMCall")
    assert _names_the_model(ast.parse("import m\nm.LLMCall.id\n"), "LLMCall")
    assert not _names_the_model(ast.parse("LLMCalls(engine).add({})\n"), "LLMCall")
