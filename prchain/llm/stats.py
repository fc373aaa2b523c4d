"""`prchain stats` section: LLM calls and spend per role, the format repairs each role needed, and
the replies each role had refused (format errors, leaking queries, other rejections)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from prchain.llm.calls import REFUSED
from prchain.store.llm_calls import count_by_role_and_status, paid_by_role
from prchain.store.models import LLMRepair


def collect(session: Session) -> dict[str, Any]:
    calls = paid_by_role(session)
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
        "llm_refused_by_role": refused_by_role(session),
    }


def refused_by_role(session: Session) -> dict[str, dict[str, int]]:
    """Per role, replies refused after they arrived: {role: {format_error, leaked, rejected}},
    every status present (0 when none)."""
    out: dict[str, dict[str, int]] = {}
    for role, status, n in count_by_role_and_status(session, REFUSED):
        out.setdefault(role, dict.fromkeys(REFUSED, 0))[status] = n
    return out


def render(data: dict[str, Any]) -> list[Table]:
    """One row per role, numbers only, so 80 columns hold it; the repair kinds go below."""
    refused = data.get("llm_refused_by_role", {})
    kinds_by_role = data["llm_repairs_by_role"]
    kinds = "; ".join(
        f"{role}: " + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
        for role, kinds in sorted(kinds_by_role.items())
    )
    table = Table(
        title="LLM calls per role (paid), format repairs and refused replies",
        box=box.SIMPLE_HEAD,
        caption=f"repairs: {kinds}" if kinds else None,
        collapse_padding=True,
        pad_edge=False,
    )
    table.add_column("role", no_wrap=True)
    for column in ("calls", "tokens", "cost $", "repairs", "fmt err", "leaked", "rejected"):
        table.add_column(column, justify="right", no_wrap=True)
    roles = sorted(set(data["llm_paid_calls_by_role"]) | set(kinds_by_role) | set(refused))
    for role in roles:
        counts = refused.get(role, {})
        table.add_row(
            role,
            str(data["llm_paid_calls_by_role"].get(role, 0)),
            str(data["llm_tokens_by_role"].get(role, 0)),
            f"{data['llm_cost_usd_by_role'].get(role, 0.0):.4f}",
            str(sum(kinds_by_role.get(role, {}).values())),
            *(str(counts.get(status, 0)) for status in REFUSED),
        )
    return [table]
