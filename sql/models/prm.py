"""Every invocation of the process reward model during a rollout."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from sql.models.base import Base, utcnow


class PRMCall(Base):
    __tablename__ = "prm_calls"

    id: Mapped[int] = mapped_column(primary_key=True)
    rollout_id: Mapped[int] = mapped_column(ForeignKey("rollouts.id", ondelete="CASCADE"), index=True)
    stage_idx: Mapped[int]
    step_idx: Mapped[int]  # agent step count at invocation
    variant: Mapped[str] = mapped_column(String(10))
    window: Mapped[list[Any]] = mapped_column(default=list)  # the serialized last-k steps
    verdict: Mapped[dict[str, Any] | None]
    task_status: Mapped[str | None] = mapped_column(String(30))  # on_track | needs_correction | critical
    status: Mapped[str] = mapped_column(String(20), default="ok")  # ok | invalid_output
    prompt_tokens: Mapped[int] = mapped_column(default=0)
    completion_tokens: Mapped[int] = mapped_column(default=0)
    cost_usd: Mapped[float] = mapped_column(default=0.0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
