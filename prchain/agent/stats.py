"""`prchain stats` section: trajectories kept and rejected, judge scores, size and cost of kept ones."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sql.models import Judgement, Rollout, RolloutStage

PAPER_TOKENS = 85_000  # daVinci-Agency: mean tokens per trajectory
PAPER_TOOL_CALLS = 116  # and mean tool calls
SCORE_BINS = ((0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01))


def _bin_key(low: float, high: float) -> str:
    return f"stage_scores_{low:.1f}_{min(high, 1.0):.1f}"


def collect(session: Session) -> dict[str, Any]:
    statuses = dict(
        session.execute(select(Rollout.status, func.count()).group_by(Rollout.status)).all()
    )
    kept = select(
        func.count(),
        func.avg(Rollout.trajectory_tokens),
        func.avg(Rollout.tool_calls),
        func.avg(Rollout.cost_usd),
        func.sum(Rollout.cost_usd),
    ).where(Rollout.status == "kept")
    n_kept, tokens, calls, cost, _ = session.execute(kept).one()
    total_cost = session.scalar(select(func.coalesce(func.sum(Rollout.cost_usd), 0.0))) or 0.0
    scores: list[float] = [s for s in session.scalars(select(RolloutStage.score)) if s is not None]
    data: dict[str, Any] = {
        "trajectories_kept": int(statuses.get("kept", 0)),
        "trajectories_rejected": int(statuses.get("rejected", 0)),
        "trajectories_failed": int(statuses.get("failed", 0)),
        "trajectories_running": int(statuses.get("running", 0)),
        "kept_mean_tokens": round(float(tokens or 0), 1),
        "kept_mean_tool_calls": round(float(calls or 0), 1),
        "kept_mean_cost_usd": round(float(cost or 0), 6),
        "cost_usd_per_kept_trajectory": round(float(total_cost) / n_kept, 6) if n_kept else 0.0,
        "stage_scores_mean": round(sum(scores) / len(scores), 3) if scores else 0.0,
        "judge_calls_needing_retry": int(
            session.scalar(select(func.count()).where(Judgement.attempts > 1)) or 0
        ),
    }
    for low, high in SCORE_BINS:
        data[_bin_key(low, high)] = sum(1 for s in scores if low <= s < high)
    return data


def render(data: dict[str, Any]) -> list[Table]:
    table = Table(title="Trajectories")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("paper", justify="right")
    rows = [
        ("kept", data["trajectories_kept"], ""),
        ("rejected", data["trajectories_rejected"], ""),
        ("failed (infrastructure)", data["trajectories_failed"], ""),
        ("running / resumable", data["trajectories_running"], ""),
        ("mean tokens per kept trajectory", data["kept_mean_tokens"], f"{PAPER_TOKENS:,}"),
        (
            "mean tool calls per kept trajectory",
            data["kept_mean_tool_calls"],
            str(PAPER_TOOL_CALLS),
        ),
        (
            "cost per kept trajectory (USD, all rollouts)",
            f"{data['cost_usd_per_kept_trajectory']:.4f}",
            "",
        ),
        ("mean stage score", data["stage_scores_mean"], ""),
    ]
    for name, value, paper in rows:
        table.add_row(name, str(value), paper)
    scores = Table(title="Judge scores per stage (final round)")
    scores.add_column("score")
    scores.add_column("stages", justify="right")
    for low, high in SCORE_BINS:
        scores.add_row(
            f"[{low:.1f}, {min(high, 1.0):.1f}{']' if high > 1 else ')'}",
            str(data[_bin_key(low, high)]),
        )
    return [table, scores]
