"""Whole chains through real containers, the real openai client and the scripted LLM server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from prchain.agent.runner import ChainRunner
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.store.models import EnvTransition, Judgement, LLMCall, Rollout, RolloutStage, Step
from tests.agent.conftest import bash, edit, seed_chain, submit, verdict

pytestmark = pytest.mark.docker

BUGGY = "    return a + b\n\n\ndef subtract(x, y):\n    return x + y\n"
FIX_OLD, FIX_NEW = "    return x + y\n", '    """Difference of x and y."""\n    return x - y\n'
COMMENT_1 = "subtract adds its two arguments instead of taking the second away from the first."
MULTIPLY = "\n\ndef multiply(x, y):\n    product = x * y\n    return product\n"


def script_happy_chain(fake_llm: ScriptedLLMServer) -> None:
    """Stage 1: buggy subtract, judged 0.5, fixed after the feedback, judged 0.9. Stage 2: multiply, 0.95."""
    fake_llm.push(model="policy", tool_calls=bash("cat calc/ops.py"))
    fake_llm.push(
        model="policy",
        tool_calls=edit(
            command="str_replace", path="calc/ops.py", old_str="    return a + b\n", new_str=BUGGY
        ),
    )
    fake_llm.push(model="policy", tool_calls=submit("added subtract"))
    fake_llm.push(
        model="policy",
        contains=COMMENT_1,
        tool_calls=edit(
            command="str_replace", path="calc/ops.py", old_str=FIX_OLD, new_str=FIX_NEW
        ),
    )
    fake_llm.push(model="policy", contains="has been edited", tool_calls=submit("fixed subtract"))
    fake_llm.push(
        model="policy",
        contains="Task 2 of 2",
        tool_calls=bash("cat calc/ops.py; git status --short"),
    )
    fake_llm.push(
        model="policy",
        tool_calls=edit(command="insert", path="calc/ops.py", insert_line=8, new_str=MULTIPLY),
    )
    fake_llm.push(model="policy", tool_calls=submit("added multiply"))
    fake_llm.push(model="judge", content=verdict(0.5, COMMENT_1))
    fake_llm.push(model="judge", content=verdict(0.9, "Equivalent to the reference; acceptable."))
    fake_llm.push(model="judge", content=verdict(0.95, "multiply behaves like the reference."))


def run_happy_chain(
    fake_llm: ScriptedLLMServer,
    url: str,
    root: Path,
    make_runner: Callable[..., ChainRunner],
    engine: Engine,
) -> int:
    seeded = seed_chain(url, root)
    script_happy_chain(fake_llm)
    result = make_runner(engine).run(seeded.chain_id)
    assert (result.status, result.kept_stages, result.scores) == ("kept", 2, [0.9, 0.95]), (
        result.reason
    )
    assert fake_llm.pending() == []
    return result.rollout_id


def test_feedback_refines_stage_one_and_stage_two_starts_from_the_carried_patch(
    fake_llm: ScriptedLLMServer,
    db_url: str,
    engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    rollout_id = run_happy_chain(fake_llm, db_url, tmp_path, make_runner, engine)

    policy = fake_llm.requests_for("policy")
    feedback = policy[3]["messages"][-1]
    assert feedback["role"] == "user" and COMMENT_1 in feedback["content"]
    assert not any(COMMENT_1 in str(m.get("content")) for r in policy[:3] for m in r["messages"])
    assert policy[0]["tools"] and {t["function"]["name"] for t in policy[0]["tools"]} == {
        "bash",
        "str_replace_editor",
        "submit",
    }

    with Session(engine) as session:
        steps = list(
            session.scalars(select(Step).filter_by(rollout_id=rollout_id).order_by(Step.idx))
        )
        judgements = [
            (j.stage_idx, j.round, j.score, j.passed)
            for j in session.scalars(
                select(Judgement).order_by(Judgement.stage_idx, Judgement.round)
            )
        ]
        stages = list(session.scalars(select(RolloutStage).order_by(RolloutStage.stage_idx)))
        transitions = list(session.scalars(select(EnvTransition).order_by(EnvTransition.stage_idx)))
        rollout = session.get(Rollout, rollout_id)
        call_cost = session.scalar(
            select(func.sum(LLMCall.cost_usd)).filter_by(rollout_id=rollout_id)
        )
        roles = dict(
            session.execute(
                select(LLMCall.role, func.count())
                .filter_by(rollout_id=rollout_id)
                .group_by(LLMCall.role)
            ).all()
        )

    assert judgements == [(1, 0, 0.5, False), (1, 1, 0.9, True), (2, 0, 0.95, True)]
    assert [s.idx for s in steps] == list(range(len(steps)))
    kinds = [s.kind for s in steps]
    assert (
        kinds[:2] == ["system", "query"]
        and kinds.count("feedback") == 1
        and kinds.count("query") == 2
    )
    # Stage 2 began at B_2 with g_1 reverted and the agent's own subtract carried over: read in the container.
    first_look = next(s for s in steps if s.stage_idx == 2 and s.kind == "tool").observation or ""
    assert "return x - y" in first_look and "Difference of x and y" in first_look
    assert "return a - b" not in first_look and "multiply" not in first_look
    assert (transitions[1].reverted, transitions[1].applied, transitions[1].outcome) == (
        [1],
        True,
        "clean",
    )
    assert "+def multiply" in stages[1].stage_diff and "+def subtract" not in stages[1].stage_diff
    assert (
        "+def multiply" in stages[1].cumulative_diff
        and "+def subtract" in stages[1].cumulative_diff
    )
    assert [s.status for s in stages] == ["passed", "passed"] and [s.rounds for s in stages] == [
        1,
        0,
    ]
    # Every LLM call is recorded against the rollout and costed.
    assert roles == {"policy": 8, "judge": 3}
    assert (
        rollout is not None
        and rollout.status == "kept"
        and rollout.tool_calls == 8
        and rollout.agent_steps == 8
    )
    assert rollout.cost_usd == pytest.approx(call_cost) and rollout.cost_usd > 0
    assert make_url(rollout.config["store"]["url"]).password in (
        None,
        "***",
    )  # no database password stored


def test_a_chain_that_never_reaches_the_threshold_is_rejected_after_three_refinements(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    seeded = seed_chain(str(sqlite_engine.url), tmp_path)
    fake_llm.push(model="policy", tool_calls=bash("echo '# tried' >> calc/ops.py"))
    fake_llm.push(model="policy", tool_calls=submit("tried"), times=None)
    fake_llm.push(
        model="judge",
        content=verdict(0.3, "No subtraction operation was added at all."),
        times=None,
    )
    result = make_runner(sqlite_engine).run(seeded.chain_id)

    assert result.status == "rejected" and result.kept_stages == 0
    assert "after 3 refinements" in (result.reason or "")
    with Session(sqlite_engine) as session:
        rounds = [
            (j.round, j.passed)
            for j in session.scalars(select(Judgement).order_by(Judgement.round))
        ]
        kinds = list(session.scalars(select(Step.kind).order_by(Step.idx)))
        stage_rows = list(session.scalars(select(RolloutStage)))
        rollout = session.get(Rollout, result.rollout_id)
    assert rounds == [(0, False), (1, False), (2, False), (3, False)]
    assert kinds.count("feedback") == 3 and kinds.count("query") == 1  # stage 2 never started
    assert [(s.stage_idx, s.status, s.score) for s in stage_rows] == [(1, "failed", 0.3)]
    assert (
        rollout is not None
        and rollout.status == "rejected"
        and "after 3 refinements" in (rollout.reason or "")
    )
    # The same diff is judged four times: one request to the server, three replays from the cache.
    with Session(sqlite_engine) as session:
        judge_calls = [
            c.cached
            for c in session.scalars(select(LLMCall).filter_by(role="judge").order_by(LLMCall.id))
        ]
    assert judge_calls == [False, True, True, True] and len(fake_llm.requests_for("judge")) == 1


def test_a_finished_chain_is_not_rolled_out_again(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    rollout_id = run_happy_chain(
        fake_llm, str(sqlite_engine.url), tmp_path, make_runner, sqlite_engine
    )
    with Session(sqlite_engine) as session:
        chain_id = session.get(Rollout, rollout_id).chain_id  # type: ignore[union-attr]
        before = session.scalar(select(func.count()).select_from(Step))
    again = make_runner(sqlite_engine).run(chain_id)
    # its stored final state, marked as found finished by an earlier attempt
    assert (again.status, again.rollout_id, again.retried) == ("kept", rollout_id, True)
    assert again.kept_stages == 2 and again.scores == [0.9, 0.95]
    with Session(sqlite_engine) as session:
        assert session.scalar(select(func.count()).select_from(Step)) == before


def test_a_strict_conflict_stops_the_chain_with_a_recorded_reason(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    # Chain #1 → #3: B_3 contains the docs PR #4, which rewrote the README line the agent also edits.
    seeded = seed_chain(str(sqlite_engine.url), tmp_path, prs=(1, 3))
    fake_llm.push(model="policy", tool_calls=bash("printf '# Calc tool\\n' > README.md && echo ok"))
    fake_llm.push(model="policy", tool_calls=submit())
    fake_llm.push(model="judge", content=verdict(0.85, "Acceptable."))
    result = make_runner(sqlite_engine, keep_policy="prefix").run(seeded.chain_id)

    with Session(sqlite_engine) as session:
        transitions = [
            (t.stage_idx, t.outcome)
            for t in session.scalars(select(EnvTransition).order_by(EnvTransition.stage_idx))
        ]
        stages = [
            (s.stage_idx, s.status)
            for s in session.scalars(select(RolloutStage).order_by(RolloutStage.stage_idx))
        ]
        queries = list(session.scalars(select(Step).filter_by(kind="query")))
    assert transitions == [(1, "clean"), (2, "conflict_stopped")]
    assert stages == [(1, "passed"), (2, "stopped")] and len(queries) == 1
    assert (
        result.status == "kept" and result.kept_stages == 1
    )  # the prefix policy keeps the passing stage
    # Reverting g_1 on B_3 (which also holds PR #2) is what fails here, and the reason says so.
    assert "the gold patch of stage 1 could not be reverted" in (result.reason or "")
