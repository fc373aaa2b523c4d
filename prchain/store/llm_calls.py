"""The llm_calls aggregate: every LLM call's row, written and read here only.

Writers and readers on an engine (`LLMCalls(engine)`, or `store.llm_calls`), and the few readers
that run inside a caller's transaction (they take its session). No module outside `prchain.store`
names the `LLMCall` model (tests/store/test_store_seam.py holds it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from prchain.store.db import session_scope
from prchain.store.models import LLMCall


class History(NamedTuple):
    """A role's paid, successful calls: how many, and their mean prompt and completion tokens."""

    calls: int
    mean_prompt: float
    mean_completion: float


class PaidCall(NamedTuple):
    id: int
    tokens: int  # prompt + completion
    completion_tokens: int
    cost_usd: float


class RoleSpend(NamedTuple):
    role: str
    calls: int
    tokens: int
    cost_usd: float


@dataclass(frozen=True)
class LLMCalls:
    engine: Engine

    def add(self, fields: dict[str, Any]) -> int:
        """Record one call (the columns of `llm_calls` by name); its row id."""
        with session_scope(self.engine) as session:
            row = LLMCall(**fields)
            session.add(row)
            session.flush()
            return int(row.id)

    def mark(self, call_id: int, status: str, error: str | None) -> None:
        """A reply refused after it was recorded: its status and why (no row: nothing)."""
        with session_scope(self.engine) as session:
            row = session.get(LLMCall, call_id)
            if row is not None:
                row.status, row.error = status, error

    def history(self, role: str) -> History:
        """The role's paid (not cached), successful calls."""
        query = select(
            func.count(), func.avg(LLMCall.prompt_tokens), func.avg(LLMCall.completion_tokens)
        ).where(LLMCall.role == role, LLMCall.cached.is_(False), LLMCall.status == "ok")
        with session_scope(self.engine) as session:
            calls, prompt, completion = session.execute(query).one()
        return History(int(calls), float(prompt or 0), float(completion or 0))

    def paid(self, *, since: datetime, after_id: int = 0) -> list[PaidCall]:
        """Paid calls made at `since` or later; with `after_id`, those with a larger id instead
        (a primary-key range scan)."""
        window = LLMCall.created_at >= since if after_id == 0 else LLMCall.id > after_id
        query = select(
            LLMCall.id,
            LLMCall.prompt_tokens + LLMCall.completion_tokens,
            LLMCall.completion_tokens,
            LLMCall.cost_usd,
        ).where(window, LLMCall.cached.is_(False))
        with session_scope(self.engine) as session:
            rows = session.execute(query).all()
        return [
            PaidCall(int(i), int(tokens or 0), int(completion or 0), float(usd or 0))
            for i, tokens, completion, usd in rows
        ]

    def cost_after(self, call_id: int) -> float:
        """USD of every call recorded after `call_id`."""
        query = select(func.coalesce(func.sum(LLMCall.cost_usd), 0.0)).where(LLMCall.id > call_id)
        with session_scope(self.engine) as session:
            return float(session.scalar(query) or 0.0)

    def last_id(self) -> int:
        """The newest call's id (0: none yet)."""
        with session_scope(self.engine) as session:
            return int(session.scalar(select(func.coalesce(func.max(LLMCall.id), 0))) or 0)


def rollout_costs(session: Session, rollout_id: int) -> list[float]:
    """The cost of each call a rollout made (None counts as 0)."""
    costs = session.scalars(select(LLMCall.cost_usd).filter_by(rollout_id=rollout_id))
    return [cost or 0.0 for cost in costs]


def rollout_calls(session: Session, role: str) -> int:
    """How many calls of `role` rollouts made."""
    query = select(func.count()).where(LLMCall.role == role, LLMCall.rollout_id.is_not(None))
    return int(session.scalar(query) or 0)


def paid_by_role(session: Session) -> list[RoleSpend]:
    """Per role: paid calls, their tokens and their cost."""
    rows = session.execute(
        select(
            LLMCall.role,
            func.count(),
            func.coalesce(func.sum(LLMCall.prompt_tokens + LLMCall.completion_tokens), 0),
            func.coalesce(func.sum(LLMCall.cost_usd), 0.0),
        )
        .where(LLMCall.cached.is_(False))
        .group_by(LLMCall.role)
    ).all()
    return [RoleSpend(role, int(n), int(t), float(c)) for role, n, t, c in rows]


def count_by_role_and_status(
    session: Session, statuses: Sequence[str]
) -> list[tuple[str, str, int]]:
    """(role, status, calls) for the calls whose status is one of `statuses`."""
    rows = session.execute(
        select(LLMCall.role, LLMCall.status, func.count())
        .where(LLMCall.status.in_(statuses))
        .group_by(LLMCall.role, LLMCall.status)
    ).all()
    return [(role, status, int(n)) for role, status, n in rows]
