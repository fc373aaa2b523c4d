"""`prchain config show`."""

from __future__ import annotations

import json

import click

from prchain.cli import main
from prchain.cli.options import build_config, config_options
from prchain.cli.safe import echo


@main.group("config")
def config_group() -> None:
    """Inspect the configuration a command would run with.

    Example:

    \b
      prchain config show --set llm.workers=8
    """


@config_group.command("show")
@config_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of YAML.")
def show(
    config_path: str | None, overrides: tuple[str, ...], db_url: str | None, as_json: bool
) -> None:
    """Print the effective config (defaults ← file ← --set ← --db), credentials masked.

    Example:

    \b
      prchain config show
      prchain config show --config prchain.yaml --db postgresql+psycopg://me:pw@db/prchain
    """
    import yaml

    from prchain.app.config import masked_config

    data = masked_config(build_config(config_path, overrides, db_url))
    if as_json:
        echo(json.dumps(data, indent=2, sort_keys=True))
    else:
        echo(yaml.safe_dump(data, sort_keys=False), nl=False)
