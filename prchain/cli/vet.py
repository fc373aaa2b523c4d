"""`prchain chains vet`: an LLM reads the links the rules kept, and the chains are built again without the
links it rejects."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.table import Table

from prchain.cli.budget import budget_options, budget_overrides, estimate_table
from prchain.cli.chains import chains, summary_tables
from prchain.cli.exits import finish
from prchain.cli.options import build_config, config_options
from prchain.cli.progress import reporting
from prchain.cli.safe import SafeConsole, echo, secho
from prchain.core.text import plural

if TYPE_CHECKING:
    from prchain.chains.writers.vet import VetSummary


@chains.command("vet")
@config_options
@click.option(
    "--workers", type=click.IntRange(min=1), help="Concurrent LLM requests (default llm.workers)."
)
@click.option(
    "--redo",
    is_flag=True,
    help="Ask again about every link it asks about and every link the vetter rejected (after a "
    "new model or prompt).",
)
@click.option(
    "--limit", type=click.IntRange(min=1), metavar="N", help="Ask about at most N links this run."
)
@click.option(
    "--no-rebuild",
    is_flag=True,
    help="Only store the verdicts; the next `chains build` applies them.",
)
@budget_options
def vet(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    workers: int | None,
    redo: bool,
    limit: int | None,
    no_rebuild: bool,
    budget_usd: float | None,
    budget_tokens: int | None,
    dry_run: bool,
) -> None:
    """Ask a model whether linked PRs really depend on each other, then rebuild the chains.

    The model (llm.models.link_vetter) reads both PRs' titles, descriptions and diffs, the wording
    that made the link and the lines one rewrites of the other, and answers dependent, borderline
    or independent. Verdicts are stored per link, so a rerun asks only about links without one. A
    build keeps a judged link only at chains.vet_keep or stronger (default: dependent); links the
    vetter rejected are listed by `prchain chains links --rule vetter_rejected`. Of the links the
    rules kept, those joining two stages of a chain are asked about by default, and after a
    rebuild the links of the new chains in turn (chains.vet_scope=all: every kept link, in one
    round; weak: every kept link without strong wording). Links dropped by the rules that only
    guess at shared code (chains.vet_rescue) are asked about too, and one judged dependent is
    an edge again: `prchain chains links` marks it "rescued". The model also names either PR
    that would be too slight to teach as a stage; with chains.vet_thin (default) the build
    takes out that PR's links (`prchain chains links --rule vetter_thin`).

    Example:

    \b
      prchain chains vet --dry-run
      prchain chains vet --workers 8 --set llm.models.link_vetter=gpt-4o
      prchain chains vet --set chains.vet_keep=borderline --no-rebuild && prchain chains build
    """
    from prchain.app.pipeline import plan_vet_from_config, vet_from_config

    config = build_config(
        config_path, overrides, db_url, **budget_overrides(budget_usd, budget_tokens)
    )
    if dry_run:
        rows = plan_vet_from_config(config, redo=redo, limit=limit)
        SafeConsole().print(estimate_table(rows, "chains vet --dry-run (one attempt per link)"))
        return
    with reporting("vetting links") as report:
        summary, build = vet_from_config(
            config,
            workers=workers,
            redo=redo,
            limit=limit,
            rebuild=not no_rebuild,
            progress=report,
        )
    console = SafeConsole()
    console.print(summary_table(summary, config.chains.vet_keep))
    if build is not None:
        console.print(*summary_tables(build))
    elif summary.rejected or summary.rescued or summary.thin:
        echo(
            f"rejected {plural(summary.rejected, 'link')}, rescued {summary.rescued}, "
            f"called {plural(summary.thin, 'PR')} thin:"
            " `prchain chains build` applies them"
        )
    for failure in summary.failures[:20]:
        secho(f"failed: {failure}", fg="yellow", err=True)
    finish(summary.failed, f"{plural(summary.failed, 'link')} got no verdict; rerun to ask again")


def summary_table(summary: VetSummary, keep: str) -> Table:
    table = Table("links", "count", title=f"chains vet (kept at: {keep} or stronger)")
    table.add_row("asked now", str(summary.asked))
    for verdict in ("dependent", "borderline", "independent"):
        table.add_row(f"  {verdict}", str(summary.verdicts[verdict]))
    table.add_row("rejected now (kept links)", str(summary.rejected), style="bold")
    table.add_row("rescued now (dropped links)", str(summary.rescued), style="bold")
    table.add_row("PRs called thin stages now", str(summary.thin), style="bold")
    table.add_row("judged before", str(summary.already))
    table.add_row("no verdict (rerun asks again)", str(summary.failed))
    table.add_row("LLM calls (cache hits excluded)", str(summary.llm_calls))
    table.add_row("rounds (vet, then build)", str(summary.rounds))
    return table
