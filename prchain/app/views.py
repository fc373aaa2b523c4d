"""What the CLI reads back from the store for display and export, gathered in one place so the CLI
depends on the app layer only. Imported inside commands, never at CLI start-up."""

from __future__ import annotations

from chains.tasks import export_tasks
from chains.views import ChainView, chain_view, list_chains
from prchain.agent.export import export_trajectories
from prchain.agent.persist import RolloutView, list_rollouts, load_rollout
from prchain.agent.runner import RolloutResult
from sql.db import make_engine

__all__ = [
    "ChainView",
    "RolloutResult",
    "RolloutView",
    "chain_view",
    "export_tasks",
    "export_trajectories",
    "list_chains",
    "list_rollouts",
    "load_rollout",
    "make_engine",
]
