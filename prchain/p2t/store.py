"""Reading and writing P2T rows: graphs per chain stage, and per-stage curation records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.p2t.graph import ISSUE_ACTION, ProcessGraph
from prchain.p2t.patches import split_patch, test_names
from prchain.p2t.reverse import ReverseResult
from prchain.store import rollouts as stored
from prchain.store.db import session_scope, upsert
from prchain.store.models import P2TGraph, P2TStage
from prchain.store.models.base import utcnow
from prchain.store.rollouts import RolloutRow, Rollouts, StepRow


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


def windows_json(windows: Sequence[Any]) -> list[dict[str, Any]]:
    return [asdict(w) for w in windows]


IN_PROGRESS = "in progress"  # the reason of a p2t_stages row whose stage is still being curated


def save_checkpoint(
    session: Session,
    rollout_id: int,
    stage_idx: int,
    *,
    graph_id: int,
    windows: list[dict[str, Any]],
    established: list[str],
    steps: int,
    response_tokens: int,
    stage_diff: str,
) -> None:
    """After a window: its record so far, and the stage diff its committed steps left in the
    sandbox on the stage row, in the caller's transaction so both move together."""
    row = {
        "rollout_id": rollout_id,
        "stage_idx": stage_idx,
        "graph_id": graph_id,
        "admitted": False,
        "reason": IN_PROGRESS,
        "established": established,
        "windows": windows,
        "steps": steps,
        "response_tokens": response_tokens,
        "created_at": utcnow(),
    }
    upsert(session, P2TStage, [row], ["rollout_id", "stage_idx"])
    stored.set_stage_diff(session, rollout_id, stage_idx, stage_diff)


def open_curation(engine: Engine, chain_id: int) -> RolloutRow | None:
    """The chain's newest curation that is still running (a killed one, to resume)."""
    return Rollouts(engine).running_curation(chain_id)


def load_checkpoint_row(engine: Engine, rollout_id: int, stage_idx: int) -> P2TStage | None:
    """The in-progress record of a stage with at least one committed window, if any."""
    with session_scope(engine) as session:
        row = session.scalars(
            select(P2TStage).filter_by(rollout_id=rollout_id, stage_idx=stage_idx)
        ).first()
        return row if row is not None and row.reason == IN_PROGRESS and row.windows else None


def trim_steps(
    engine: Engine, rollout_id: int, stage_idx: int, *, opening: int, assistant_steps: int
) -> list[StepRow]:
    """Keep the stage's opening messages and its first `assistant_steps` committed steps (each an
    assistant message and its tool results); drop what was written after the last checkpoint.
    Returns every kept step of the rollout, in order."""
    with session_scope(engine) as session:
        stage_steps = stored.steps(session, rollout_id, stage_idx=stage_idx)
        seen, cut = 0, len(stage_steps)
        for i, step in enumerate(stage_steps[opening:], opening):
            if step.message.get("role") == "assistant":
                seen += 1
                if seen > assistant_steps:
                    cut = i
                    break
        extra = [s.idx for s in stage_steps[cut:]]
        if extra:
            stored.drop_steps(session, rollout_id, extra)
        return stored.steps(session, rollout_id)


STATEMENT_MIN_CHARS = 20  # shorter statements could match ordinary text by chance


def oracle_strings(session: Any, rollout: Any) -> list[str]:
    """What a curated trajectory's messages must never show: graph statements and the names of
    tests the stage's hidden test patch adds. Plain rollouts never saw either."""
    if getattr(rollout, "source", "agent") != "p2t":
        return []
    from prchain.store.models import ChainStage  # the store's tables, read in the caller's session

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
