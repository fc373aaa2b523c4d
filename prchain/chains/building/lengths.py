"""How long the built chains are, and why each one is no longer.

A chain of fewer than `max_len` stages stops for one of a few reasons, read at both of its ends
once every chain rule has run:

| reason | what holds at both ends |
|---|---|
| `full` | the chain has `max_len` stages |
| `no_link` | no kept link goes on from either end: no newer PR builds on the last stage, and the first builds on no older one |
| `carry_forward` | kept links go on, but with each of them some stage could not be entered: an earlier stage's gold patch does not revert at a later stage's base (prchain/chains/evidence/revertible.py) |
| `chain_rules` | a kept link would make a longer chain whose stages can all be entered, but a chain rule (a revert, a near-duplicate, the search's bounds) left it out |

Counted per length, they are kept with the build (`chain_builds.graph["stops"]`) and shown by
`chains build`, `prchain stats` and the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, get_args

import networkx as nx

StopReason = Literal["full", "no_link", "carry_forward", "chain_rules"]
STOP_REASONS: tuple[StopReason, ...] = get_args(StopReason)
# Whether every stage of a path (oldest first) can be entered.
Fits = Callable[[tuple[int, ...]], bool]
# The chains one stage longer than a chain, at either end (a thread grows otherwise than a path).
Grows = Callable[[nx.DiGraph, tuple[int, ...]], list[tuple[int, ...]]]


def path_extensions(graph: nx.DiGraph, path: tuple[int, ...]) -> list[tuple[int, ...]]:
    """A path one stage longer: a newer PR on its last stage, or an older one under its first."""
    longer = [path + (newer,) for newer in graph.predecessors(path[-1]) if newer not in path]
    return longer + [(older,) + path for older in graph.successors(path[0]) if older not in path]


def stop_reason(
    path: tuple[int, ...],
    graph: nx.DiGraph,
    max_len: int,
    fits: Fits | None,
    grows: Grows | None = None,
) -> StopReason:
    """Why the chain `path` has no more stages (edges point from the newer PR to the older)."""
    if len(path) >= max_len:
        return "full"
    longer = (grows or path_extensions)(graph, path)
    if not longer:
        return "no_link"
    if fits is None or any(fits(other) for other in longer):
        return "chain_rules"
    return "carry_forward"


def stops(
    paths: Iterable[tuple[int, ...]],
    graph: nx.DiGraph,
    max_len: int,
    fits: Fits | None,
    grows: Grows | None = None,
) -> dict[int, Counter[StopReason]]:
    """Chain length → how many chains of that length stop for each reason."""
    found: dict[int, Counter[StopReason]] = {}
    for path in paths:
        reason = stop_reason(path, graph, max_len, fits, grows)
        found.setdefault(len(path), Counter())[reason] += 1
    return found


def length_rows(
    lengths: Mapping[str, int],
    stopped: Mapping[str, Mapping[str, int]],
    low: int = 2,
    high: int = 5,
) -> list[tuple[str, int, dict[str, int]]]:
    """(length, chains, reason → chains) for every length from `low` to `high` (none too) and any
    other length built: the distribution a reader compares with the paper's chains of 2 to 5."""
    keys = sorted({int(k) for k in lengths} | set(range(low, high + 1)))
    return [
        (str(k), int(lengths.get(str(k), 0)), dict(stopped.get(str(k), {}))) for k in keys if k >= 1
    ]


def as_record(found: Mapping[int, Counter[StopReason]]) -> dict[str, dict[str, int]]:
    """The stop counts as kept in a build's JSON (string keys, reasons in table order)."""
    return {str(k): {r: found[k][r] for r in STOP_REASONS if found[k][r]} for k in sorted(found)}


def describe(reasons: Mapping[str, Any]) -> str:
    """'no_link 120, carry_forward 30' (table order; '' when none)."""
    return ", ".join(f"{r} {reasons[r]}" for r in STOP_REASONS if reasons.get(r))
