"""`prchain run`: the whole job, then the funnel."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich import box
from rich.table import Table

from prchain.cli import main
from prchain.cli.exits import finish
from prchain.cli.options import build_config, command_store, config_options, repos_options
from prchain.cli.safe import SafeConsole

if TYPE_CHECKING:
    from prchain.app.funnel import FunnelRow


@main.command("run")
@config_options
@repos_options
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("data/run"),
    show_default=True,
    help="Where the task file, the gold results and the trajectories go.",
)
def run_command(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    repos: tuple[str, ...],
    repos_file: str | None,
    source: str | None,
    name: str | None,
    out: Path,
) -> None:
    """Run the whole job: mine, chains, queries, environments, verdicts, runnable tasks, gold
    evaluation, rollouts and trajectories, then print the funnel per repository and language.

    Each step is the command of the same name and resumes as it does: a rerun skips what is done.
    A step that cannot run here (no model server for its role, no Docker engine) is skipped with
    one line; a failed step is reported and the steps after it go on where they can. Without
    REPOS the job runs over the store as it is.

    Example:

    \b
      prchain run --repos-file repos.txt
      prchain run --source git --name acme/calc ./calc --out data/calc
      prchain run --db sqlite:///data/prchain.db
    """
    from prchain.app.funnel import by_language
    from prchain.app.job import JobInput, job_funnel, run_job
    from prchain.app.pipeline import read_repos_file

    config = build_config(config_path, overrides, db_url)
    wanted = [*repos, *(read_repos_file(repos_file) if repos_file else [])]
    err = SafeConsole(stderr=True)
    given = JobInput(wanted, source, name, out)
    store = command_store(config)  # the job's steps and its funnel share one store
    summary = run_job(config, given, lambda line: err.print(line, markup=False), store)
    rows = job_funnel(config, given, summary, store)
    console = SafeConsole()
    console.print(_funnel_table(rows, "funnel by repository", "repository"))
    console.print(_funnel_table(by_language(rows), "funnel by language", ""))
    for row in rows:
        for loss, count in row.losses.most_common(5):
            console.print(f"  {row.name}: lost at {loss}: {count}")
    failed = len(summary.failed)
    finish(failed, f"{failed} step{'s' if failed != 1 else ''} failed (see the lines above)")


def _funnel_table(rows: list[FunnelRow], title: str, named: str) -> Table:
    """One row per repository (`named` its column) or, with `named` "", per language."""
    from prchain.app.funnel import COLUMNS

    heads = [named, "language"] if named else ["language"]
    table = Table(*heads, *COLUMNS, title=title, box=box.SIMPLE)
    for row in rows:
        names = [row.name, row.language] if named else [row.language]
        table.add_row(*names, *(str(row.counts[c]) for c in COLUMNS))
    return table
