"""A stacked series gives one chain per PR set, not one per ordering; the result is deterministic."""

from __future__ import annotations

import random
from itertools import combinations

from sqlalchemy import Engine

from prchain.chains.building.build import build_chains
from prchain.chains.building.dedup import dedup_chains, near_duplicates
from prchain.chains.building.strategies import ChainCandidate, candidate
from prchain.chains.config import ChainsConfig
from tests.chains.test_strategies import make_graph
from tests.support.chain_store import StoreBuilder


def test_near_duplicates_share_all_but_one_pr() -> None:
    assert near_duplicates((1, 2, 3), (1, 2, 4))
    assert near_duplicates((1, 2), (1, 3))
    assert not near_duplicates((1, 2, 3), (1, 4, 5))
    assert not near_duplicates((1, 2), (3, 4))


def test_a_stacked_series_keeps_no_two_chains_sharing_all_but_one_pr(engine: Engine) -> None:
    store = StoreBuilder(engine)
    for n in range(1, 9):
        store.pr(n, ["core.py", "parser.py"])
    # Every PR of the stack lists every earlier one, as stack tools write it.
    for newer, older in combinations(range(1, 9), 2):
        store.ref(older if older > newer else newer, min(newer, older), "follow_up")
    store.write()
    summary = build_chains(ChainsConfig(), engine)
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from prchain.store.models import Chain

    with Session(engine) as session:
        signatures = [tuple(c.signature.split("-")) for c in session.scalars(select(Chain))]
    assert summary.chains_dropped["near_duplicate_dropped"] >= 1
    for a, b in combinations(signatures, 2):
        assert not near_duplicates(a, b), (a, b)
    assert max(len(s) for s in signatures) == 5


def test_mergeable_chains_become_one_and_order_does_not_matter() -> None:
    graph = make_graph([(2, 1), (3, 2), (3, 1), (4, 3), (4, 2)])
    a = candidate(graph, (1, 2, 3))
    b = candidate(graph, (2, 3, 4))  # shares 2 of 3: union 1←2←3←4 is a path
    c = ChainCandidate(1, (1, 3, 4), 9.9)  # scores higher yet shares all but one with the union
    results = set()
    for seed in range(5):
        chains = [a, b, c]
        random.Random(seed).shuffle(chains)
        kept, counts = dedup_chains(chains, graph, 5, candidate)
        results.add(tuple(k.pr_ids for k in kept))
    assert results == {((1, 2, 3, 4),)}


def test_the_weaker_of_two_unmergeable_chains_is_dropped() -> None:
    graph = make_graph([(2, 1), (3, 1)])  # #2 and #3 both build on #1, not on each other
    strong = ChainCandidate(1, (1, 3), 5.0)
    weak = ChainCandidate(1, (1, 2), 4.0)
    kept, counts = dedup_chains([weak, strong], graph, 5, candidate)
    assert [k.pr_ids for k in kept] == [(1, 3)] and counts["near_duplicate_dropped"] == 1


def test_a_union_whose_stage_bases_cannot_be_made_is_not_merged() -> None:
    graph = make_graph([(2, 1), (3, 2), (3, 1), (4, 3), (4, 2)])
    a = candidate(graph, (1, 2, 3))
    b = candidate(graph, (2, 3, 4))
    asked = []

    def fits(path: tuple[int, ...]) -> bool:
        asked.append(path)
        return 1 not in path or 4 not in path  # #1's patch no longer reverts at #4's base

    kept, counts = dedup_chains([a, b], graph, 5, candidate, fits)
    assert asked == [(1, 2, 3, 4)]
    assert len(kept) == 1 and counts["near_duplicate_dropped"] == 1
    assert counts["near_duplicate_merged"] == 0
