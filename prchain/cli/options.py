"""Options shared by every command and the one place that turns them into a Config."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from prchain.app.config import Config, load_config

if TYPE_CHECKING:
    from prchain.store.handle import Store

F = TypeVar("F", bound=Callable[..., Any])


def config_options(func: F) -> F:
    """--config FILE, --set key=value (repeatable) and --db URL."""
    func = click.option(
        "--db",
        "db_url",
        metavar="URL",
        help="SQLAlchemy URL of the store (default sqlite:///data/prchain.db; postgresql+psycopg://… works).",
    )(func)
    func = click.option(
        "--set",
        "overrides",
        multiple=True,
        metavar="KEY=VALUE",
        help="Override one config field, e.g. --set llm.workers=8 (repeatable).",
    )(func)
    func = click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False),
        help="YAML config file (default ./prchain.yaml when present).",
    )(func)
    return func


def build_config(
    config_path: str | None, overrides: tuple[str, ...], db_url: str | None, **extra: Any
) -> Config:
    """Layer the config file, the --set overrides, then explicit command options (given ones only)."""
    items = list(overrides)
    if db_url:
        items.append(f"store.url={db_url}")
    items += [f"{key}={value}" for key, value in extra.items() if value is not None]
    return load_config(config_path, items)


def backend_options(func: F) -> F:
    """--backend local|ray and --ray-address ADDR (scale.backend, scale.ray_address)."""
    from prchain.app.choices import BACKEND_NAMES

    func = click.option(
        "--ray-address",
        metavar="ADDR",
        help="Ray cluster to join (auto, host:6379); unset starts Ray here (scale.ray_address).",
    )(func)
    func = click.option(
        "--backend",
        type=click.Choice(BACKEND_NAMES),
        help="Where the work runs: threads here, or one Ray task each (scale.backend).",
    )(func)
    return func


def registry_option(func: F) -> F:
    """--registry HOST:PORT[/PREFIX] (scale.registry): where era images are pushed and pulled."""
    return click.option(
        "--registry",
        metavar="HOST:PORT[/PREFIX]",
        help="Registry era images are pushed to once built and pulled from by a node that lacks "
        "one (scale.registry).",
    )(func)


def repos_options(func: F) -> F:
    """REPOS..., --repos-file FILE, --source github|git and --name OWNER/NAME: what to mine."""
    from prchain.app.choices import SOURCE_NAMES

    func = click.option(
        "--name",
        metavar="OWNER/NAME",
        help="The GitHub name of a --source git clone (else guessed).",
    )(func)
    func = click.option(
        "--source",
        type=click.Choice(SOURCE_NAMES),
        help="Where PRs come from (default prchain.miner.source).",
    )(func)
    func = click.option(
        "--repos-file",
        type=click.Path(dir_okay=False, exists=True),
        help="One repository per line; # comments.",
    )(func)
    return click.argument("repos", nargs=-1)(func)


def command_store(config: Config, *, readonly: bool = False) -> Store:
    """The store this command works on: opened here, once, and closed when the command ends
    (`readonly`: a command that only reads; see `prchain.store.opener.make_engine`)."""
    from prchain.app.store import open_store  # SQLAlchemy loads only for commands that use it

    context = click.get_current_context()
    return context.with_resource(open_store(config.store.url, readonly=readonly))
