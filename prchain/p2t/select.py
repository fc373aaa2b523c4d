"""Choosing the candidate to commit: the shortest one whose Eff reaches the floor.

If none reaches it, fall back to the most effective (the best pure seed by default). Ties: the
higher Eff among equally short, the shorter among equally effective, then pool order.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from prchain.p2t.choices import EtaMode, FallbackMode, PickMode
from prchain.p2t.config import P2TConfig


@dataclass(frozen=True)
class Scored:
    name: str
    eff: Fraction
    length: int
    seed: bool  # a pure blinded seed (no mutation)
    grounded: bool = True


def floor(eta: float, mode: EtaMode, frontier_size: int) -> Fraction:
    base = Fraction(eta).limit_denominator(10_000)
    return base * max(1, frontier_size) if mode == "frontier_scaled" else base


def nondominated(pool: Sequence[Scored]) -> list[Scored]:
    """Candidates no other beats on both axes (Eff at least as high, Len at most as long, one strictly)."""

    def beats(a: Scored, b: Scored) -> bool:
        return a.eff >= b.eff and a.length <= b.length and (a.eff > b.eff or a.length < b.length)

    return [s for s in pool if not any(beats(o, s) for o in pool)]


def _most_effective(pool: Sequence[Scored]) -> Scored:
    order = {id(s): i for i, s in enumerate(pool)}
    return min(pool, key=lambda s: (-s.eff, s.length, order[id(s)]))


def select(
    pool: Sequence[Scored],
    eta: Fraction,
    *,
    fallback: FallbackMode = "seed",
    pick: PickMode = "shortest",
    pareto: bool = True,
    rng: random.Random | None = None,
) -> Scored:
    """The candidate to commit; a candidate that failed the groundedness gate never wins."""
    grounded = [s for s in pool if s.grounded]
    if not grounded:
        raise ValueError("select() needs at least one grounded candidate")
    above = [s for s in grounded if s.eff >= eta]
    if above:
        if pick == "random":
            return (rng or random.Random(0)).choice(above)
        candidates = nondominated(above) if pareto else above
        order = {id(s): i for i, s in enumerate(pool)}
        return min(candidates, key=lambda s: (s.length, -s.eff, order[id(s)]))
    seeds = [s for s in grounded if s.seed]
    return _most_effective(seeds if fallback == "seed" and seeds else grounded)


def select_with(
    config: P2TConfig, pool: Sequence[Scored], frontier_size: int, rng: random.Random | None = None
) -> Scored:
    return select(
        pool,
        floor(config.eta, config.eta_mode, frontier_size),
        fallback=config.fallback,
        pick=config.pick,
        pareto=config.pareto_filter,
        rng=rng,
    )
