"""Finding 2 of issue 23: `chains build` during a rollout deleted a chain the rollout had queued,
with its paid-for queries. A chain later steps worked on is now never deleted nor changed by a
rebuild: no longer selected, it is marked superseded and stays usable; the summary counts both."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session

from prchain.agent.persist import new_rollout
from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.store import leases
from prchain.store.db import session_scope
from prchain.store.models import Chain, ChainStage, P2TGraph, PRPatch, StageVerification
from tests.support.chain_store import StoreBuilder


def _store(engine: Engine) -> StoreBuilder:
    store = StoreBuilder(engine)
    store.pr(1, ["calc/ops.py", "tests/test_ops.py"])
    store.pr(2, ["calc/ops.py"])
    store.pr(3, ["calc/ops.py", "calc/util.py"])
    store.ref(2, 1, "follow_up", evidence="Follow-up to #1")
    store.ref(3, 2, "fixes", evidence="Fixes #2")
    store.write()
    return store


def _query(engine: Engine, chain_id: int) -> None:
    with session_scope(engine) as session:
        session.execute(
            update(ChainStage).where(ChainStage.chain_id == chain_id).values(query="Paid for.")
        )


def _overview(engine: Engine, chain_id: int) -> None:
    with session_scope(engine) as session:
        session.get_one(Chain, chain_id).overview = "Paid for too."


def _verified(engine: Engine, chain_id: int) -> None:
    with session_scope(engine) as session:
        stage = session.scalars(
            select(ChainStage.id).where(ChainStage.chain_id == chain_id)
        ).first()
        session.add(StageVerification(chain_stage_id=stage, recipe="r", status="usable"))


def _rollout(engine: Engine, chain_id: int) -> None:
    new_rollout(engine, chain_id, conflict_policy="strict")


def _graph(engine: Engine, chain_id: int) -> None:
    with session_scope(engine) as session:
        session.add(P2TGraph(chain_id=chain_id, stage_idx=1))


def _claimed(engine: Engine, chain_id: int) -> None:
    """A rollout claimed the chain and has not written its rollout row yet."""
    assert leases.try_claim(engine, "chain", str(chain_id), leases.new_owner_id(), 60)


USES: dict[str, Callable[[Engine, int], None]] = {
    "query": _query,
    "overview": _overview,
    "verification": _verified,
    "rollout": _rollout,
    "p2t graph": _graph,
    "rollout lease": _claimed,
}


def _chains(engine: Engine) -> dict[int, tuple[str, object]]:
    with Session(engine) as session:
        rows = session.execute(select(Chain.id, Chain.signature, Chain.superseded_at))
        return {cid: (signature, superseded) for cid, signature, superseded in rows}


def _stages(engine: Engine, chain_id: int) -> list[tuple[object, ...]]:
    with Session(engine) as session:
        rows = session.execute(
            select(ChainStage.pr_id, ChainStage.gold_patch, ChainStage.query)
            .where(ChainStage.chain_id == chain_id)
            .order_by(ChainStage.idx)
        )
        return [tuple(row) for row in rows]


@pytest.mark.parametrize("use", list(USES))
def test_a_chain_in_use_is_superseded_not_deleted(engine: Engine, use: str) -> None:
    _store(engine)
    build_chains(ChainsConfig(), engine)
    ((used, _),) = _chains(engine).items()
    USES[use](engine, used)
    before = _stages(engine, used)

    shorter = build_chains(ChainsConfig(), engine, max_len=2)  # no longer selects the 3-chain
    chains = _chains(engine)
    assert used in chains and chains[used][1] is not None, "the chain in use was deleted"
    assert _stages(engine, used) == before
    assert (shorter.superseded, shorter.pruned) == (1, 0)
    assert sum(superseded is None for _, superseded in chains.values()) == 1  # the new 2-chain

    again = build_chains(ChainsConfig(), engine, max_len=2)
    assert (again.superseded, again.pruned) == (0, 0)  # marked once; still there
    back = build_chains(ChainsConfig(), engine)  # selected again: current again
    assert _chains(engine)[used][1] is None and back.kept_in_use == 1
    assert back.pruned == 1  # the unused 2-chain goes as before


def test_a_chain_in_use_is_not_rewritten_when_its_patches_change(engine: Engine) -> None:
    store = _store(engine)
    build_chains(ChainsConfig(), engine)
    ((used, _),) = _chains(engine).items()
    _query(engine, used)
    before = _stages(engine, used)
    # The PR's patch was re-mined differently; it still has the substance a stage needs and the
    # lines its links rest on, so the chain is selected again (a patch under the minimum would
    # only supersede it).
    remined = "".join(f"+value_{n} = compute({n})\n" for n in range(12))
    kept = "-value_1_0 = compute(1, 0)\n+value_2_0 = compute(2, 0)\n"
    head = "diff --git a/calc/ops.py b/calc/ops.py\n--- a/calc/ops.py\n+++ b/calc/ops.py\n"
    with session_scope(engine) as session:
        session.execute(
            update(PRPatch)
            .where(PRPatch.pr_id == store.pr_id(2))
            .values(diff=f"{head}@@ -1,1 +1,13 @@\n{kept}{remined}")
        )
    summary = build_chains(ChainsConfig(), engine)
    assert summary.kept_in_use == 1 and summary.stages == 0
    assert _stages(engine, used) == before
