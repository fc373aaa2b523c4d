"""P2T curation: each stage's process graph, and what the forward phase did per curated stage.

Curated trajectories themselves are rollouts (source = p2t) with their steps, so they share the
export and the trajectory views with plain rollouts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from prchain.store.models.base import Base, utcnow


class P2TGraph(Base):
    __tablename__ = "p2t_graphs"
    # One graph per chain stage: rebuilding replaces it.
    __table_args__ = (UniqueConstraint("chain_id", "stage_idx"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    chain_id: Mapped[int] = mapped_column(ForeignKey("chains.id", ondelete="CASCADE"), index=True)
    stage_idx: Mapped[int]
    graph: Mapped[dict[str, Any]] = mapped_column(default=dict)  # {"nodes": [...], "edges": [...]}
    rounds: Mapped[int] = mapped_column(default=0)
    stop_reason: Mapped[str] = mapped_column(String(20), default="")
    pruned: Mapped[list[Any]] = mapped_column(default=list)  # [{id, check, reason, round}]
    feedback: Mapped[list[Any]] = mapped_column(default=list)  # the last round's feedback
    missing_artifacts: Mapped[list[Any]] = mapped_column(default=list)
    cost_usd: Mapped[float] = mapped_column(default=0.0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class P2TStage(Base):
    __tablename__ = "p2t_stages"
    __table_args__ = (UniqueConstraint("rollout_id", "stage_idx"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    rollout_id: Mapped[int] = mapped_column(
        ForeignKey("rollouts.id", ondelete="CASCADE"), index=True
    )
    stage_idx: Mapped[int]
    graph_id: Mapped[int | None] = mapped_column(ForeignKey("p2t_graphs.id", ondelete="SET NULL"))
    admitted: Mapped[bool] = mapped_column(default=False)  # T(p̂) = 1
    reason: Mapped[str] = mapped_column(Text, default="")
    established: Mapped[list[Any]] = mapped_column(default=list)
    coverage: Mapped[float] = mapped_column(default=0.0)  # |established| / |V|
    windows: Mapped[list[Any]] = mapped_column(default=list)  # one entry per window (pool, choice)
    steps: Mapped[int] = mapped_column(default=0)
    response_tokens: Mapped[int] = mapped_column(default=0)
    redundant_view_fraction: Mapped[float] = mapped_column(default=0.0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
