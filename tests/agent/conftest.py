"""A real 2-stage chain in a real store, and a ChainRunner wired to the scripted LLM server."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from prchain.agent.config import AgentConfig
from prchain.agent.runner import ChainRunner
from prchain.app.config import Config
from prchain.app.rollout import make_chain_runner
from prchain.dev.repos import ChainRepo, make_chain_repo
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig
from prchain.store.config import StoreConfig
from prchain.store.db import session_scope
from prchain.store.models import Chain, ChainStage, PullRequest, Repo
from prchain.store.opener import make_engine

OVERVIEW = "Grow the calculator: first subtraction, then multiplication."
QUERIES = {
    1: "The calculator in calc/ops.py can only add. Give it a subtraction operation taking two numbers.",
    2: "Now that subtraction exists, the calculator also needs products of two numbers.",
}


@dataclass
class SeededChain:
    repo: ChainRepo
    chain_id: int
    url: str


def seed_chain(url: str, root: Path, prs: tuple[int, ...] = (1, 2)) -> SeededChain:
    """The calc repo's chain #1 ← #2 as rows: repo with clone, PRs, chain, stages with queries."""
    repo = make_chain_repo(root / "calc")
    engine = make_engine(url)
    with session_scope(engine) as session:
        row = Repo(
            full_name="acme/calc", source="git", clone_path=str(repo.path), default_branch="main"
        )
        session.add(row)
        session.flush()
        chain = Chain(
            repo_id=row.id,
            strategy="test",
            signature="-".join(map(str, prs)),
            length=len(prs),
            overview=OVERVIEW,
        )
        session.add(chain)
        session.flush()
        for idx, number in enumerate(prs, 1):
            info = repo.prs[number]
            pr = PullRequest(
                repo_id=row.id,
                number=number,
                title=info.title,
                source="git",
                base_sha=info.base_sha,
                merge_commit_sha=info.merge_sha,
                patch_status="ok",
            )
            session.add(pr)
            session.flush()
            session.add(
                ChainStage(
                    chain_id=chain.id,
                    idx=idx,
                    pr_id=pr.id,
                    base_sha=info.base_sha,
                    end_sha=info.merge_sha,
                    gold_patch=info.gold_patch,
                    query=QUERIES.get(idx, "Go on."),
                )
            )
        chain_id = chain.id
    engine.dispose()
    return SeededChain(repo, chain_id, url)


def test_config(url: str, llm_config: LLMConfig, **agent: Any) -> Config:
    return Config(
        store=StoreConfig(url=url),
        llm=llm_config,
        agent=AgentConfig(**{"max_steps_per_stage": 30, **agent}),
    )


@pytest.fixture
def make_runner(llm_config: LLMConfig) -> Callable[..., ChainRunner]:
    def make(engine: Engine, **agent: Any) -> ChainRunner:
        config = test_config(engine.url.render_as_string(hide_password=False), llm_config, **agent)
        return make_chain_runner(config, engine, LLMClient(config.llm, engine))

    return make


# -- scripted replies ---------------------------------------------------------------------------------


def bash(command: str) -> list[dict[str, Any]]:
    return [{"name": "bash", "arguments": {"command": command}}]


def edit(**args: Any) -> list[dict[str, Any]]:
    return [{"name": "str_replace_editor", "arguments": args}]


def submit(summary: str = "done") -> list[dict[str, Any]]:
    return [{"name": "submit", "arguments": {"summary": summary}}]


def verdict(score: float, comment: str) -> str:
    return json.dumps({"score": score, "comment": comment})
