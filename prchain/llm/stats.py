"""`prchain stats` section: LLM calls and spend per role, and the format repairs each role needed."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sql.models import LLMCall, LLMRepair


def collect(session: Session) -> dict[str, Any]:
    calls = session.execute(
        select(
            LLMCall.role,
            func.count(),
            func.coalesce(func.sum(LLMCall.prompt_tokens + LLMCall.completion_tokens), 0),
            func.coalesce(func.sum(LLMCall.cost_usd), 0.0),
        )
        .where(LLMCall.cached.is_(False))
        .group_by(LLMCall.role)
    ).all()
    repairs = session.execute(
        select(LLMRepair.role, LLMRepair.kind, func.count()).group_by(
            LLMRepair.role, LLMRepair.kind
        )
    ).all()
    by_role: dict[str, dict[str, int]] = {}
    for role, kind, n in repairs:
        by_role.setdefault(role, {})[kind] = int(n)
    return {
        "llm_paid_calls_by_role": {role: int(n) for role, n, _, _ in calls},
        "llm_tokens_by_role": {role: int(t) for role, _, t, _ in calls},
        "llm_cost_usd_by_role": {role: round(float(c), 6) for role, _, _, c in calls},
        "llm_repairs_by_role": by_role,
        "llm_repairs": sum(n for kinds in by_role.values() for n in kinds.values()),
    }


def render(data: dict[str, Any]) -> list[Table]:
    table = Table(title="LLM calls per role (paid) and format repairs")
    for column in ("role", "calls", "tokens", "cost $", "repairs"):
        table.add_column(column, justify="left" if column == "role" else "right")
    roles = sorted(set(data["llm_paid_calls_by_role"]) | set(data["llm_repairs_by_role"]))
    for role in roles:
        kinds = data["llm_repairs_by_role"].get(role, {})
        repairs = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) or "0"
        table.add_row(
            role,
            str(data["llm_paid_calls_by_role"].get(role, 0)),
            str(data["llm_tokens_by_role"].get(role, 0)),
            f"{data['llm_cost_usd_by_role'].get(role, 0.0):.4f}",
            repairs,
        )
    return [table]
