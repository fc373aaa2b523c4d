"""`prchain queries`: write one intent-level sub-query per chain stage (and each chain's overview)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.table import Table

from prchain.cli import main
from prchain.cli.budget import budget_options, budget_overrides, estimate_table
from prchain.cli.exits import finish
from prchain.cli.options import backend_options, build_config, config_options
from prchain.cli.progress import reporting
from prchain.cli.safe import SafeConsole, echo, secho
from prchain.core.text import plural

if TYPE_CHECKING:
    from prchain.chains.writers.queries import QuerySummary


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
@click.option(
    "--redo-leaking",
    is_flag=True,
    help="First forget the queries that still name gold identifiers, then write them again "
    "(the new prompt forbids the leaked names).",
)
@backend_options
@budget_options
def build(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    workers: int | None,
    chain_ids: tuple[int, ...],
    redo_leaking: bool,
    backend: str | None,
    ray_address: str | None,
    budget_usd: float | None,
    budget_tokens: int | None,
    dry_run: bool,
) -> None:
    """Write the missing queries and overviews; stages that have one are skipped, so reruns are free.

    Each query says why, where (file paths) and vaguely how, never naming the identifiers the gold
    patch adds or changes; a query that does is regenerated up to chains.query_max_attempts. A
    query that still leaks is kept but its stage is not rolled out, and the command exits 1;
    --redo-leaking writes those again. The
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
      prchain queries build --redo-leaking
    """
    from prchain.app.pipeline import (
        plan_queries_from_config,
        queries_from_config,
        reset_leaking_queries,
    )

    config = build_config(
        config_path,
        overrides,
        db_url,
        **{"scale.backend": backend, "scale.ray_address": ray_address},
        **budget_overrides(budget_usd, budget_tokens),
    )
    if redo_leaking and not dry_run:
        reset = reset_leaking_queries(config, list(chain_ids) or None)
        echo(f"forgot {plural(reset, 'leaking query', 'leaking queries')}; writing them again")
    if dry_run:
        rows = plan_queries_from_config(config, chain_ids=list(chain_ids) or None)
        SafeConsole().print(estimate_table(rows, "queries build --dry-run (one attempt per item)"))
        return
    with reporting("queries") as report:
        summary = queries_from_config(
            config, workers=workers, chain_ids=list(chain_ids) or None, progress=report
        )
    SafeConsole().print(summary_table(summary))
    for failure in summary.failures[:20]:
        secho(f"failed: {failure}", fg="yellow", err=True)
    if summary.leaked:  # stored, but their stages are not rolled out (prchain/agent/gates.py)
        secho(
            f"leaking after every attempt: {plural(summary.leaked, 'stage')} whose text names "
            "gold identifiers; not rolled out until rewritten with --redo-leaking",
            fg="red",
            err=True,
        )
    failed = len(summary.failures)  # stages, overviews and chains whose task was lost
    lost = f"{plural(failed, 'item')} could not be written; rerun to retry them" if failed else ""
    finish(failed + summary.leaked, lost)


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
