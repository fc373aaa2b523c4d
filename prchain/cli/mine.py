"""`prchain mine`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from prchain.cli import main
from prchain.cli.options import backend_options, build_config, config_options, repos_options
from prchain.cli.safe import SafeConsole
from prchain.core.errors import ConfigError

if TYPE_CHECKING:
    from prchain.miner.mine import MineSummary


@main.command("mine")
@config_options
@repos_options
@click.option(
    "--clone-dir",
    type=click.Path(file_okay=False),
    help="Bare clones for patches (default miner.clone_dir).",
)
@click.option(
    "--since", metavar="DATE", help="Only PRs merged or updated on or after DATE (2024-01-31)."
)
@click.option(
    "--limit", type=click.IntRange(min=1), help="At most N PRs per repository in this run."
)
@backend_options
def mine_command(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    repos: tuple[str, ...],
    repos_file: str | None,
    source: str | None,
    clone_dir: str | None,
    name: str | None,
    since: str | None,
    limit: int | None,
    backend: str | None,
    ray_address: str | None,
) -> None:
    """Mine PRs, their patches, commits, comments and the references between them into the store.

    REPO is owner/name for --source github (needs GITHUB_TOKEN), or the path of a local clone for
    --source git (bare or not, with or without a remote; no network). Reruns continue from each
    repository's cursor and never duplicate rows; a killed run loses at most its current batch.

    Example:

    \b
      prchain mine --repos-file repos.txt
      prchain mine --source git --name astral-sh/ruff ~/clones/ruff.git
      prchain mine astral-sh/ruff --since 2024-06-01 --limit 500
      prchain mine --repos-file repos.txt --backend ray   # one Ray task per repository
    """
    from prchain.app.pipeline import mine_from_config, read_repos_file

    config = build_config(
        config_path,
        overrides,
        db_url,
        **{"scale.backend": backend, "scale.ray_address": ray_address},
    )
    targets = list(repos) + (read_repos_file(repos_file) if repos_file else [])
    if not targets:
        raise ConfigError("give at least one REPO or --repos-file FILE")
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task("mining", total=None)

        def report(repo: str, done: int, total: int | None) -> None:
            bar.update(task, description=f"mining {repo}", completed=done, total=total)

        summary = mine_from_config(
            config,
            targets,
            source=source,
            clone_dir=clone_dir,
            name=name,
            since=since,
            limit=limit,
            progress=report,
        )
    console = SafeConsole()
    console.print(summary_table(summary))
    for r in summary.repos:
        if r.kinds:  # how the PRs were found: a source that tells (git) says it per kind
            kinds = ", ".join(f"{kind} {n}" for kind, n in r.kinds.items())
            found = sum(n for kind, n in r.kinds.items() if not kind.startswith("skipped"))
            console.print(f"{r.repo}: {found} PRs found in history ({kinds})")


def summary_table(summary: MineSummary) -> Table:
    """One row per repository; numbers never wrap, the name folds, so 80 columns hold it."""
    table = Table(
        title="prchain mine",
        box=box.SIMPLE_HEAD,
        caption=_per_pr_caption(summary),
        collapse_padding=True,
        pad_edge=False,
    )
    table.add_column("repository", overflow="fold", min_width=12)
    for column in ("source", "PRs new/upd", "issues", "refs", "PR→PR", "API req", "points", "s"):
        table.add_column(column, justify="left" if column == "source" else "right", no_wrap=True)
    for r in summary.repos:
        table.add_row(
            r.repo,
            r.source,
            f"{r.prs_new}/{r.prs_updated}",
            str(r.issues),
            str(r.references),
            str(r.pr_pr_references),
            str(r.requests),
            str(r.points),
            f"{r.seconds:.1f}",
        )
    return table


def _per_pr_caption(summary: MineSummary) -> str:
    """Requests and rate-limit points per PR, per repository (the cost of mining one PR)."""
    return "; ".join(
        f"{r.repo}: {r.requests_per_pr:.2f} req/PR, {r.points_per_pr:.3f} points/PR"
        for r in summary.repos
    )
