"""The funnel names a few example links beside each reason a link was dropped."""

from __future__ import annotations

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.report.facts import GraphFacts, PipelineFacts
from prchain.report.funnel import build_funnel
from tests.support.chain_store import StoreBuilder


def test_each_link_drop_reason_comes_with_examples(engine: Engine) -> None:
    store = StoreBuilder(engine)
    store.pr(1, ["src/a.py"])
    store.pr(2, ["src/b.py"])
    store.pr(3, ["src/c.py"])
    store.pr(4, ["src/a.py"], day=500)  # far too late to build on #1, even with shared lines
    store.ref(4, 1, "follow_up", evidence="Follow-up to #1")
    store.ref(3, 2, "mention", evidence="Similar to #2, for c.")
    store.write()
    build_chains(ChainsConfig(), engine)
    facts = PipelineFacts(graph=GraphFacts(dropped={"gap_too_long": 1, "parallel_wording": 1}))
    with Session(engine) as session:
        funnel = build_funnel(session, facts)
    step = next(s for s in funnel if s.name == "reference graph edges")
    assert step.examples == {"gap_too_long": ["#4 → #1"], "parallel_wording": ["#3 → #2"]}
