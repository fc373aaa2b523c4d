"""Replies a real small model gave, replayed: a backticked query is repaired (and counted), budgets
stop a multi-worker build within one call of the limit, and --dry-run prices the build."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from prchain.app.stats import collect_stats
from prchain.cli import main
from prchain.core.errors import BudgetExhausted
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.client import LLMClient
from prchain.store.db import session_scope
from prchain.store.models import Chain, ChainStage, LLMCall, LLMRepair
from prchain.store.opener import make_engine
from tests.chains.test_queries import (
    CLEAN,
    OVERVIEW,
    _config,
    _script_clean_chain,
    _stages,
    _title,
    insert_chain,
    run_queries,
)
from tests.support.llm_fixtures import make_test_llm_config

# What llama.cpp's server with a small instruct model answered (issue 14): good prose, one command
# in backticks, a bold word.
BACKTICKED = (
    "The project should keep working when it is started as `python -m uv`, so make the entry "
    "module in calc/ops.py **safe** to run that way."
)


def test_a_backticked_query_is_repaired_recorded_and_still_leak_checked(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    insert_chain(engine, tmp_path / "calc")
    fake_llm.push(
        model="query_constructor",
        contains=f"Pull request title: {_title(1)}",
        content=BACKTICKED,
    )
    # The repaired text names `multiply`, which the gold patch adds: the leak check still sees it.
    fake_llm.push(
        model="query_constructor",
        contains=f"Pull request title: {_title(2)}",
        content="Add a `multiply` helper to calc/ops.py.",
    )
    fake_llm.push(
        model="query_constructor", contains="taken literally from the code", content=CLEAN[2]
    )
    fake_llm.push(
        model="query_constructor", contains=f"Pull request title: {_title(3)}", content=CLEAN[3]
    )
    fake_llm.push(model="overview", content=OVERVIEW)
    summary = run_queries(_config(), engine)
    queries = [s.query for s in _stages(engine)]
    assert queries[0] == BACKTICKED.replace("`", "").replace("**", "")
    assert summary.stages_done == 3 and summary.stages_failed == 0
    assert len(fake_llm.requests_for("query_constructor")) == 4  # no retry for formatting alone
    with Session(engine) as session:
        kinds = session.execute(select(LLMRepair.role, LLMRepair.kind)).all()
    assert sorted(kinds) == [("query_constructor", "markup_stripped")] * 2
    stats = collect_stats(engine)
    assert stats["llm_repairs_by_role"] == {"query_constructor": {"markup_stripped": 2}}


def test_a_retry_after_a_format_error_is_a_different_request(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    insert_chain(engine, tmp_path / "calc", numbers=(1,))
    # A server that answers the same request the same way: only a changed request gets prose.
    fake_llm.push(
        model="query_constructor",
        contains=f"Pull request title: {_title(1)}",
        content="```python\nsubtract(a, b)\n```",
    )
    fake_llm.push(model="query_constructor", contains="could not be used", content=CLEAN[1])
    run_queries(_config(), engine)
    first, second = fake_llm.requests_for("query_constructor")
    assert first.get("temperature") is None and second["temperature"] == pytest.approx(0.9)
    assert _stages(engine)[0].query == CLEAN[1]


def _copies(engine: Engine, chain_id: int, n: int) -> None:
    """n more chains over the same PRs (as another strategy would find them)."""
    with session_scope(engine) as session:
        chain = session.get_one(Chain, chain_id)
        stages = session.scalars(select(ChainStage).filter_by(chain_id=chain_id)).all()
        for copy in range(n):
            twin = Chain(
                repo_id=chain.repo_id,
                strategy=f"copy{copy}",
                signature=chain.signature,
                length=chain.length,
            )
            session.add(twin)
            session.flush()
            for s in stages:
                session.add(
                    ChainStage(
                        chain_id=twin.id,
                        idx=s.idx,
                        pr_id=s.pr_id,
                        base_sha=s.base_sha,
                        end_sha=s.end_sha,
                        gold_patch=s.gold_patch,
                    )
                )


def _prose(body: dict) -> dict:
    return {"content": "Extend the calculator in calc/ops.py with one more everyday operation."}


def test_a_budget_stops_a_multi_worker_build_within_one_call_and_resumes(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    _copies(engine, insert_chain(engine, tmp_path / "calc"), 5)  # 18 queries, 6 overviews
    fake_llm.push(model="query_constructor", responder=_prose, times=None)
    fake_llm.push(model="overview", content=OVERVIEW, times=None)
    limit = 6_000
    # No cache: the copies ask identical questions, and every call should be a paid one here.
    config = make_test_llm_config(budget_tokens=limit, workers=4, cache=False)
    with pytest.raises(BudgetExhausted, match="budget reached") as stopped:
        run_queries(_config(), engine, workers=4, client=LLMClient(config, engine))
    with Session(engine) as session:
        sizes = [
            p + c
            for p, c in session.execute(select(LLMCall.prompt_tokens, LLMCall.completion_tokens))
        ]
    assert "spent" in str(stopped.value) and sum(sizes) > limit / 2
    assert sum(sizes) <= limit + max(sizes)  # stopped within one call of the limit
    written = sum(1 for s in _stages(engine) if s.query)
    assert 0 < written < 18
    # Resumable: the same build without a budget writes only what is missing.
    summary = run_queries(_config(), engine, workers=4)
    assert summary.stages_skipped == written and all(s.query for s in _stages(engine))


def test_dry_run_prints_calls_tokens_and_cost_without_calling(
    fake_llm: ScriptedLLMServer, sqlite_url: str, tmp_path: Path
) -> None:
    engine = make_engine(sqlite_url)
    insert_chain(engine, tmp_path / "calc")
    args = ["queries", "build", "--db", sqlite_url, "--dry-run"]
    args += ["--set", "llm.prices={'*': {prompt_per_million: 1000, completion_per_million: 2000}}"]
    result = CliRunner().invoke(main, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "query_constructor" in result.output and "overview" in result.output
    assert "prompts measured" in result.output and "total" in result.output
    assert fake_llm.requests == []
    with Session(engine) as session:
        assert session.scalar(select(func.count()).select_from(LLMCall)) == 0


def test_budget_flags_reach_the_config_and_stop_the_cli_cleanly(
    fake_llm: ScriptedLLMServer, sqlite_url: str, tmp_path: Path
) -> None:
    engine = make_engine(sqlite_url)
    insert_chain(engine, tmp_path / "calc")
    _script_clean_chain(fake_llm)
    args = ["queries", "build", "--db", sqlite_url, "--budget-tokens", "10"]
    args += ["--set", "llm.models.query_constructor=query_constructor"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and "budget reached" in result.output
    assert "rerun" in result.output and fake_llm.requests == []
