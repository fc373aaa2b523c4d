"""Issue 21, findings 5 and 6 for queries: a leaking reply is retried with a different, warmer
request, is never replayed from the cache, and is counted per role in `prchain stats`; a role's
`llm.max_tokens` reaches the server."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.store.models import LLMCacheEntry, LLMCall
from tests.chains.test_queries import CLEAN, _config, insert_chain, run_queries

LEAKING = "Write subtract in calc/ops.py."


def test_leak_retries_change_the_request_and_leaks_are_not_replayed(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    insert_chain(engine, tmp_path / "calc", numbers=(1,))
    fake_llm.push(model="query_constructor", contains="attempt", content=CLEAN[1])
    fake_llm.push(model="query_constructor", content=LEAKING)
    config = _config(max_tokens={"query_constructor": 300})
    summary = run_queries(config, engine)
    assert summary.regenerated == 1 and summary.leaked == 0

    asked = fake_llm.requests_for("query_constructor")
    assert len(asked) == 2
    assert asked[0]["messages"] != asked[1]["messages"]  # the leak and the words to avoid
    assert asked[0].get("temperature") is None and asked[1]["temperature"] == 0.9
    assert {r["max_tokens"] for r in asked} == {300}
    with Session(engine) as session:
        entries = {e.response["content"]: e for e in session.scalars(select(LLMCacheEntry))}
        statuses = {
            status: error
            for status, error in session.execute(
                select(LLMCall.status, LLMCall.error).where(LLMCall.role == "query_constructor")
            )
        }
    assert not entries[LEAKING].valid and entries[CLEAN[1]].valid
    assert "leaked" in statuses and "subtract" in (statuses["leaked"] or "")

    url = engine.url.render_as_string(hide_password=False)
    shown = CliRunner().invoke(main, ["stats", "--json", "--db", url])
    assert shown.exit_code == 0, shown.output
    refused = json.loads(shown.output)["llm_refused_by_role"]
    assert refused["query_constructor"] == {"format_error": 0, "leaked": 1, "rejected": 0}
