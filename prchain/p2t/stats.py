"""Figure-2 quantities: curated (P2T) stages side by side with plain rollouts of the same stages.

Pairs are stages both sides finished successfully (admitted / passed). For each quantity: the two
means, the relative shift of the mean, a two-sided Mann–Whitney p (normal approximation, ties
averaged) and Cliff's δ (positive: the plain rollout's values tend to be larger).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select

from prchain.p2t.metrics import assistant_steps, redundant_view_fraction, response_tokens
from prchain.store.db import session_scope
from prchain.store.models import P2TStage
from prchain.store.rollouts import passed_stages_of, steps

QUANTITIES = ("steps", "response_tokens", "redundant_view_fraction")


@dataclass(frozen=True)
class Comparison:
    quantity: str
    pairs: int
    plain_mean: float
    p2t_mean: float
    shift: float  # (p2t − plain) / plain
    p_value: float
    cliffs_delta: float


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    n1, n2 = len(a), len(b)
    if not n1 or not n2:
        return 1.0
    ranks = _ranks([*a, *b])
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    sigma = math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    if sigma == 0:
        return 1.0
    z = (u - n1 * n2 / 2) / sigma
    return math.erfc(abs(z) / math.sqrt(2))


def cliffs_delta(a: Sequence[float], b: Sequence[float]) -> float:
    """P(a > b) − P(a < b)."""
    if not a or not b:
        return 0.0
    greater = sum(1 for x in a for y in b if x > y)
    less = sum(1 for x in a for y in b if x < y)
    return (greater - less) / (len(a) * len(b))


def _stage_metrics(session: Any, rollout_id: int, stage_idx: int) -> dict[str, float]:
    messages = [s.message for s in steps(session, rollout_id, stage_idx=stage_idx)]
    return {
        "steps": float(assistant_steps(messages)),
        "response_tokens": float(response_tokens(messages)),
        "redundant_view_fraction": redundant_view_fraction(messages),
    }


def _successes(session: Any, source: str) -> dict[tuple[int, int], tuple[int, int]]:
    """(chain, stage) → (rollout, stage) of the newest successful stage of that source."""
    return {(c, s): (r, s) for c, s, r in passed_stages_of(session, source)}


def compare(engine: Engine) -> tuple[list[Comparison], dict[str, Any]]:
    with session_scope(engine) as session:
        plain, curated = _successes(session, "agent"), _successes(session, "p2t")
        keys = sorted(plain.keys() & curated.keys())
        a = [_stage_metrics(session, *plain[k]) for k in keys]
        b = [_stage_metrics(session, *curated[k]) for k in keys]
        coverages = [c for c in session.scalars(select(P2TStage.coverage).where(P2TStage.admitted))]
    rows = []
    for q in QUANTITIES:
        xs, ys = [m[q] for m in a], [m[q] for m in b]
        mean_x = sum(xs) / len(xs) if xs else 0.0
        mean_y = sum(ys) / len(ys) if ys else 0.0
        shift = (mean_y - mean_x) / mean_x if mean_x else 0.0
        rows.append(
            Comparison(
                q, len(keys), mean_x, mean_y, shift, mann_whitney_p(xs, ys), cliffs_delta(xs, ys)
            )
        )
    extra = {
        "curated_stages": len(curated),
        "plain_stages": len(plain),
        "mean_coverage": sum(coverages) / len(coverages) if coverages else 0.0,
    }
    return rows, extra
