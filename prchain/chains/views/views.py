"""Read chains back for people: a listing, and one chain in full (stages, edges, evidence, queries)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.core.errors import NothingToDo, PrchainError
from prchain.store.models import Chain, ChainStage, PullRequest, Repo


class ChainNotFound(PrchainError):
    hint = "list the chains with `prchain chains list`"


@dataclass
class StageView:
    idx: int
    pr_number: int
    title: str
    merged_at: str
    base_sha: str
    end_sha: str
    code_lines: int
    test_lines: int
    query: str | None


@dataclass
class ChainView:
    id: int
    repo: str
    strategy: str
    length: int
    score: float
    overview: str | None
    edges: list[dict[str, Any]]
    stages: list[StageView] = field(default_factory=list)


def _lines(patch: str) -> int:
    return sum(
        1 for line in patch.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def list_chains(
    engine: Engine, *, limit: int = 20, strategy: str | None = None
) -> list[tuple[Chain, str, list[int]]]:
    """The best chains first (longest, then highest score): (chain, repo, PR numbers in stage order)."""
    with Session(engine) as session:
        query = select(Chain, Repo.full_name).join(Repo, Repo.id == Chain.repo_id)
        if strategy:
            query = query.where(Chain.strategy == strategy)
        rows = session.execute(
            query.order_by(Chain.length.desc(), Chain.score.desc(), Chain.id).limit(limit)
        ).all()
        numbers: dict[int, list[int]] = {chain.id: [] for chain, _ in rows}
        stages = select(ChainStage.chain_id, PullRequest.number).join(
            PullRequest, PullRequest.id == ChainStage.pr_id
        )
        for chain_id, number in session.execute(
            stages.where(ChainStage.chain_id.in_(numbers)).order_by(ChainStage.idx)
        ):
            numbers[chain_id].append(number)
        return [(chain, repo, numbers[chain.id]) for chain, repo in rows]


def chain_view(engine: Engine, chain_id: int) -> ChainView:
    """One chain with its stages, edges and queries; ChainNotFound when the id is unknown."""
    with Session(engine) as session:
        if session.scalar(select(Chain.id).limit(1)) is None:
            raise NothingToDo("the store holds no chains yet")
        chain = session.get(Chain, chain_id)
        if chain is None:
            raise ChainNotFound(f"no chain with id {chain_id}")
        repo = session.scalar(select(Repo.full_name).where(Repo.id == chain.repo_id)) or ""
        view = ChainView(
            chain.id,
            repo,
            chain.strategy,
            chain.length,
            chain.score,
            chain.overview,
            chain.edges or [],
        )
        query = select(ChainStage, PullRequest).join(
            PullRequest, PullRequest.id == ChainStage.pr_id
        )
        for stage, pr in session.execute(
            query.where(ChainStage.chain_id == chain_id).order_by(ChainStage.idx)
        ):
            view.stages.append(
                StageView(
                    stage.idx,
                    pr.number,
                    pr.title,
                    pr.merged_at.isoformat() if pr.merged_at else "",
                    stage.base_sha or "",
                    stage.end_sha or "",
                    _lines(stage.gold_patch),
                    _lines(stage.gold_test_patch),
                    stage.query,
                )
            )
        return view
