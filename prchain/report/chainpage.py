"""What one chain page shows, read for a batch of chains at a time (a few queries per batch)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.report.collect import NOT_ROLLED_OUT
from prchain.store.environments import verification_rows
from prchain.store.models import Chain, ChainStage, PullRequest, Repo
from prchain.store.rollouts import JudgementRow, RolloutRow, judgements_of, of_chains, stages_of


@dataclass
class StagePage:
    idx: int
    stage_id: int
    pr_id: int
    number: int
    title: str
    merged_at: str
    query: str | None
    gold_patch: str
    gold_test_patch: str
    outcome: str = NOT_ROLLED_OUT
    reason: str | None = None
    score: float | None = None
    agent_diff: str | None = None
    test_result: dict[str, Any] | None = None
    verdict: dict[str, Any] | None = None
    judgements: list[JudgementRow] = field(default_factory=list)


@dataclass
class ChainPage:
    id: int
    repo: str
    strategy: str
    length: int
    score: float
    overview: str | None
    edges: list[dict[str, Any]]
    stages: list[StagePage] = field(default_factory=list)
    rollout: RolloutRow | None = None
    rollouts: list[int] = field(default_factory=list)  # every rollout of the chain, newest first


def _stages(session: Session, ids: Sequence[int], pages: dict[int, ChainPage]) -> None:
    query = (
        select(ChainStage, PullRequest.number, PullRequest.title, PullRequest.merged_at)
        .join(PullRequest, PullRequest.id == ChainStage.pr_id)
        .where(ChainStage.chain_id.in_(ids))
        .order_by(ChainStage.chain_id, ChainStage.idx)
    )
    for stage, number, title, merged in session.execute(query):
        pages[stage.chain_id].stages.append(
            StagePage(
                stage.idx,
                stage.id,
                stage.pr_id,
                number,
                title,
                merged.date().isoformat() if merged else "",
                stage.query,
                stage.gold_patch,
                stage.gold_test_patch,
            )
        )


def _rollouts(session: Session, ids: Sequence[int], pages: dict[int, ChainPage]) -> None:
    for rollout in of_chains(session, ids):
        page = pages[rollout.chain_id]
        page.rollouts.append(rollout.id)
        page.rollout = page.rollout or rollout
    newest = {p.rollout.id: p for p in pages.values() if p.rollout is not None}
    if not newest:
        return
    by_key = {(p.id, s.idx): s for p in pages.values() for s in p.stages}
    for rs in stages_of(session, newest):
        stage = by_key.get((newest[rs.rollout_id].id, rs.stage_idx))
        if stage is not None:
            stage.outcome, stage.reason, stage.score = rs.status, rs.reason, rs.score
            stage.agent_diff, stage.test_result = rs.stage_diff, rs.test_result
    judged: dict[tuple[int, int], list[JudgementRow]] = defaultdict(list)
    for j in judgements_of(session, newest):
        judged[(newest[j.rollout_id].id, j.stage_idx)].append(j)
    for key, stage in by_key.items():
        stage.judgements = judged.get(key, [])


def chain_pages(
    session: Session, chain_ids: Sequence[int], batch: int = 200
) -> Iterator[ChainPage]:
    """Chain pages in the order of `chain_ids`, reading `batch` chains per round of queries."""
    for start in range(0, len(chain_ids), batch):
        ids = list(chain_ids[start : start + batch])
        query = (
            select(Chain, Repo.full_name)
            .join(Repo, Repo.id == Chain.repo_id)
            .where(Chain.id.in_(ids))
        )
        pages = {
            c.id: ChainPage(c.id, repo, c.strategy, c.length, c.score, c.overview, c.edges or [])
            for c, repo in session.execute(query)
        }
        _stages(session, ids, pages)
        _rollouts(session, ids, pages)
        verdicts = verification_rows(
            session, [s.stage_id for p in pages.values() for s in p.stages]
        )
        for page in pages.values():
            for stage in page.stages:
                stage.verdict = verdicts.get(stage.stage_id)
        yield from (pages[i] for i in ids if i in pages)
        session.expunge_all()  # keep memory flat: the batch's patches are written out by now
