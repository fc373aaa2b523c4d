"""Chains that later steps have worked on: a rebuild must neither delete nor change them.

A chain is in use once money or time went into it or something is working on it now: a query or
overview written, a stage verified, a rollout (of any source), a P2T graph, or a live work lease
on the chain or one of its stages. `chains build` keeps such a chain exactly as it is; when the
build no longer selects it, it is marked superseded (`chains.superseded_at`) and stays usable.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Engine, or_, select, update
from sqlalchemy.orm import Session

from prchain.store.environments import verified_stages
from prchain.store.models import ChainStage, P2TGraph, WorkLease
from prchain.store.models.base import utcnow
from prchain.store.models.tasks import Chain
from prchain.store.rollouts import chains_with_rollouts

BATCH = 500


def in_use(session: Session, chain_ids: Iterable[int]) -> set[int]:
    """The chains among `chain_ids` that a rebuild must keep unchanged."""
    ids = list(chain_ids)
    used: set[int] = set()
    for start in range(0, len(ids), BATCH):
        used |= _in_use_batch(session, ids[start : start + BATCH])
    return used


def _in_use_batch(session: Session, ids: list[int]) -> set[int]:
    rows = session.execute(
        select(ChainStage.id, ChainStage.chain_id).where(ChainStage.chain_id.in_(ids))
    )
    stages = {stage_id: chain_id for stage_id, chain_id in rows}  # dict(Result) reads .keys()
    used = set(
        session.scalars(
            select(ChainStage.chain_id).where(
                ChainStage.chain_id.in_(ids), ChainStage.query.is_not(None)
            )
        )
    )
    used |= set(
        session.scalars(select(Chain.id).where(Chain.id.in_(ids), Chain.overview.is_not(None)))
    )
    used |= chains_with_rollouts(session, ids)
    used |= set(session.scalars(select(P2TGraph.chain_id).where(P2TGraph.chain_id.in_(ids))))
    used |= {stages[stage_id] for stage_id in verified_stages(session, stages)}
    used |= _leased(session, ids, stages)
    return used


def _leased(session: Session, ids: list[int], stages: dict[int, int]) -> set[int]:
    """Chains a live step holds a lease on (a rollout that claimed it, queries or tests running)."""
    chain_keys = {str(i): i for i in ids}
    stage_keys = {str(s): c for s, c in stages.items()}
    rows = session.execute(
        select(WorkLease.kind, WorkLease.key).where(
            or_(
                WorkLease.kind.in_(("chain", "queries")) & WorkLease.key.in_(list(chain_keys)),
                (WorkLease.kind == "verify") & WorkLease.key.in_(list(stage_keys)),
            )
        )
    )
    return {(stage_keys if kind == "verify" else chain_keys)[key] for kind, key in rows}


def mark_superseded(session: Session, chain_ids: Iterable[int]) -> int:
    """Mark chains superseded (those already marked keep their first date); returns how many
    were newly marked."""
    ids = list(chain_ids)
    marked = 0
    for start in range(0, len(ids), BATCH):
        result = session.connection().execute(
            update(Chain)
            .where(Chain.id.in_(ids[start : start + BATCH]), Chain.superseded_at.is_(None))
            .values(superseded_at=utcnow())
        )
        marked += result.rowcount
    return marked


def unmark(session: Session, chain_ids: Iterable[int]) -> None:
    """A superseded chain that a build selects again is current again."""
    ids = list(chain_ids)
    for start in range(0, len(ids), BATCH):
        session.execute(
            update(Chain)
            .where(Chain.id.in_(ids[start : start + BATCH]), Chain.superseded_at.is_not(None))
            .values(superseded_at=None)
        )


def superseded_count(engine: Engine) -> int:
    with Session(engine) as session:
        return len(session.scalars(select(Chain.id).where(Chain.superseded_at.is_not(None))).all())
