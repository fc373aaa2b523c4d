"""`prchain stats` section: SWE-PRM per variant, in the columns of the paper's Table 4.

Keys are flat: `prm.<variant>.<metric>`; rollouts without a PRM appear as variant `base`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from rich.table import Table
from sqlalchemy.orm import Session

from prchain.store.rollouts import by_prm_variant, prm_calls_by_variant

BASE = "base"
SUBOPTIMAL = ("needs_correction", "critical")
TABLE_ORDER = ("S", "C", "CG", "D", "DN", "DG", "DNG", "DR")  # the paper's Table 1 order


def _rollout_rows(session: Session) -> dict[str, dict[str, float]]:
    """Per variant: trajectories, kept, total steps (assistant turns) and total rollout cost."""
    return {
        variant or BASE: {
            "trajectories": n,
            "kept": int(kept or 0),
            "steps": int(total or 0),
            "cost": float(cost or 0),
        }
        for variant, n, kept, total, cost in by_prm_variant(session)
    }


def _call_rows(session: Session) -> dict[str, dict[str, float]]:
    """Per variant of the rollout: PRM calls, windows judged optimal/suboptimal, failures, tokens, cost."""
    names = (
        "calls",
        "optimal",
        "suboptimal",
        "judged",
        "failed",
        "injected",
        "in_tokens",
        "out_tokens",
        "cost",
    )
    return {
        row[0] or BASE: {k: float(v or 0) for k, v in zip(names, row[1:], strict=True)}
        for row in prm_calls_by_variant(session, SUBOPTIMAL)
    }


def _metrics(r: dict[str, float], c: dict[str, float]) -> dict[str, Any]:
    n = r["trajectories"]
    per = (lambda v: v / n) if n else (lambda v: 0.0)
    judged = (
        c.get("judged", 0) > 0
    )  # S never judges a window: its optimal/suboptimal columns stay empty
    return {
        "trajectories": int(n),
        "acceptance_rate": per(r["kept"]),
        "mean_steps": per(r["steps"]),
        "invocations_per_trajectory": per(c.get("calls", 0)),
        "optimal_windows_per_trajectory": per(c["optimal"]) if judged else None,
        "suboptimal_windows_per_trajectory": per(c["suboptimal"]) if judged else None,
        "injections_per_trajectory": per(c.get("injected", 0)),
        "invalid_calls": int(c.get("failed", 0)),
        "prm_input_tokens_per_trajectory": per(c.get("in_tokens", 0)),
        "prm_output_tokens_per_trajectory": per(c.get("out_tokens", 0)),
        "prm_cost_per_100": 100 * per(c.get("cost", 0)),
        "total_cost_per_100": 100 * per(r["cost"]),
    }


def collect(session: Session) -> dict[str, Any]:
    """Nothing when no rollout used a PRM (the agent section covers plain rollouts)."""
    rollouts, calls = _rollout_rows(session), _call_rows(session)
    if not any(v != BASE for v in rollouts) and not calls:
        return {}
    data: dict[str, Any] = {}
    for variant, r in rollouts.items():
        for key, value in _metrics(r, calls.get(variant, {})).items():
            data[f"prm.{variant}.{key}"] = value
    return data


def _by_variant(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    grouped: dict[str, dict[str, Any]] = defaultdict(dict)
    for key, value in data.items():
        if key.startswith("prm."):
            _, variant, metric = key.split(".", 2)
            grouped[variant][metric] = value
    return grouped


def _order(variant: str) -> tuple[int, str]:
    known = [BASE, *TABLE_ORDER]
    return (known.index(variant), "") if variant in known else (len(known), variant)


def _fmt(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


COLUMNS = (
    ("Trajectories", "trajectories", lambda v: str(v)),
    ("Accepted %", "acceptance_rate", lambda v: _fmt(100 * v, 1)),
    ("Mean steps", "mean_steps", _fmt),
    ("PRM calls / traj", "invocations_per_trajectory", _fmt),
    ("Optimal windows / traj", "optimal_windows_per_trajectory", _fmt),
    ("Suboptimal windows / traj", "suboptimal_windows_per_trajectory", _fmt),
    ("Injected / traj", "injections_per_trajectory", _fmt),
    ("Invalid PRM replies", "invalid_calls", lambda v: str(v)),
    ("PRM $ / 100 traj", "prm_cost_per_100", lambda v: _fmt(v, 4)),
    ("Total $ / 100 traj", "total_cost_per_100", lambda v: _fmt(v, 4)),
)


def render(data: dict[str, Any]) -> list[Table]:
    grouped = _by_variant(data)
    if not grouped:
        return []
    table = Table(title="SWE-PRM by variant (paper Table 4 columns)")
    table.add_column("Variant")
    for title, _, _ in COLUMNS:
        table.add_column(title, justify="right")
    for variant in sorted(grouped, key=_order):
        metrics = grouped[variant]
        table.add_row(variant, *(fmt(metrics[key]) for _, key, fmt in COLUMNS))
    return [table]
