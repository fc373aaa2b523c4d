"""Every LLM call, costed, and the response cache that makes reruns free."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from prchain.store.models.base import Base, utcnow


class LLMCall(Base):
    __tablename__ = "llm_calls"

    id: Mapped[int] = mapped_column(primary_key=True)
    role: Mapped[str] = mapped_column(String(40), index=True)
    model: Mapped[str] = mapped_column(String(200))
    prompt_tokens: Mapped[int] = mapped_column(default=0)
    completion_tokens: Mapped[int] = mapped_column(default=0)
    latency_ms: Mapped[float] = mapped_column(default=0.0)
    cost_usd: Mapped[float] = mapped_column(default=0.0)
    cache_key: Mapped[str] = mapped_column(String(64), index=True)
    cached: Mapped[bool] = mapped_column(default=False)
    status: Mapped[str] = mapped_column(String(20), default="ok")  # ok | error
    error: Mapped[str | None] = mapped_column(Text)
    rollout_id: Mapped[int | None] = mapped_column(index=True)
    # Budgets read the spend since a run started from here, so every process sees the same total.
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class LLMRepair(Base):
    """A reply whose format was repaired instead of rejected (one row per repair)."""

    __tablename__ = "llm_repairs"

    id: Mapped[int] = mapped_column(primary_key=True)
    role: Mapped[str] = mapped_column(String(40), index=True)
    kind: Mapped[str] = mapped_column(String(40))  # a prchain.llm.repairs.RepairKind value
    detail: Mapped[str | None] = mapped_column(Text)
    rollout_id: Mapped[int | None] = mapped_column(index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class LLMCacheEntry(Base):
    """A stored reply. Only `valid` ones are replayed; a reply its role's parser refused is kept
    with the reason, for diagnosis, and replaced by the next reply to the same request."""

    __tablename__ = "llm_cache"

    cache_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    role: Mapped[str] = mapped_column(String(40))
    model: Mapped[str] = mapped_column(String(200))
    response: Mapped[dict[str, Any]]
    valid: Mapped[bool] = mapped_column(default=True)
    error: Mapped[str | None] = mapped_column(Text)  # why the parser refused it (when not valid)
    scrubbed_chars: Mapped[int] = mapped_column(default=0)  # NUL/surrogates replaced to store it
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
