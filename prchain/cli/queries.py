"""`prchain queries`: write one intent-level sub-query per chain stage (and each chain's overview)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from prchain.cli import main
from prchain.cli.budget import budget_options, budget_overrides, estimate_table
from prchain.cli.exits import finish
from prchain.cli.options import backend_options, build_config, config_options
from prchain.core.text import plural

if TYPE_CHECKING:
    from chains.queries import QuerySummary


@main.group()
def queries() -> None:
    """Intent-level sub-queries for the stages of every chain, written by an LLM.

    Example:

    \b
      prchain queries build --workers 8
    """


@queries.command("build")
@config_options
@click.option(
    "--workers", type=click.IntRange(min=1), help="Concurrent LLM requests (default llm.workers)."
)
@click.option(
    "--chain",
    "chain_ids",
    type=int,
    multiple=True,
    metavar="ID",
    help="Only this chain (repeatable).",
)
@backend_options
@budget_options
def build(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    workers: int | None,
    chain_ids: tuple[int, ...],
    backend: str | None,
    ray_address: str | None,
    budget_usd: float | None,
    budget_tokens: int | None,
    dry_run: bool,
) -> None:
    """Write the missing queries and overviews; stages that have one are skipped, so reruns are free.

    Each query says why, where (file paths) and vaguely how, never naming the identifiers the gold
    patch adds or changes; a query that does is regenerated up to chains.query_max_attempts. The
    model of each role is llm.models.query_constructor / llm.models.overview; the server is
    OPENAI_BASE_URL with OPENAI_API_KEY.

    With --budget-usd / --budget-tokens the run stops before the call that would pass the limit
    (all workers share it); rerun to resume. --dry-run prints the expected calls, tokens and cost.

    Example:

    \b
      prchain queries build --workers 8
      prchain queries build --chain 12 --chain 40 --set llm.models.query_constructor=gpt-4o
      prchain queries build --backend ray --ray-address auto   # one Ray task per chain
      prchain queries build --dry-run && prchain queries build --budget-usd 2
    """
    from prchain.app.pipeline import plan_queries_from_config, queries_from_config

    config = build_config(
        config_path,
        overrides,
        db_url,
        **{"scale.backend": backend, "scale.ray_address": ray_address},
        **budget_overrides(budget_usd, budget_tokens),
    )
    if dry_run:
        rows = plan_queries_from_config(config, chain_ids=list(chain_ids) or None)
        Console().print(estimate_table(rows, "queries build --dry-run (one attempt per item)"))
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task("queries", total=None)

        def report(description: str, done: int, total: int) -> None:
            bar.update(task, description=description, completed=done, total=total)

        summary = queries_from_config(
            config, workers=workers, chain_ids=list(chain_ids) or None, progress=report
        )
    Console().print(summary_table(summary))
    for failure in summary.failures[:20]:
        click.secho(f"failed: {failure}", fg="yellow", err=True)
    failed = len(summary.failures)  # stages, overviews and chains whose task was lost
    finish(failed, f"{plural(failed, 'item')} could not be written; rerun to retry them")


def summary_table(summary: QuerySummary) -> Table:
    table = Table("queries", "value", title="queries build")
    rows = [
        ("chains worked on", summary.chains),
        ("stages written", summary.stages_done),
        ("stages skipped (already had a query)", summary.stages_skipped),
        ("chains left to another running build", summary.chains_busy),
        ("stages failed (output invalid)", summary.stages_failed),
        ("overviews written", summary.overviews),
        ("first drafts that leaked, regenerated", summary.regenerated),
        ("leakage rate (after regeneration)", f"{summary.leakage_rate:.1%}"),
        ("LLM calls (paid / cached)", f"{summary.llm_calls} / {summary.usage.cached_calls}"),
        (
            "tokens (prompt / completion)",
            f"{summary.usage.prompt_tokens} / {summary.usage.completion_tokens}",
        ),
        ("cost", f"${summary.usage.cost_usd:.4f}"),
    ]
    for name, value in rows:
        table.add_row(name, str(value))
    return table
