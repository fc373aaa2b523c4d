"""Chain strategies on graphs with known answers: maximal paths, sub-path dedup, windows, ablations."""

from __future__ import annotations

from datetime import datetime, timedelta

import networkx as nx
import pytest

from prchain.chains.building.strategies import STRATEGIES, dedup_sub_paths
from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.nodes import PRNode
from prchain.core.errors import UnknownName

T0 = datetime(2024, 1, 1)


def make_graph(
    edges: list[tuple[int, int]], files: dict[int, set[str]] | None = None, n: int | None = None
) -> nx.DiGraph:
    """Nodes 1..n merged one day apart; each (newer, older) edge strength 3 with full overlap."""
    count = n or max(max(e) for e in edges)
    files = files or {}
    prs = {
        i: PRNode(
            i,
            1,
            i,
            f"PR {i}",
            "ada",
            T0 + timedelta(days=i, hours=-1),
            T0 + timedelta(days=i),
            f"b{i}",
            f"m{i}",
            1,
            frozenset(files.get(i, {"core.py"})),
        )
        for i in range(1, count + 1)
    }
    graph = nx.DiGraph(prs=prs)
    graph.add_nodes_from(prs)
    for newer, older in edges:
        graph.add_edge(
            newer,
            older,
            types=["follow_up"],
            strength=3,
            overlap=1.0,
            weight=5.0,
            evidence=[
                {
                    "type": "follow_up",
                    "found_in": "body",
                    "via_issue": 0,
                    "text": f"Follow-up to #{older}",
                }
            ],
        )
    return graph


def chains_of(
    name: str, graph: nx.DiGraph, min_len: int = 2, max_len: int = 5, **config: object
) -> list[tuple[int, ...]]:
    return sorted(
        c.pr_ids for c in STRATEGIES.get(name)(graph, ChainsConfig(**config), min_len, max_len)
    )


def test_semantic_finds_the_maximal_paths_oldest_first() -> None:
    # 1 ← 2 ← 3 ← 4 and a branch 2 ← 5; 6 ← 7 separately; 8 alone.
    graph = make_graph([(2, 1), (3, 2), (4, 3), (5, 2), (7, 6)], n=8)
    assert chains_of("semantic", graph) == [(1, 2, 3, 4), (1, 2, 5), (6, 7)]


def test_semantic_keeps_no_sub_path_or_shortcut_of_a_kept_chain() -> None:
    # 3 also references 1 directly: (1, 3) is a shortcut inside (1, 2, 3).
    graph = make_graph([(2, 1), (3, 2), (3, 1)])
    assert chains_of("semantic", graph) == [(1, 2, 3)]
    assert dedup_sub_paths([((1, 2), 1.0), ((1, 2, 3), 1.0), ((2, 3), 9.0), ((3, 4), 1.0)], 2) == [
        (1, 2, 3),
        (3, 4),
    ]


def test_semantic_cuts_long_chains_into_full_windows() -> None:
    graph = make_graph([(i + 1, i) for i in range(1, 7)])  # 1 ← 2 ← … ← 7
    assert chains_of("semantic", graph, max_len=5) == [
        (1, 2, 3, 4, 5),
        (2, 3, 4, 5, 6),
        (3, 4, 5, 6, 7),
    ]
    assert chains_of("semantic", graph, min_len=2, max_len=2) == [(i, i + 1) for i in range(1, 7)]


def test_semantic_respects_min_len_and_scores_edges() -> None:
    graph = make_graph([(2, 1), (4, 3), (5, 4)])
    assert chains_of("semantic", graph, min_len=3) == [(3, 4, 5)]
    chain = STRATEGIES.get("semantic")(graph, ChainsConfig(), 2, 5)[0]
    assert chain.score == 5.0
    assert [(e["src"], e["dst"]) for e in chain.edges] == [(4, 3), (5, 4)]
    assert chain.signature == "3-4-5"


def test_semantic_stays_bounded_on_a_dense_graph() -> None:
    # Every PR references the 10 before it: an explosion of paths if the search were not bounded.
    n = 300
    graph = make_graph([(i, j) for i in range(1, n + 1) for j in range(max(1, i - 10), i)], n=n)
    found = chains_of("semantic", graph, max_paths_per_start=5, max_branching=3)
    assert found and all(len(c) == 5 for c in found)
    assert len(found) <= 5 * n
    assert all(a < b for c in found for a, b in zip(c, c[1:], strict=False))


def test_temporal_links_adjacent_prs_sharing_files() -> None:
    files = {1: {"a.py"}, 2: {"b.py"}, 3: {"a.py", "b.py"}, 4: {"a.py"}, 5: {"c.py"}, 6: {"c.py"}}
    graph = make_graph([], files=files, n=6)
    assert chains_of("temporal", graph) == [(1, 3, 4), (5, 6)]
    assert chains_of("temporal", graph, max_len=2) == [(1, 3), (5, 6)]
    assert chains_of("temporal", graph, temporal_window=1) == [(2, 3, 4), (5, 6)]


def test_single_takes_isolated_prs() -> None:
    graph = make_graph([(2, 1)], n=4)
    assert chains_of("single", graph, 1, 1) == [(3,), (4,)]


def test_unknown_strategy_lists_valid_names() -> None:
    with pytest.raises(UnknownName, match="semantic, single, temporal"):
        STRATEGIES.get("random")
