"""Per-step progress against the graph, and a candidate's efficiency.

Prog_τ = |Δ_τ| / max(|A_(τ−1)|, 1), where Δ_τ are the nodes the step newly establishes and A the
frontier before it. A node established before its parents (out of order) either zeroes the whole
step (strict, the paper's formula) or is dropped and blocked for the rest of the candidate while
the in-order part is credited (drop, the paper's worked example). Fractions keep ties exact.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from prchain.p2t.choices import OutOfOrderMode
from prchain.p2t.graph import ProcessGraph, frontier


@dataclass(frozen=True)
class StepCredit:
    credited: frozenset[str]  # nodes added to U by this step
    out_of_order: frozenset[str]  # established before their parents
    frontier_size: int
    prog: Fraction


@dataclass
class Progress:
    """U and the blocked set of one candidate, advanced step by step."""

    graph: ProcessGraph
    established: set[str]
    mode: OutOfOrderMode = "drop"
    track_blocked: bool = True  # off only to show why the blocked set is needed
    blocked: set[str] = field(default_factory=set)
    credits: list[StepCredit] = field(default_factory=list)

    def step(self, newly: Iterable[str]) -> StepCredit:
        delta = frozenset(newly) - self.established - self.blocked
        eligible = frontier(self.graph, self.established)
        size = max(len(eligible), 1)
        early = delta - eligible
        if self.mode == "strict":
            credited, prog = delta, Fraction(0 if early else len(delta), size)
        else:
            credited = delta & eligible
            prog = Fraction(len(credited), size)
            if self.track_blocked:
                self.blocked |= early
        self.established |= credited
        credit = StepCredit(credited, early, len(eligible), prog)
        self.credits.append(credit)
        return credit

    @property
    def total(self) -> Fraction:
        return sum((c.prog for c in self.credits), Fraction(0))


def efficiency(
    graph: ProcessGraph,
    established: Iterable[str],
    steps: Sequence[Iterable[str]],
    *,
    ground: bool = True,
    mode: OutOfOrderMode = "drop",
    track_blocked: bool = True,
) -> Fraction:
    """Eff = Ground × Σ Prog over every step of the candidate (not clipped to 1)."""
    progress = Progress(graph, set(established), mode, track_blocked)
    for newly in steps:
        progress.step(newly)
    return progress.total if ground else Fraction(0)
