"""The query constructor end to end: real PRs from a git repo, real openai client, scripted server."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.app.config import Config
from prchain.chains.writers.queries import QuerySummary, build_queries, query_stats
from prchain.cli import main
from prchain.core.errors import LLMUnavailable, NothingToDo
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import make_chain_repo
from prchain.llm.client import LLMClient
from prchain.store.db import session_scope
from prchain.store.models import Chain, ChainStage, LLMCall, PullRequest, Repo
from prchain.store.opener import make_engine
from tests.support.llm_fixtures import make_test_llm_config

BODIES = {
    1: "Users asked for subtraction.\n\n<!-- Describe your change -->\n## Checklist\n- [x] tests added\n",
    2: "Follow-up to #1, built on top of it: the calculator also needs products.",
    3: "Fixes #2 by completing the arithmetic set on top of it. ![screenshot](https://example.com/a.png)",
}
CLEAN = {
    1: "The calculator should support taking one number away from another; add this to calc/ops.py.",
    2: "Extend the arithmetic helpers in calc/ops.py so two numbers can be combined into their product.",
    3: "Complete the arithmetic set in calc/ops.py with a quotient operation that refuses a zero denominator.",
}
OVERVIEW = "Over three changes the calculator in calc/ops.py grows from addition to the four basic operations."


def _title(number: int) -> str:
    return {1: "Add subtract operation", 2: "Add multiply operation", 3: "Add divide operation"}[
        number
    ]


def insert_chain(
    engine: Engine,
    repo_path: Path,
    numbers: tuple[int, ...] = (1, 2, 3),
    strategy: str = "semantic",
) -> int:
    """A chain over real PRs of `make_chain_repo`, written the way `chains build` writes it."""
    chain_repo = make_chain_repo(repo_path)
    with session_scope(engine) as session:
        repo = session.scalar(select(Repo).where(Repo.full_name == "acme/calc"))
        if repo is None:
            repo = Repo(full_name="acme/calc", source="git", clone_path=str(repo_path))
            session.add(repo)
            session.flush()
        pr_ids = []
        for number in numbers:
            info = chain_repo.prs[number]
            # A second chain in the same repo gets its own PR rows (numbers must stay unique).
            offset = 0 if strategy == "semantic" else 1000
            pr = PullRequest(
                repo_id=repo.id,
                number=number + offset,
                title=info.title,
                body=BODIES[number],
                source="git",
                base_sha=info.base_sha,
                merge_commit_sha=info.merge_sha,
                patch_status="ok",
            )
            session.add(pr)
            session.flush()
            pr_ids.append((pr.id, info))
        chain = Chain(
            repo_id=repo.id,
            strategy=strategy,
            signature="-".join(str(i) for i, _ in pr_ids),
            length=len(pr_ids),
        )
        session.add(chain)
        session.flush()
        for idx, (pr_id, info) in enumerate(pr_ids, 1):
            session.add(
                ChainStage(
                    chain_id=chain.id,
                    idx=idx,
                    pr_id=pr_id,
                    base_sha=info.base_sha,
                    end_sha=info.merge_sha,
                    gold_patch=info.gold_patch,
                )
            )
        return chain.id


def _config(**llm: object) -> Config:
    return Config(llm=make_test_llm_config(**llm))


def run_queries(
    config: Config,
    engine: Engine,
    *,
    workers: int = 1,
    chain_ids: list[int] | None = None,
    client: LLMClient | None = None,
) -> QuerySummary:
    client = client or LLMClient(config.llm.model_copy(update={"workers": workers}), engine)
    return build_queries(config.chains, engine, client, workers=workers, chain_ids=chain_ids)


def _stages(engine: Engine) -> list[ChainStage]:
    with Session(engine) as session:
        return list(
            session.scalars(select(ChainStage).order_by(ChainStage.chain_id, ChainStage.idx))
        )


def _script_clean_chain(server: ScriptedLLMServer) -> None:
    for number in (1, 2, 3):
        server.push(
            model="query_constructor",
            contains=f"Pull request title: {_title(number)}",
            content=CLEAN[number],
        )
    server.push(model="overview", content=OVERVIEW)


def test_every_stage_gets_a_query_and_a_rerun_makes_no_calls(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    chain_id = insert_chain(engine, tmp_path / "calc")
    _script_clean_chain(fake_llm)
    summary = run_queries(_config(), engine, workers=2)
    assert [s.query for s in _stages(engine)] == [CLEAN[1], CLEAN[2], CLEAN[3]]
    assert (summary.stages_done, summary.overviews, summary.leakage_rate, summary.llm_calls) == (
        3,
        1,
        0.0,
        4,
    )
    assert summary.usage.cost_usd > 0 and not summary.failures
    with Session(engine) as session:
        assert session.get_one(Chain, chain_id).overview == OVERVIEW
        assert len(session.scalars(select(LLMCall)).all()) == 4
    # The prompt carries the cleaned body, the patch and the chain context.
    stage3 = next(
        r for r in fake_llm.requests if "Add divide operation" in r["messages"][0]["content"]
    )["messages"][0]["content"]
    assert (
        "stage 3 of a chain of 3" in stage3
        and "- Add subtract operation" in stage3
        and "+def divide" in stage3
    )
    assert "https://" not in stage3 and "screenshot" not in stage3
    stage1 = fake_llm.requests[0]["messages"][0]["content"]
    assert "<!--" not in stage1 and "[x]" not in stage1
    before = len(fake_llm.requests)
    again = run_queries(_config(), engine, workers=2)
    assert (again.stages_done, again.stages_skipped, again.llm_calls, again.usage.cached_calls) == (
        0,
        3,
        0,
        0,
    )
    assert len(fake_llm.requests) == before


def test_a_leaking_query_is_regenerated_until_clean(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    insert_chain(engine, tmp_path / "calc")
    fake_llm.push(
        model="query_constructor",
        contains="Add multiply operation",
        content="Add a multiply helper to calc/ops.py that returns the product of two numbers.",
    )
    fake_llm.push(
        model="query_constructor",
        contains="attempt 2 of 4",
        content="Mention multiply again, still leaking.",
    )
    _script_clean_chain(fake_llm)  # the third multiply-stage reply is the clean one
    fake_llm.push(model="query_constructor", contains="attempt 3 of 4", content=CLEAN[2])
    summary = run_queries(_config(), engine)
    stage2 = _stages(engine)[1]
    assert (stage2.query, stage2.query_attempts, stage2.query_leaks) == (CLEAN[2], 3, [])
    assert (
        summary.regenerated == 1
        and summary.leakage_rate == 0.0
        and summary.initial_leakage_rate == pytest.approx(1 / 3)
    )
    feedback = [
        r["messages"][-1]["content"]
        for r in fake_llm.requests
        if "attempt 3 of 4" in r["messages"][-1]["content"]
    ]
    assert feedback and "multiply" in feedback[0]
    assert not [rule for rule in fake_llm.pending() if rule.contains and "attempt" in rule.contains]


def test_a_query_leaking_after_every_attempt_is_kept_with_its_leaks(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    insert_chain(engine, tmp_path / "calc", numbers=(1, 2))
    fake_llm.push(
        model="query_constructor",
        contains="Add subtract operation",
        content="Write subtract in calc/ops.py.",
        times=None,
    )
    fake_llm.push(
        model="query_constructor",
        contains="subtract",
        content="Write subtract in calc/ops.py.",
        times=None,
    )
    fake_llm.push(model="query_constructor", contains="Add multiply operation", content=CLEAN[2])
    fake_llm.push(model="overview", content=OVERVIEW)
    config = _config()
    config.chains.query_max_attempts = 2
    summary = run_queries(config, engine)
    stage1 = _stages(engine)[0]
    assert stage1.query_attempts == 2 and stage1.query_leaks == ["subtract"]
    assert summary.leaked == 1 and summary.leakage_rate == 0.5


def test_overview_leaks_count_against_stage_one(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    insert_chain(engine, tmp_path / "calc")
    for number in (1, 2, 3):
        fake_llm.push(
            model="query_constructor",
            contains=f"Pull request title: {_title(number)}",
            content=CLEAN[number],
        )
    fake_llm.push(
        model="overview", content="The chain ends with divide in calc/ops.py.", times=None
    )
    config = _config()
    config.chains.query_max_attempts = 2
    summary = run_queries(config, engine)
    assert _stages(engine)[0].query_leaks == ["divide"]
    assert summary.leaked == 1 and summary.overviews == 1


def test_malformed_replies_are_retried_then_the_stage_is_reported_failed(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    insert_chain(engine, tmp_path / "calc")
    fake_llm.push(
        model="query_constructor",
        contains="Pull request title: Add subtract operation",
        content="```python\ndef subtract(a, b): ...\n```",
    )
    fake_llm.push(model="query_constructor", contains="contains code", content=CLEAN[1])
    fake_llm.push(
        model="query_constructor",
        contains="Add multiply operation",
        content="See https://example.org/multiply for it.",
    )
    fake_llm.push(
        model="query_constructor",
        contains="contains a URL",
        content="Follow https://example.org/multiply.",
        times=None,
    )
    fake_llm.push(
        model="query_constructor",
        contains="Pull request title: Add divide operation",
        content=CLEAN[3],
    )
    fake_llm.push(model="overview", content=OVERVIEW)
    summary = run_queries(_config(), engine)
    assert [s.query for s in _stages(engine)] == [CLEAN[1], None, CLEAN[3]]
    assert summary.stages_done == 2 and summary.stages_failed == 1
    assert "stage 2" in summary.failures[0] and "URL" in summary.failures[0]


def test_only_the_chosen_chains_are_built(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    insert_chain(engine, tmp_path / "calc")
    other = insert_chain(engine, tmp_path / "calc2", numbers=(2,), strategy="single")
    fake_llm.push(model="query_constructor", content=CLEAN[2])
    summary = run_queries(_config(), engine, chain_ids=[other])
    assert summary.stages_done == 1 and summary.overviews == 0  # a one-PR chain needs no overview
    assert [s.query for s in _stages(engine)] == [None, None, None, CLEAN[2]]


def test_a_dead_server_stops_the_run_and_keeps_finished_stages(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    insert_chain(engine, tmp_path / "calc")
    fake_llm.push(
        model="query_constructor",
        contains="Pull request title: Add subtract operation",
        content=CLEAN[1],
    )
    fake_llm.push(model="query_constructor", status=500, times=None)
    with pytest.raises(LLMUnavailable):
        run_queries(_config(), engine, client=LLMClient(make_test_llm_config(), engine))
    assert [s.query for s in _stages(engine)] == [CLEAN[1], None, None]


def test_nothing_to_do_without_chains(engine: Engine) -> None:
    with pytest.raises(NothingToDo, match="no chain stages"):
        run_queries(_config(), engine)


def test_cli_builds_queries_and_prints_the_summary(
    fake_llm: ScriptedLLMServer, sqlite_url: str, tmp_path: Path
) -> None:
    engine = make_engine(sqlite_url)
    insert_chain(engine, tmp_path / "calc")
    _script_clean_chain(fake_llm)
    args = ["queries", "build", "--db", sqlite_url, "--workers", "2"]
    for role in ("query_constructor", "overview"):
        args += [
            "--set",
            f"llm.models.{role}={role}",
            "--set",
            f"llm.prices.{role}={{prompt_per_million: 1}}",
        ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert (
        "stages written" in result.output and "0.0%" in result.output and "4 / 0" in result.output
    )
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and "0 / 0" in again.output
    assert len(fake_llm.requests) == 4


def test_query_stats_report_the_final_leakage_rate(
    fake_llm: ScriptedLLMServer, engine: Engine, tmp_path: Path
) -> None:
    insert_chain(engine, tmp_path / "calc")
    _script_clean_chain(fake_llm)
    run_queries(_config(), engine)
    with Session(engine) as session:
        assert query_stats(session) == {
            "queries": 3,
            "queries_leaking": 0,
            "query_leakage_rate": 0.0,
            "overviews": 1,
        }
