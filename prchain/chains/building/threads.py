"""Feature threads: chains whose every stage builds on some earlier stage, not only the one before.

A `semantic` chain is a path: stage t must depend on stage t-1. A feature grows otherwise: a PR
that builds on stage 1 and stage 2 but not on stage 3 alone still builds on the state the chain
made, and the path rule ends the chain before it. The `thread` strategy keeps such a PR: a
sequence of PRs in merge order is a thread when each stage after the first has a kept link (the
same evidence and rules as any link) to at least one earlier stage of the sequence; no stage
depends on nothing in its chain. Every such (stage, earlier stage) link is stored with the chain
(`chains.edges`), so each dependency can be audited. Threads are picked as the longest such
sequences up to `max_len`, grown only through stages the sandbox can enter, as `semantic` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import networkx as nx

from prchain.chains.building.strategies import (
    STRATEGIES,
    ChainCandidate,
    Enters,
    candidate,
    dedup_sub_paths,
    edge_record,
    pr_node,
    successors,
)
from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.nodes import PRNode

Path = tuple[int, ...]


def is_path(graph: nx.DiGraph, ids: Path) -> bool:
    """Each stage builds on the one just before it (a `semantic` chain)."""
    return all(graph.has_edge(ids[i + 1], ids[i]) for i in range(len(ids) - 1))


def is_thread(graph: nx.DiGraph, ids: Path) -> bool:
    """Each stage after the first builds on at least one earlier stage."""
    return all(any(graph.has_edge(ids[i], ids[j]) for j in range(i)) for i in range(1, len(ids)))


def thread_candidate(graph: nx.DiGraph, ids: Path) -> ChainCandidate:
    """A thread with every kept link among its stages (newer stage first, then the older one);
    its score is the mean weight of those links."""
    pairs = [
        (ids[i], ids[j])
        for i in range(1, len(ids))
        for j in range(i)
        if graph.has_edge(ids[i], ids[j])
    ]
    edges = [edge_record(graph, newer, older) for newer, older in pairs]
    weights = [graph[newer][older]["weight"] for newer, older in pairs]
    score = sum(weights) / len(weights) if weights else 0.0
    return ChainCandidate(pr_node(graph, ids[0]).repo_id, ids, round(score, 4), edges)


def thread_prefix(graph: nx.DiGraph, ids: Path) -> Path:
    """The longest prefix of `ids` that is a thread: cutting a chain (at a revert, at a stage that
    cannot be entered) may take away the only stage a later one built on."""
    for end in range(2, len(ids) + 1):
        if not any(graph.has_edge(ids[end - 1], ids[j]) for j in range(end - 1)):
            return ids[: end - 1]
    return ids


@dataclass(frozen=True)
class Shape:
    """What makes a sequence of PRs a chain of a strategy, and how its record is made again once
    a chain rule cuts or merges it."""

    holds: Callable[[nx.DiGraph, Path], bool]
    make: Callable[[nx.DiGraph, Path], ChainCandidate]
    keep: Callable[[nx.DiGraph, Path], Path]  # the part of a cut sequence that is still one


PATH = Shape(is_path, candidate, lambda _graph, ids: ids)
THREAD = Shape(is_thread, thread_candidate, thread_prefix)


def shape_of(strategy: str) -> Shape:
    """The chain shape a strategy picks (a path unless it picks threads)."""
    return THREAD if strategy == "thread" else PATH


def thread_extensions(graph: nx.DiGraph, ids: Path) -> list[Path]:
    """The threads one stage longer at either end: a newer PR after the last stage building on
    any stage, or an older PR the first stage builds on (for `lengths.stop_reason`)."""
    prs = graph.graph["prs"]
    last = prs[ids[-1]]
    newer = {u for stage in ids for u in graph.predecessors(stage) if u not in ids}
    longer = [ids + (u,) for u in sorted(newer) if _follows(graph, ids[-1], last, u)]
    return longer + [(v,) + ids for v in graph.successors(ids[0]) if v not in ids]


def _follows(graph: nx.DiGraph, last_id: int, last: PRNode, newer: int) -> bool:
    """Whether `newer` can come after the stage `last`: it builds on it, or was opened after it
    merged (its base holds the whole chain so far, which carry-forward needs)."""
    if graph.has_edge(newer, last_id):
        return True
    return last.merged_at < pr_node(graph, newer).opened


def _nexts(graph: nx.DiGraph, succ: dict[int, list[int]], path: Path, width: int) -> list[int]:
    """The PRs that may be the next stage of `path`, strongest link into it first (bounded)."""
    last = pr_node(graph, path[-1])
    best: dict[int, float] = {}
    for stage in path:
        for u in succ[stage]:
            if u not in path and _follows(graph, path[-1], last, u):
                best[u] = max(best.get(u, 0.0), graph[u][stage]["weight"])
    return sorted(best, key=lambda u: (-best[u], u))[:width]


def _threads_from(
    graph: nx.DiGraph,
    start: int,
    succ: dict[int, list[int]],
    config: ChainsConfig,
    max_len: int,
    enters: Enters | None,
) -> Iterator[Path]:
    """Maximal threads from `start` (depth first, at most `max_paths_per_start`)."""
    stack: list[Path] = [(start,)]
    emitted = 0
    while stack and emitted < config.max_paths_per_start:
        path = stack.pop()
        nexts = _nexts(graph, succ, path, config.max_branching) if len(path) < max_len else []
        if enters is not None:
            nexts = [u for u in nexts if enters(path, u)]
        if not nexts:
            emitted += 1
            yield path
            continue
        stack.extend(path + (u,) for u in reversed(nexts))


@STRATEGIES.register("thread")
def thread(
    graph: nx.DiGraph,
    config: ChainsConfig,
    min_len: int,
    max_len: int,
    enters: Enters | None = None,
) -> list[ChainCandidate]:
    """Feature threads of min_len..max_len PRs: each stage builds on some earlier stage."""
    succ = successors(graph, config.max_branching)
    found: dict[Path, float] = {}
    # Newer PRs first, as `semantic`: a path's stage checks find its newer stages' answers kept.
    for start in nx.topological_sort(graph):
        if not succ[start]:
            continue  # nothing builds on it: no thread of two starts here
        for path in _threads_from(graph, start, succ, config, max_len, enters):
            if len(path) >= min_len:
                found[path] = thread_candidate(graph, path).score
    return [thread_candidate(graph, path) for path in dedup_sub_paths(list(found.items()), min_len)]
