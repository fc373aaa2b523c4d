"""A generated history mined and built into a real SQLite store, and its links by PR number."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.miner.config import MinerConfig
from prchain.miner.mine import mine
from prchain.store.models import Chain, ChainLink, ChainStage, PullRequest
from prchain.store.opener import make_engine


def mine_and_build(repo: Path, store: Path, name: str, config: ChainsConfig) -> Engine:
    """Mine the git history at `repo` (as `name`) into a new store at `store`, build its chains."""
    engine = make_engine(f"sqlite:///{store}")
    mine(MinerConfig(), engine, [str(repo)], source="git", name=name)
    build_chains(config, engine)
    return engine


def built_by_fallback(
    repo: Path, root: Path, name: str, fallbacks: tuple[str, ...]
) -> dict[str, Engine]:
    """The history at `repo` mined and built once per carry-forward fallback, each in its own
    store under `root` (chains of any size)."""
    config = ChainsConfig(min_chain_code_lines=0)
    return {
        fallback: mine_and_build(
            repo,
            root / f"{fallback}.db",
            name,
            config.model_copy(update={"entry_fallback": fallback}),
        )
        for fallback in fallbacks
    }


def links_by_number(engine: Engine) -> dict[tuple[int, int], ChainLink]:
    """Every stored link, keyed by (newer PR number, older PR number)."""
    with Session(engine, expire_on_commit=False) as session:
        numbers = dict(session.execute(select(PullRequest.id, PullRequest.number)).all())
        return {
            (numbers[link.newer_pr_id], numbers[link.older_pr_id]): link
            for link in session.scalars(select(ChainLink))
        }


def chain_entries(engine: Engine) -> dict[tuple[int, ...], tuple[str, ...]]:
    """Each chain by its PR numbers, with how each stage is entered."""
    with Session(engine) as session:
        number = dict(session.execute(select(PullRequest.id, PullRequest.number)).all())
        found = {}
        for chain in session.scalars(select(Chain).where(Chain.superseded_at.is_(None))):
            stages = session.scalars(
                select(ChainStage).where(ChainStage.chain_id == chain.id).order_by(ChainStage.idx)
            ).all()
            found[tuple(number[s.pr_id] for s in stages)] = tuple(s.entry for s in stages)
        return found
