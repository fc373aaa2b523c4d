"""Bulk reads for the index: one row per chain and the distributions the plots draw.

A handful of aggregate queries, never one per chain, so the full ruff store reads in a second.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from prchain.store import rollouts as stored
from prchain.store.models import Chain, ChainStage, PRMCall, PullRequest, Repo

NOT_ROLLED_OUT = "not rolled out"


@dataclass
class ChainRow:
    id: int
    repo: str
    strategy: str
    length: int
    score: float
    numbers: list[int] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    outcome: str = NOT_ROLLED_OUT
    rollout_id: int | None = None
    judge: float | None = None  # mean final stage score of the newest rollout
    page: bool = False  # whether a chain page was written

    def as_json(self) -> dict[str, Any]:
        """The compact record the index's filter script reads."""
        return {
            "id": self.id,
            "repo": self.repo,
            "len": self.length,
            "score": round(self.score, 2),
            "outcome": self.outcome,
            "judge": None if self.judge is None else round(self.judge, 2),
            "prs": self.numbers,
            "title": self.titles[-1] if self.titles else "",
            "page": self.page,
            "rollout": self.rollout_id,
        }


@dataclass
class RepoRow:
    name: str
    prs: int = 0
    chains: int = 0
    rollouts: int = 0
    kept: int = 0
    cost_usd: float = 0.0


@dataclass
class IndexData:
    chains: list[ChainRow]
    repos: list[RepoRow]
    patch_lines: list[int]  # per distinct PR in a chain: lines changed
    rollouts: list[dict[str, Any]]  # id, chain, status, steps, tokens, cost
    stage_scores: list[float]  # final judge score of each rolled-out stage
    round_scores: list[tuple[int, float]]  # (refinement round, score) of every judgement
    pass_by_stage: dict[int, tuple[int, int]]  # stage index → (passed, rolled out)
    prm_by_status: dict[str, int]
    prm_per_rollout: dict[int, int]


def _chains(session: Session) -> list[ChainRow]:
    query = (
        select(Chain.id, Repo.full_name, Chain.strategy, Chain.length, Chain.score)
        .join(Repo, Repo.id == Chain.repo_id)
        .order_by(Chain.length.desc(), Chain.score.desc(), Chain.id)
    )
    rows = {
        cid: ChainRow(cid, repo, strategy, length, score)
        for cid, repo, strategy, length, score in session.execute(query)
    }
    stages = (
        select(ChainStage.chain_id, PullRequest.number, PullRequest.title)
        .join(PullRequest, PullRequest.id == ChainStage.pr_id)
        .order_by(ChainStage.chain_id, ChainStage.idx)
    )
    for chain_id, number, title in session.execute(stages):
        rows[chain_id].numbers.append(number)
        rows[chain_id].titles.append(title)
    return list(rows.values())


def _attach_rollouts(session: Session, chains: list[ChainRow]) -> None:
    by_id = {c.id: c for c in chains}
    for rid, chain_id, status in stored.latest_statuses(session):
        by_id[chain_id].rollout_id, by_id[chain_id].outcome = rid, status  # newest wins
    newest = {c.rollout_id: c for c in chains if c.rollout_id is not None}
    scores: dict[int, list[float]] = defaultdict(list)
    for rid, score in stored.stage_scores_by_rollout(session):
        if rid in newest and score is not None:
            scores[rid].append(score)
    for rid, values in scores.items():
        newest[rid].judge = sum(values) / len(values)


def _repos(
    session: Session, chains: list[ChainRow], rollouts: list[dict[str, Any]]
) -> list[RepoRow]:
    repos = {
        name: RepoRow(name, prs=n)
        for name, n in session.execute(
            select(Repo.full_name, func.count(PullRequest.id))
            .outerjoin(PullRequest, PullRequest.repo_id == Repo.id)
            .group_by(Repo.full_name)
        )
    }
    repo_of = {c.id: c.repo for c in chains}
    for c in chains:
        repos[c.repo].chains += 1
    for r in rollouts:
        row = repos[repo_of[r["chain"]]]
        row.rollouts += 1
        row.kept += r["status"] == "kept"
        row.cost_usd += r["cost"]
    return sorted(repos.values(), key=lambda r: r.name)


def _patch_lines(session: Session) -> list[int]:
    in_chains = select(ChainStage.pr_id).distinct().subquery()
    query = select(PullRequest.additions + PullRequest.deletions).where(
        PullRequest.id.in_(select(in_chains.c.pr_id))
    )
    return [int(n or 0) for n in session.scalars(query)]


def _rollout_rows(session: Session) -> list[dict[str, Any]]:
    keys = ("id", "chain", "status", "steps", "tokens", "cost", "tool_calls")
    return [dict(zip(keys, row, strict=True)) for row in stored.summaries(session)]


def collect_index(session: Session) -> IndexData:
    chains = _chains(session)
    _attach_rollouts(session, chains)
    rollouts = _rollout_rows(session)
    return IndexData(
        chains=chains,
        repos=_repos(session, chains, rollouts),
        patch_lines=_patch_lines(session),
        rollouts=rollouts,
        stage_scores=stored.stage_scores(session),
        round_scores=stored.round_scores(session),
        pass_by_stage=stored.pass_by_stage(session),
        prm_by_status={
            str(status or "invalid"): int(n)
            for status, n in session.execute(
                select(PRMCall.task_status, func.count()).group_by(PRMCall.task_status)
            )
        },
        prm_per_rollout={
            int(rid): int(n)
            for rid, n in session.execute(
                select(PRMCall.rollout_id, func.count()).group_by(PRMCall.rollout_id)
            )
        },
    )


def llm_role_rows(session: Session) -> list[dict[str, Any]]:
    """Per LLM role: paid calls, cost, repairs, and the replies refused (format errors, leaking
    queries, other rejections), as `prchain stats` shows them."""
    from prchain.llm.calls import REFUSED
    from prchain.llm.stats import collect

    data = collect(session)
    refused = data["llm_refused_by_role"]
    roles = sorted(set(data["llm_paid_calls_by_role"]) | set(refused))
    return [
        {
            "role": role,
            "calls": data["llm_paid_calls_by_role"].get(role, 0),
            "cost": data["llm_cost_usd_by_role"].get(role, 0.0),
            "repairs": sum(data["llm_repairs_by_role"].get(role, {}).values()),
            **{status: refused.get(role, {}).get(status, 0) for status in REFUSED},
        }
        for role in roles
    ]
