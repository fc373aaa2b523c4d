"""Reading and writing P2T rows: graphs per chain stage, and per-stage curation records."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from sqlalchemy import Engine, select

from prchain.p2t.graph import ISSUE_ACTION, ProcessGraph
from prchain.p2t.patches import split_patch, test_names
from prchain.p2t.reverse import ReverseResult
from sql.db import session_scope, upsert
from sql.models import P2TGraph, P2TStage
from sql.models.base import utcnow


def save_graph(
    engine: Engine, chain_id: int, stage_idx: int, result: ReverseResult, cost: float
) -> int:
    row = {
        "chain_id": chain_id,
        "stage_idx": stage_idx,
        "graph": result.graph.to_dict(),
        "rounds": result.rounds,
        "stop_reason": result.stop_reason,
        "pruned": [
            {
                "id": p.node.id,
                "check": p.check,
                "reason": p.reason,
                "round": p.round,
                "node": p.node.to_dict(),
            }
            for p in result.pruned
        ],
        "feedback": result.feedback,
        "missing_artifacts": result.missing_artifacts,
        "cost_usd": cost,
        "created_at": utcnow(),
    }
    with session_scope(engine) as session:
        upsert(session, P2TGraph, [row], ["chain_id", "stage_idx"])
        graph_id = session.scalar(
            select(P2TGraph.id).filter_by(chain_id=chain_id, stage_idx=stage_idx)
        )
    assert graph_id is not None
    return int(graph_id)


def load_graph_row(engine: Engine, chain_id: int, stage_idx: int) -> P2TGraph | None:
    with session_scope(engine) as session:
        return session.scalars(
            select(P2TGraph).filter_by(chain_id=chain_id, stage_idx=stage_idx)
        ).first()


def load_graph(engine: Engine, chain_id: int, stage_idx: int) -> tuple[int, ProcessGraph] | None:
    row = load_graph_row(engine, chain_id, stage_idx)
    return None if row is None else (row.id, ProcessGraph.from_dict(row.graph))


def save_stage(engine: Engine, rollout_id: int, stage_idx: int, **fields: Any) -> None:
    row = {"rollout_id": rollout_id, "stage_idx": stage_idx, "created_at": utcnow(), **fields}
    with session_scope(engine) as session:
        upsert(session, P2TStage, [row], ["rollout_id", "stage_idx"])


def windows_json(windows: list[Any]) -> list[dict[str, Any]]:
    return [asdict(w) for w in windows]


STATEMENT_MIN_CHARS = 20  # shorter statements could match ordinary text by chance


def oracle_strings(session: Any, rollout: Any) -> list[str]:
    """What a curated trajectory's messages must never show: graph statements and the names of
    tests the stage's hidden test patch adds. Plain rollouts never saw either."""
    if getattr(rollout, "source", "agent") != "p2t":
        return []
    from sql.models import ChainStage  # the store's tables, read in the caller's session

    stages = session.scalars(select(ChainStage).filter_by(chain_id=rollout.chain_id))
    names = [
        n
        for s in stages
        for n in test_names((s.gold_test_patch or "") + split_patch(s.gold_patch)[1])
    ]
    graphs = session.scalars(select(P2TGraph).filter_by(chain_id=rollout.chain_id))
    statements = [
        n["statement"]
        for row in graphs
        for n in row.graph.get("nodes", [])
        if len(n.get("statement", "")) >= STATEMENT_MIN_CHARS
        and not n["unlocker"]["action"].startswith(ISSUE_ACTION)
    ]
    return names + statements
