"""Rows the PRM tests need: a repo, a chain and rollouts to attach prm_calls and steps to."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Engine

from prchain.store.db import session_scope
from prchain.store.models import Chain, Repo, Rollout

MakeRollout = Callable[..., int]


@pytest.fixture
def make_rollout(engine: Engine) -> MakeRollout:
    """Insert a rollout (and once, its repo and chain); returns the rollout id."""
    chain_ids: list[int] = []

    def make(prm_variant: str | None = "D", status: str = "running", cost_usd: float = 0.0) -> int:
        with session_scope(engine) as session:
            if not chain_ids:
                repo = Repo(full_name="acme/calc", source="git")
                session.add(repo)
                session.flush()
                chain = Chain(repo_id=repo.id, strategy="test", signature="1-2", length=2)
                session.add(chain)
                session.flush()
                chain_ids.append(chain.id)
            rollout = Rollout(
                chain_id=chain_ids[0],
                status=status,
                conflict_policy="strict",
                prm_variant=prm_variant,
                cost_usd=cost_usd,
            )
            session.add(rollout)
            session.flush()
            return rollout.id

    return make
