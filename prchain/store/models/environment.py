"""What each stage transition of the sandbox did: reverted, applied, rejected."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from prchain.store.models.base import Base, utcnow


class EnvTransition(Base):
    __tablename__ = "env_transitions"
    __table_args__ = (UniqueConstraint("rollout_id", "stage_idx"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    rollout_id: Mapped[int] = mapped_column(
        ForeignKey("rollouts.id", ondelete="CASCADE"), index=True
    )
    stage_idx: Mapped[int]
    base_sha: Mapped[str] = mapped_column(String(64))
    policy: Mapped[str] = mapped_column(String(20))
    outcome: Mapped[str] = mapped_column(
        String(20)
    )  # clean | conflict_stopped | oracle_reset | partial
    reverted: Mapped[list[Any]] = mapped_column(
        default=list
    )  # gold patches reverted (stage indices)
    applied: Mapped[bool] = mapped_column(default=False)
    rejected_hunks: Mapped[str] = mapped_column(
        Text, default=""
    )  # hunks of Δ_(t-1) that did not apply
    revert_failed: Mapped[list[Any]] = mapped_column(
        default=list
    )  # gold patches that did not revert cleanly
    revert_rejected_hunks: Mapped[str] = mapped_column(Text, default="")
    carried_bytes: Mapped[int] = mapped_column(default=0)  # size of the carried Δ_(t-1)
    # How the stage base was made: revert, or a fallback (propagate, hunks, replay; chain_stages.entry)
    entry: Mapped[str] = mapped_column(String(20), default="revert", server_default="revert")
    stage_base: Mapped[str] = mapped_column(
        String(64), default=""
    )  # what the cumulative diff is taken against
    stage_start: Mapped[str] = mapped_column(
        String(64), default=""
    )  # what the stage diff is taken against
    seconds: Mapped[float] = mapped_column(default=0.0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
