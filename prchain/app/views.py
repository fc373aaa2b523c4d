"""What the CLI reads back from the store for display and export, gathered in one place so the CLI
depends on the app layer only. Imported inside commands, never at CLI start-up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prchain.agent import export as _export
from prchain.agent.formats import dataset as _dataset
from prchain.agent.formats.card import read_manifest
from prchain.agent.formats.dataset import DatasetExport, ExportOptions, check_row
from prchain.agent.persist import RolloutView, list_rollouts, load_rollout
from prchain.agent.results import RolloutResult
from prchain.app.config import Config
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


def export_trajectories(*args: Any, **kwargs: Any) -> _export.ExportSummary:
    """The SFT export, with curated (P2T) trajectories also checked for oracle text."""
    kwargs.setdefault("forbidden", oracle_strings)
    return _export.export_trajectories(*args, **kwargs)


def export_options(
    config: Config,
    format_: str = "openai",
    *,
    min_score: float | None = None,
    keep_prm: bool | None = None,
    keep_reasoning: bool = False,
    manifest: Path | None = None,
) -> ExportOptions:
    """The export's filters: those given, the config's defaults for the rest (`prchain export`
    and the job's last step read them alike)."""
    return ExportOptions(
        format=format_,  # one of EXPORT_FORMATS (a click.Choice)
        min_score=config.agent.judge_threshold if min_score is None else min_score,
        keep=config.agent.keep_policy,
        keep_on=config.agent.keep_on,
        keep_prm=config.prm.keep_in_export if keep_prm is None else keep_prm,
        keep_reasoning=keep_reasoning,
        leak_min_chars=config.agent.leak_min_chars,
        rollout_ids=tuple(read_manifest(manifest)) if manifest else None,
    )


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
    "export_options",
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
    "rules_table",
    "length_rows",
    "lengths_table",
]
