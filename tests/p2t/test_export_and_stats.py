"""Curated trajectories in the export (marked by source, refused when they show oracle text) and
the Figure-2 comparison against plain rollouts of the same stage; real store, no containers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from prchain.app.views import export_trajectories
from prchain.p2t.stats import cliffs_delta, compare, mann_whitney_p
from prchain.store.db import session_scope
from prchain.store.models import (
    Chain,
    ChainStage,
    P2TGraph,
    PullRequest,
    Repo,
    Rollout,
    RolloutStage,
    Step,
)

GOLD = (
    "diff --git a/calc/ops.py b/calc/ops.py\n--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1 +1,2 @@\n"
    " x = 1\n+y = 2\n"
    "diff --git a/tests/test_ops.py b/tests/test_ops.py\n--- a/tests/test_ops.py\n+++ b/tests/test_ops.py\n"
    "@@ -1 +1,3 @@\n import calc\n+def test_hidden_behaviour():\n+    assert calc\n"
)
STATEMENT = "calc/ops.py defines x and nothing else at all"


def call(name: str, **args: Any) -> dict[str, Any]:
    return {
        "id": f"c{len(json.dumps(args))}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def conversation(commands: list[str], views: int = 0) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a developer."},
        {"role": "user", "content": "Add y."},
    ]
    steps = [call("str_replace_editor", command="view", path="calc/ops.py")] * views
    steps += [call("bash", command=c) for c in commands]
    for c in steps:
        messages.append({"role": "assistant", "content": "Next.", "tool_calls": [c]})
        messages.append(
            {
                "role": "tool",
                "tool_call_id": c["id"],
                "name": c["function"]["name"],
                "content": "ok",
            }
        )
    return messages


def seed(engine: Engine, runs: dict[str, list[dict[str, Any]]]) -> None:
    with session_scope(engine) as session:
        repo = Repo(full_name="acme/calc", source="git", default_branch="main")
        session.add(repo)
        session.flush()
        chain = Chain(repo_id=repo.id, strategy="single", signature="1", length=1)
        pr = PullRequest(repo_id=repo.id, number=1, title="y", source="git", patch_status="ok")
        session.add_all([chain, pr])
        session.flush()
        session.add(
            ChainStage(chain_id=chain.id, idx=1, pr_id=pr.id, gold_patch=GOLD, query="Add y.")
        )
        node = {
            "id": "f1",
            "node_type": "fact",
            "statement": STATEMENT,
            "unlocker": {"action": "VIEW calc/ops.py", "observation": "x = 1"},
        }
        session.add(P2TGraph(chain_id=chain.id, stage_idx=1, graph={"nodes": [node], "edges": []}))
        for source, messages in runs.items():
            rollout = Rollout(
                chain_id=chain.id,
                source=source.split("-")[0],
                status="kept",
                conflict_policy="strict",
                kept_stages=1,
            )
            session.add(rollout)
            session.flush()
            session.add(
                RolloutStage(rollout_id=rollout.id, stage_idx=1, status="passed", score=1.0)
            )
            for i, m in enumerate(messages):
                kind = {"system": "system", "user": "query"}.get(m["role"], m["role"])
                session.add(Step(rollout_id=rollout.id, stage_idx=1, idx=i, kind=kind, message=m))


def test_curated_trajectories_are_marked_and_refused_when_they_show_oracle_text(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    seed(
        sqlite_engine,
        {
            "agent": conversation(
                ["grep -rn test_hidden_behaviour ."]
            ),  # a plain rollout may say anything
            "p2t": conversation(["ls"]),
            "p2t-leak-test": conversation(["pytest -k test_hidden_behaviour"]),
            "p2t-leak-graph": conversation([f"echo '{STATEMENT}'"]),
        },
    )
    out = tmp_path / "sft.jsonl"
    summary = export_trajectories(sqlite_engine, out, min_score=0.8, keep="all")
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["metadata"]["source"] for r in records] == ["agent", "p2t"]
    assert summary.skipped == {
        "a message shows oracle text (hidden test name or graph statement)": 2
    }


def test_figure_2_comparison_on_paired_stages(sqlite_engine: Engine) -> None:
    seed(
        sqlite_engine,
        {
            "agent": conversation(["ls", "ls -a", "pwd"], views=3),
            "p2t": conversation(["ls"], views=1),
        },
    )
    rows, extra = compare(sqlite_engine)
    by = {r.quantity: r for r in rows}
    assert by["steps"].pairs == 1
    assert (by["steps"].plain_mean, by["steps"].p2t_mean) == (6.0, 2.0)
    assert by["steps"].shift == pytest.approx(-2 / 3)
    assert by["redundant_view_fraction"].plain_mean == pytest.approx(2 / 3)
    assert by["redundant_view_fraction"].p2t_mean == 0.0
    assert extra["curated_stages"] == 1 and extra["plain_stages"] == 1


def test_rank_statistics() -> None:
    assert cliffs_delta([3, 4, 5], [1, 2]) == 1.0
    assert cliffs_delta([1, 2], [1, 2]) == 0.0
    assert mann_whitney_p([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert mann_whitney_p(list(range(20)), list(range(100, 120))) < 1e-4
