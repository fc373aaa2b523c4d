"""No near-duplicate chains: two chains that share all but one PR become one.

A stacked series (#1 ← #2 ← … ← #8, each PR listing the whole stack) gives many paths through the
same few PRs; chains that differ in one PR correlate evaluations and inflate counts. Chains are
visited strongest first (longest, then highest score, then signature, so the result never depends
on input order). A chain that shares all but one PR with a kept one is merged into it when their
union, in merge order, is itself a path of the graph no longer than max_len (and passes `fits`, the
build's stage-base check); otherwise the later (weaker) chain is dropped.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

import networkx as nx

from prchain.chains.building.strategies import ChainCandidate


def near_duplicates(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Do the two chains share all but (at most) one PR of the longer one?"""
    shared = len(set(a) & set(b))
    return shared >= 1 and shared >= max(len(a), len(b)) - 1


Fits = Callable[[tuple[int, ...]], bool]


Holds = Callable[[nx.DiGraph, tuple[int, ...]], bool]


def _consecutive(graph: nx.DiGraph, path: tuple[int, ...]) -> bool:
    return all(graph.has_edge(path[i + 1], path[i]) for i in range(len(path) - 1))


def union_path(
    graph: nx.DiGraph,
    a: tuple[int, ...],
    b: tuple[int, ...],
    max_len: int,
    fits: Fits | None = None,
    holds: Holds = _consecutive,
) -> tuple[int, ...] | None:
    """The PRs of both chains in merge order, when they make a chain (`holds`: each one builds on
    the one before it, or for a thread on some earlier one), and the whole passes `fits`."""
    prs = graph.graph["prs"]
    path = tuple(sorted(set(a) | set(b), key=lambda p: (prs[p].merged_at, p)))
    if len(path) > max_len:
        return None
    if not holds(graph, path):
        return None
    return path if fits is None or fits(path) else None


class _Kept:
    """Kept chains with an index from PR to the chains holding it."""

    def __init__(self) -> None:
        self.chains: dict[int, ChainCandidate] = {}
        self.by_pr: dict[int, set[int]] = defaultdict(set)
        self.next_key = 0

    def add(self, chain: ChainCandidate) -> None:
        self.chains[self.next_key] = chain
        for pr in chain.pr_ids:
            self.by_pr[pr].add(self.next_key)
        self.next_key += 1

    def remove(self, key: int) -> None:
        for pr in self.chains.pop(key).pr_ids:
            self.by_pr[pr].discard(key)

    def conflict(self, chain: ChainCandidate) -> int | None:
        keys = sorted({k for pr in chain.pr_ids for k in self.by_pr.get(pr, ())})
        for key in keys:
            if near_duplicates(self.chains[key].pr_ids, chain.pr_ids):
                return key
        return None


def _merge_into(
    kept: _Kept,
    chain: ChainCandidate,
    graph: nx.DiGraph,
    max_len: int,
    rebuild: Callable[[nx.DiGraph, tuple[int, ...]], ChainCandidate],
    fits: Fits | None,
    holds: Holds,
) -> tuple[ChainCandidate | None, int]:
    """(chain to keep, kept chains absorbed), or (None, 0) with `kept` untouched when it must go."""
    removed: list[ChainCandidate] = []
    while (key := kept.conflict(chain)) is not None:
        union = union_path(graph, kept.chains[key].pr_ids, chain.pr_ids, max_len, fits, holds)
        if union is None:
            for old in removed:  # the union cannot stay: the chains it absorbed come back
                kept.add(old)
            return None, 0
        removed.append(kept.chains[key])
        kept.remove(key)
        chain = rebuild(graph, union)
    return chain, len(removed)


def dedup_chains(
    chains: list[ChainCandidate],
    graph: nx.DiGraph,
    max_len: int,
    rebuild: Callable[[nx.DiGraph, tuple[int, ...]], ChainCandidate],
    fits: Fits | None = None,
    holds: Holds = _consecutive,
) -> tuple[list[ChainCandidate], Counter[str]]:
    """The chains with no two sharing all but one PR, and how many were merged or dropped.

    Counts: chains merged into another, chains dropped, and (":links") the links of dropped chains.
    """
    counts: Counter[str] = Counter()
    kept = _Kept()
    for chain in sorted(chains, key=lambda c: (-len(c.pr_ids), -c.score, c.signature)):
        merged, absorbed = _merge_into(kept, chain, graph, max_len, rebuild, fits, holds)
        if merged is None:
            counts["near_duplicate_dropped"] += 1
            counts["near_duplicate_dropped:links"] += len(chain.pr_ids) - 1
        else:
            kept.add(merged)
            if absorbed:
                counts["near_duplicate_merged"] += absorbed
    ordered = sorted(kept.chains.values(), key=lambda c: c.pr_ids)
    return ordered, counts
