"""`prchain db`: the store's schema revision, and upgrading a store an earlier prchain made."""

from __future__ import annotations

import sys

from prchain.cli import CONTEXT_SETTINGS, main
from prchain.cli.options import build_config, config_options
from prchain.cli.safe import echo


@main.group(context_settings=CONTEXT_SETTINGS)
def db() -> None:
    """The store's schema: which revision it has, and upgrading it to this prchain's.

    Every command checks the revision when it opens the store and refuses an older one (run
    `prchain db upgrade`) or one a newer prchain wrote.

    Example:

    \b
      prchain db current
      prchain db upgrade --db postgresql+psycopg://prchain@host/prchain
    """


@db.command()
@config_options
def upgrade(config_path: str | None, overrides: tuple[str, ...], db_url: str | None) -> None:
    """Migrate the store to this prchain's schema, in one transaction; rows are kept.

    A store made before migrations existed is recognised by its tables. Back the store up first
    (copy the SQLite file, or pg_dump). Running it again is harmless.

    Example:

    \b
      prchain db upgrade
      prchain db upgrade --db sqlite:///data/old.db
    """
    config = build_config(config_path, overrides, db_url)
    from prchain.app.store import upgrade_store

    done = upgrade_store(config.store.url)
    if done.stamped_shape and done.before == done.after:
        echo(f"db: marked the store as {done.after} (recognised by its tables)")
    elif done.before == done.after:
        echo(f"db: the store is at {done.after} already; nothing to do")
    elif done.before is None:
        echo(f"db: created an empty store at {done.after}")
    else:
        how = " (recognised by its tables: it predates migrations)" if done.stamped_shape else ""
        echo(f"db: upgraded the store from {done.before}{how} to {done.after}")


@db.command()
@config_options
def current(config_path: str | None, overrides: tuple[str, ...], db_url: str | None) -> None:
    """Print the store's schema revision and this prchain's; exit 1 when they differ.

    Example:

    \b
      prchain db current
    """
    config = build_config(config_path, overrides, db_url)
    from prchain.app.store import store_revision

    state = store_revision(config.store.url)
    if state.current is None:
        shown = "empty (made at the current schema when a command first writes)"
    elif not state.recognised:
        shown = f"{state.current or 'not a prchain store'} (unknown to this prchain)"
    else:
        shown = state.current + ("" if state.stamped else " (unstamped: predates migrations)")
    echo(f"store:   {state.url}\nschema:  {shown}\nprchain: {state.head}")
    if state.current is not None and (state.current != state.head or not state.stamped):
        hint = "run `prchain db upgrade`" if state.recognised else "this prchain will not use it"
        echo(f"hint: {hint}", err=True)
        sys.exit(1)
