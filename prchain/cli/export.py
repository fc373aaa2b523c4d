"""`prchain export`: kept trajectories written for a trainer, with a dataset card and manifest."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.table import Table

from prchain.app.choices import EXPORT_FORMATS, EXPORT_FORMATS_HELP, KEEP_POLICIES, KEEP_SIGNALS
from prchain.cli import main
from prchain.cli.options import build_config, command_store, config_options
from prchain.cli.safe import SafeConsole

if TYPE_CHECKING:
    from prchain.app.config import Config
    from prchain.app.views import DatasetExport, ExportOptions


@main.command("export")
@config_options
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--min-score",
    type=float,
    help="Stage score a kept stage needs (default agent.judge_threshold).",
)
@click.option(
    "--keep",
    type=click.Choice(KEEP_POLICIES),
    help="all stages, or the longest passing prefix (default agent.keep_policy).",
)
@click.option(
    "--keep-on",
    type=click.Choice(KEEP_SIGNALS),
    help="What passes a stage: judge, tests or both (default agent.keep_on).",
)
@click.option(
    "--keep-prm/--no-keep-prm",
    default=None,
    help="Keep PRM guidance turns (default prm.keep_in_export).",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(EXPORT_FORMATS),
    default="openai",
    show_default=True,
    help=f"{EXPORT_FORMATS_HELP} A .parquet OUT writes Parquet.",
)
@click.option(
    "--keep-reasoning",
    is_flag=True,
    help="Export reasoning models' reasoning (openai: reasoning_content; sharegpt: <think>).",
)
@click.option(
    "--manifest",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Export exactly the rollouts a previous export's manifest lists.",
)
def export_command(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    out: Path,
    min_score: float | None,
    keep: str | None,
    keep_on: str | None,
    keep_prm: bool | None,
    format_: str,
    keep_reasoning: bool,
    manifest: Path | None,
) -> None:
    """Write kept trajectories for a trainer, one chain per row, with a dataset card and manifest.

    OUT ending in .parquet writes Parquet, anything else JSON Lines. Beside OUT: README.md (the
    dataset card: counts, repos, filters, models, prompt hashes, config) and OUT.manifest.json
    (the exported ids; --manifest reproduces that subset).

    Example:

    \b
      prchain export data/trajectories.jsonl --min-score 0.8 --keep prefix
      prchain export data/sharegpt/train.parquet --format sharegpt --keep-reasoning
    """
    from prchain.app.config import save_config
    from prchain.app.rollout import public_config
    from prchain.app.views import export_dataset

    config = build_config(
        config_path, overrides, db_url, **{"agent.keep_policy": keep, "agent.keep_on": keep_on}
    )
    options = _options(config, format_, min_score, keep_prm, keep_reasoning, manifest)
    summary = export_dataset(
        command_store(config, readonly=True).engine, out, options, public_config(config)
    )
    save_config(config, out.parent, name=f"{out.stem}.config.json")
    SafeConsole().print(_summary_table(summary, format_))


def _options(
    config: Config,
    format_: str,
    min_score: float | None,
    keep_prm: bool | None,
    keep_reasoning: bool,
    manifest: Path | None,
) -> ExportOptions:
    """The export's filters: the options given, the config's defaults for the rest."""
    from prchain.app.views import export_options

    return export_options(
        config,
        format_,
        min_score=min_score,
        keep_prm=keep_prm,
        keep_reasoning=keep_reasoning,
        manifest=manifest,
    )


def _summary_table(summary: DatasetExport, format_: str) -> Table:
    table = Table(title=f"Export ({format_}) → {summary.path}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in [
        ("trajectories written", summary.written),
        ("tool calls", summary.tool_calls),
        ("tokens (final context, summed)", summary.tokens),
        ("secrets redacted", summary.redactions),
        *((f"skipped: {why}", n) for why, n in summary.skipped.items()),
        ("dataset card", summary.card),
        ("manifest", summary.manifest),
    ]:
        table.add_row(name, str(value))
    return table
