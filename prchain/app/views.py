"""What the CLI reads back from the store for display and export, gathered in one place so the CLI
depends on the app layer only. Imported inside commands, never at CLI start-up."""

from __future__ import annotations

from typing import Any

from prchain.agent import export as _export
from prchain.agent.formats import dataset as _dataset
from prchain.agent.formats.card import read_manifest
from prchain.agent.formats.dataset import DatasetExport, ExportOptions, check_row
from prchain.agent.persist import RolloutView, list_rollouts, load_rollout
from prchain.agent.results import RolloutResult
from prchain.chains.building.lengths import length_rows
from prchain.chains.building.links import LinkView, chain_pairs, list_links
from prchain.chains.views.handcheck import Score, read_labels, score
from prchain.chains.views.sample import (
    SampledChain,
    SampledLink,
    drop_shares,
    sample_chains,
    sample_dropped,
    shares_line,
)
from prchain.chains.views.stats import lengths_table, rules_table
from prchain.chains.views.tasks import export_tasks
from prchain.chains.views.views import ChainView, chain_view, list_chains
from prchain.p2t.store import oracle_strings
from prchain.store.db import make_engine


def export_trajectories(*args: Any, **kwargs: Any) -> _export.ExportSummary:
    """The SFT export, with curated (P2T) trajectories also checked for oracle text."""
    kwargs.setdefault("forbidden", oracle_strings)
    return _export.export_trajectories(*args, **kwargs)


def export_dataset(*args: Any, **kwargs: Any) -> _dataset.DatasetExport:
    """`prchain export` in any format, with the same oracle-text check as the SFT export."""
    kwargs.setdefault("forbidden", oracle_strings)
    return _dataset.export_dataset(*args, **kwargs)


__all__ = [
    "ChainView",
    "LinkView",
    "SampledChain",
    "SampledLink",
    "chain_pairs",
    "list_links",
    "Score",
    "read_labels",
    "score",
    "drop_shares",
    "sample_chains",
    "sample_dropped",
    "shares_line",
    "DatasetExport",
    "ExportOptions",
    "check_row",
    "export_dataset",
    "read_manifest",
    "RolloutResult",
    "RolloutView",
    "chain_view",
    "export_tasks",
    "export_trajectories",
    "list_chains",
    "list_rollouts",
    "load_rollout",
    "make_engine",
    "rules_table",
    "length_rows",
    "lengths_table",
]
