"""Issue 20, finding 6: leaking queries were used. A query that names what the gold patch adds is
not rolled out (its stage stops with that reason), `queries build` exits 1 while any stays, and
`--redo-leaking` writes them again with the leaked names forbidden."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.agent.export import export_trajectories
from prchain.agent.runner import ChainRunner
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.store.db import session_scope
from prchain.store.models import ChainStage, RolloutStage
from prchain.store.opener import make_engine
from tests.agent.conftest import bash, seed_chain, submit, verdict
from tests.chains.test_queries import insert_chain

LEAKY = "Add a multiply function to calc/ops.py returning a times b."
CLEAN = "The calculator in calc/ops.py also needs the product of two numbers."


@pytest.mark.docker
def test_a_stage_whose_query_leaks_is_not_rolled_out(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    seeded = seed_chain(str(sqlite_engine.url), tmp_path)
    with session_scope(sqlite_engine) as session:  # edited by hand: the runner checks it again
        session.scalars(select(ChainStage).filter_by(idx=2)).one().query = LEAKY
    fake_llm.push(
        model="policy",
        tool_calls=bash("printf '\\ndef minus(x, y):\\n    return x - y\\n' >> calc/ops.py"),
    )
    fake_llm.push(model="policy", tool_calls=submit("stage 1"))
    fake_llm.push(model="judge", content=verdict(0.9, "Acceptable."))
    result = make_runner(sqlite_engine, keep_policy="prefix").run(seeded.chain_id)

    assert (result.status, result.kept_stages) == ("kept", 1)
    assert "its query names identifiers the gold patch adds (multiply)" in str(result.reason)
    policy_prompts = str(fake_llm.requests_for("policy"))
    assert "times b" not in policy_prompts  # the leaking query never reached the agent
    with Session(sqlite_engine) as session:
        rows = list(session.scalars(select(RolloutStage).order_by(RolloutStage.stage_idx)))
    assert [(r.stage_idx, r.status) for r in rows] == [(1, "passed"), (2, "stopped")]
    assert "--redo-leaking" in str(rows[1].reason)
    out = tmp_path / "out.jsonl"
    assert export_trajectories(sqlite_engine, out, keep="prefix").written == 1
    assert "times b" not in out.read_text()


def _args(url: str, *extra: str) -> list[str]:
    args = ["queries", "build", "--db", url, *extra, "--set", "chains.query_max_attempts=2"]
    for role in ("query_constructor", "overview"):
        args += ["--set", f"llm.models.{role}={role}"]
    return args


def test_queries_build_exits_1_while_a_query_leaks_and_redo_rewrites_it(
    fake_llm: ScriptedLLMServer, sqlite_url: str, tmp_path: Path
) -> None:
    engine = make_engine(sqlite_url)
    insert_chain(engine, tmp_path / "calc", numbers=(1, 2))
    fake_llm.push(model="overview", content="The calculator grows, one operation at a time.")
    fake_llm.push(
        model="query_constructor",
        contains="title: Add subtract",
        content="Let calc/ops.py take one number from another.",
        times=None,
    )
    fake_llm.push(model="query_constructor", content=LEAKY, times=None)  # every attempt leaks
    first = CliRunner().invoke(main, _args(sqlite_url))
    assert first.exit_code == 1, first.output
    assert "leaking after every attempt: 1 stage" in first.output
    assert "--redo-leaking" in first.output

    fake_llm.reset()
    fake_llm.push(
        model="query_constructor", contains="title: Add multiply", content=CLEAN, times=None
    )
    redo = CliRunner().invoke(main, _args(sqlite_url, "--redo-leaking"))
    assert redo.exit_code == 0, redo.output
    assert "forgot 1 leaking query" in redo.output
    (asked,) = fake_llm.requests_for("query_constructor")
    assert (
        "none of them may appear in yours, in any form: multiply"
        in asked["messages"][-1]["content"]
    )
    with Session(engine) as session:
        stage = session.scalars(select(ChainStage).filter_by(idx=2)).one()
    assert (stage.query, stage.query_leaks) == (CLEAN, [])
