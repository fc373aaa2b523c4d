"""`prchain stats`."""

from __future__ import annotations

import json

import click

from prchain.cli import main
from prchain.cli.options import build_config, command_store, config_options
from prchain.cli.safe import SafeConsole, echo


@main.command()
@config_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
def stats(
    config_path: str | None, overrides: tuple[str, ...], db_url: str | None, as_json: bool
) -> None:
    """Show what the store holds: repos, PRs, references, chains, queries, trajectories, PRM use.

    Example:

    \b
      prchain stats
      prchain stats --json | jq .pr_pr_references
    """
    config = build_config(config_path, overrides, db_url)
    from prchain.app.stats import collect_stats, render_stats

    data = collect_stats(command_store(config, readonly=True).engine)
    if as_json:
        echo(json.dumps(data, sort_keys=True, default=str))
        return
    console = SafeConsole()
    for table in render_stats(data):
        console.print(table)
