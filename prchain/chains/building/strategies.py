"""Chain strategies: how ordered PR chains are picked from the reference graph.

`semantic` follows references (the paper's method); `temporal` and `single` are its ablations
(TemporalChain: chronologically adjacent PRs touching shared files; SinglePR: isolated PRs).
Every strategy returns chains oldest PR first: pr_1 ← pr_2 ← … ← pr_k.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Protocol

import networkx as nx

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.nodes import PRNode
from prchain.chains.rules.link_rules import jaccard
from prchain.core.registry import Registry


@dataclass
class ChainCandidate:
    repo_id: int
    pr_ids: tuple[int, ...]  # oldest first
    score: float
    edges: list[dict[str, Any]] = field(default_factory=list)
    label: str | None = None  # revert_reland: a revert, then a stage building on it
    entries: tuple[str, ...] = ()  # how each stage is entered (revert, propagate); () = all revert

    @property
    def signature(self) -> str:
        return "-".join(map(str, self.pr_ids))


# Can the stage of PR `newer` be entered after the stages of `path` (oldest first): do their gold
# patches revert, newest first, at `newer`'s base commit (prchain/chains/evidence/revertible.py)?
Enters = Callable[[tuple[int, ...], int], bool]


class Strategy(Protocol):
    def __call__(
        self,
        graph: nx.DiGraph,
        config: ChainsConfig,
        min_len: int,
        max_len: int,
        enters: Enters | None = None,
    ) -> list[ChainCandidate]: ...


STRATEGIES: Registry[Strategy] = Registry("chain strategy")


def pr_node(graph: nx.DiGraph, pr_id: int) -> PRNode:
    return graph.graph["prs"][pr_id]


def edge_record(graph: nx.DiGraph, newer: int, older: int) -> dict[str, Any]:
    data = graph[newer][older]
    return {
        "src": newer,
        "dst": older,
        "src_number": pr_node(graph, newer).number,
        "dst_number": pr_node(graph, older).number,
        "types": data["types"],
        "strength": data["strength"],
        "overlap": data["overlap"],
        "evidence_class": data.get("evidence_class", ""),
        "gap_days": data.get("gap_days"),
        "lineage": data.get("lineage", 0),
        "why": data.get("why", ""),
        "evidence": data["evidence"],
    }


def candidate(graph: nx.DiGraph, path: tuple[int, ...]) -> ChainCandidate:
    """A chain from a path given oldest first; its score is the mean weight of its edges."""
    edges = [edge_record(graph, path[i + 1], path[i]) for i in range(len(path) - 1)]
    weights = [graph[e["src"]][e["dst"]]["weight"] for e in edges]
    score = sum(weights) / len(weights) if weights else 0.0
    return ChainCandidate(pr_node(graph, path[0]).repo_id, path, round(score, 4), edges)


def successors(graph: nx.DiGraph, max_branching: int) -> dict[int, list[int]]:
    """For each PR, the newer PRs that build on it, strongest edge first (bounded)."""
    return {
        v: sorted(graph.predecessors(v), key=lambda u: (-graph[u][v]["weight"], u))[:max_branching]
        for v in graph
    }


def _heights(graph: nx.DiGraph, succ: dict[int, list[int]], cap: int) -> dict[int, int]:
    """Nodes on the longest forward path starting at each PR, capped (edges point newer → older)."""
    height: dict[int, int] = {}
    for v in nx.topological_sort(graph):  # newer PRs come first, so successors are already done
        height[v] = min(cap, 1 + max((height[u] for u in succ[v]), default=0))
    return height


def _paths_from(
    start: int,
    succ: dict[int, list[int]],
    height: dict[int, int],
    need: int | None,
    max_len: int,
    cap: int,
    enters: Enters | None = None,
) -> Iterator[tuple[int, ...]]:
    """Maximal forward paths from `start`: to a PR nothing builds on, or to max_len (exactly `need`
    when set). With `enters`, a path only grows by a PR whose stage can be entered after it, so
    every path is a chain the sandbox can run, and one that stops short stops where the next
    stage could not be entered."""
    stack: list[tuple[int, ...]] = [(start,)]
    emitted = 0
    while stack and emitted < cap:
        path = stack.pop()
        room = max_len - len(path)
        nexts = (
            [u for u in succ[path[-1]] if need is None or height[u] >= need - len(path)]
            if room
            else []
        )
        if enters is not None:
            nexts = [u for u in nexts if enters(path, u)]
        if not nexts:
            if need is None or len(path) == need:
                emitted += 1
                yield path
            continue
        stack.extend(path + (u,) for u in reversed(nexts))


def _sub_paths(path: tuple[int, ...], min_len: int) -> Iterator[tuple[int, ...]]:
    """Every ordered selection of ≥ min_len PRs of the path (contiguous or skipping some)."""
    for size in range(min_len, len(path) + 1):
        yield from combinations(path, size)


def dedup_sub_paths(
    paths: list[tuple[tuple[int, ...], float]], min_len: int
) -> list[tuple[int, ...]]:
    """Longest and strongest first; a path whose PRs all sit, in order, in a kept one is not kept again.

    That covers contiguous sub-paths and also shortcuts (a ← c when a ← b ← c is kept).
    """
    covered: set[tuple[int, ...]] = set()
    kept = []
    for path, _score in sorted(paths, key=lambda item: (-len(item[0]), -item[1], item[0])):
        if path in covered:
            continue
        kept.append(path)
        covered.update(_sub_paths(path, min_len))
    return kept


@STRATEGIES.register("semantic")
def semantic(
    graph: nx.DiGraph,
    config: ChainsConfig,
    min_len: int,
    max_len: int,
    enters: Enters | None = None,
) -> list[ChainCandidate]:
    """Maximal reference paths of min_len..max_len PRs, scored by edge strength and file overlap.

    With `enters` (the build's stage-base check), paths grow only through stages that can be
    entered, and start at every PR: a chain whose older end cannot be carried forward starts
    after it, and a stage that cannot be entered is passed by for another newer PR that builds
    on the same one (a branch, or a direct link past it), rather than cutting the chain there.
    """
    succ = successors(graph, config.max_branching)
    height = _heights(graph, succ, max_len)
    found: dict[tuple[int, ...], float] = {}
    # Newer PRs first: a path's stage checks then find its newer stages' answers kept (the
    # chains found do not depend on the order).
    for start in nx.topological_sort(graph):
        # Without the check, a PR that itself builds on an older one starts a maximal path only
        # when the path is full; with it, the older one may be unable to go on to its stages.
        need = max_len if graph.out_degree(start) and enters is None else None
        if height[start] < max(min_len, need or 0):
            continue
        paths = _paths_from(start, succ, height, need, max_len, config.max_paths_per_start, enters)
        for path in paths:
            if len(path) >= min_len:
                found[path] = _path_weight(graph, path)
    return [candidate(graph, path) for path in dedup_sub_paths(list(found.items()), min_len)]


def _path_weight(graph: nx.DiGraph, path: tuple[int, ...]) -> float:
    return sum(graph[path[i + 1]][path[i]]["weight"] for i in range(len(path) - 1)) / (
        len(path) - 1
    )


def _temporal_links(prs: list[PRNode], window: int) -> dict[int, int]:
    """Each PR → the first later merge (within `window`) that touches a shared file and is not yet claimed."""
    link: dict[int, int] = {}
    claimed: set[int] = set()
    for i, pr in enumerate(prs):
        for later in prs[i + 1 : i + 1 + window]:
            if later.id not in claimed and pr.files & later.files:
                link[pr.id] = later.id
                claimed.add(later.id)
                break
    return link


def _temporal_edge(older: PRNode, newer: PRNode) -> dict[str, Any]:
    shared = sorted(older.files & newer.files)
    return {
        "src": newer.id,
        "dst": older.id,
        "src_number": newer.number,
        "dst_number": older.number,
        "types": ["temporal"],
        "strength": 0,
        "evidence_class": "temporal",
        "why": "temporal: the next merge touching a shared file (no reference needed)",
        "overlap": round(jaccard(older.files, newer.files), 4),
        "evidence": [
            {"type": "temporal", "found_in": "files", "via_issue": 0, "text": ", ".join(shared[:5])}
        ],
    }


def _runs(prs: list[PRNode], link: dict[int, int]) -> Iterator[list[int]]:
    claimed = set(link.values())
    for head in (pr.id for pr in prs if pr.id not in claimed):
        run = [head]
        while run[-1] in link:
            run.append(link[run[-1]])
        yield run


@STRATEGIES.register("temporal")
def temporal(
    graph: nx.DiGraph,
    config: ChainsConfig,
    min_len: int,
    max_len: int,
    enters: Enters | None = None,
) -> list[ChainCandidate]:
    """Chronologically adjacent merged PRs touching overlapping files, cut into chains of ≤ max_len."""
    by_repo: dict[int, list[PRNode]] = defaultdict(list)
    for pr_id in graph:
        by_repo[pr_node(graph, pr_id).repo_id].append(pr_node(graph, pr_id))
    chains = []
    for repo_id, prs in by_repo.items():
        prs.sort(key=lambda p: (p.merged_at, p.id))
        lookup = {p.id: p for p in prs}
        for run in _runs(prs, _temporal_links(prs, config.temporal_window)):
            for i in range(0, len(run), max_len):
                piece = tuple(run[i : i + max_len])
                if len(piece) >= min_len:
                    edges = [
                        _temporal_edge(lookup[a], lookup[b])
                        for a, b in zip(piece, piece[1:], strict=False)
                    ]
                    score = sum(e["overlap"] for e in edges) / len(edges) if edges else 0.0
                    chains.append(ChainCandidate(repo_id, piece, round(score, 4), edges))
    return chains


@STRATEGIES.register("single")
def single(
    graph: nx.DiGraph,
    config: ChainsConfig,
    min_len: int,
    max_len: int,
    enters: Enters | None = None,
) -> list[ChainCandidate]:
    """Every PR with no reference edge at all, as a chain of one."""
    return [
        ChainCandidate(pr_node(graph, pr_id).repo_id, (pr_id,), 0.0)
        for pr_id in sorted(graph)
        if graph.degree(pr_id) == 0
    ]
