"""Every invocation of the process reward model during a rollout."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from prchain.store.models.base import Base, utcnow


class PRMCall(Base):
    __tablename__ = "prm_calls"
    # One invocation per agent step of a rollout: a resumed rollout overwrites, never duplicates.
    __table_args__ = (UniqueConstraint("rollout_id", "step_idx"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    rollout_id: Mapped[int] = mapped_column(
        ForeignKey("rollouts.id", ondelete="CASCADE"), index=True
    )
    stage_idx: Mapped[int]
    step_idx: Mapped[int]  # agent step count at invocation
    variant: Mapped[str] = mapped_column(String(10))
    model: Mapped[str] = mapped_column(
        String(200), default=""
    )  # the PRM may run on another model than the policy
    window: Mapped[list[Any]] = mapped_column(default=list)  # the serialized last-k steps
    verdict: Mapped[dict[str, Any] | None]
    task_status: Mapped[str | None] = mapped_column(
        String(30)
    )  # on_track | needs_correction | critical
    status: Mapped[str] = mapped_column(String(20), default="ok")  # ok | invalid_output | llm_error
    error: Mapped[str | None] = mapped_column(Text)  # why the last attempt failed (status != ok)
    attempts: Mapped[int] = mapped_column(
        default=1
    )  # requests made, re-asks after malformed replies included
    injected: Mapped[bool] = mapped_column(
        default=False
    )  # whether guidance entered the agent's context
    prompt_tokens: Mapped[int] = mapped_column(default=0)
    completion_tokens: Mapped[int] = mapped_column(default=0)
    cost_usd: Mapped[float] = mapped_column(default=0.0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
