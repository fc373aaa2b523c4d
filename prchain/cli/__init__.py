"""The `prchain` command: a thin skin over the library.

Every command parses its options, loads the one config, calls one library function and prints a
summary. Errors prchain raises on purpose are shown as one line plus a hint.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from prchain.cli.exits import CONTRACT, status_of
from prchain.cli.safe import echo, secho
from prchain.core.errors import PrchainError

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# Each module adds its commands to `main` when imported.
COMMAND_MODULES = (
    "mine",
    "run",
    "stats",
    "chains",
    "tasks",
    "vet",
    "queries",
    "env",
    "rollout",
    "trajectories",
    "export",
    "verdicts",
    "p2t",
    "report",
    "config",
    "db",
    "dev",
)


def _with_contract(
    command: click.Command, ctx: click.Context, formatter: click.HelpFormatter
) -> None:
    click.Command.format_epilog(command, ctx, formatter)
    formatter.write_paragraph()
    with formatter.indentation():
        formatter.write_text(CONTRACT)


class PrchainCommand(click.Command):
    """Every command's help ends with the exit-status contract (prchain.cli.exits)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _with_contract(self, ctx, formatter)


class PrchainGroup(click.Group):
    """Turns deliberate errors into one clear line and the contract's exit status (1 failed work,
    2 usage or configuration) instead of a traceback."""

    command_class = PrchainCommand
    group_class = type  # subgroups are PrchainGroups too: the contract holds at every level

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _with_contract(self, ctx, formatter)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PrchainError as exc:
            _fail(exc)
        except Exception as exc:
            known = _known_failure(exc)
            if known is None:
                raise
            _fail(known)


def _fail(exc: PrchainError) -> None:
    secho(f"error: {exc}", fg="red", err=True)
    if exc.hint:
        echo(f"hint: {exc.hint}", err=True)
    sys.exit(status_of(exc))


def _known_failure(exc: Exception) -> PrchainError | None:
    """Failures of the store's driver past the first connection (a server gone, a file damaged
    mid-run) are one line too; anything else is a bug and keeps its traceback."""
    if not type(exc).__module__.startswith("sqlalchemy"):
        return None
    from sqlalchemy.exc import DBAPIError, IntegrityError  # loaded: the exception came from it

    from prchain.app.store import store_error

    # A violated constraint is our bug, not the user's store: it keeps its traceback.
    if isinstance(exc, DBAPIError) and not isinstance(exc, IntegrityError):
        return store_error(exc)
    return None


@click.group(cls=PrchainGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="prchain")
def main() -> None:
    """Turn chains of real pull requests into long-horizon training data for coding agents.

    The whole job in one command (each step below, resumable, then a funnel):

    \b
      prchain run         mine → chains → queries → env → tests → tasks → rollout → export

    The pipeline, one command per step, each reading only the store:

    \b
      prchain mine        PRs, patches and references → store
      prchain chains      reference graph → ordered chains of PRs
      prchain queries     one intent-level sub-query per PR (LLM)
      prchain tasks       chains as task files for agents and single-PR tools
      prchain env         sandbox images for the rollouts
      prchain tests       FAIL_TO_PASS / PASS_TO_PASS per stage, run in the sandbox
      prchain rollout     the agent works through each chain, judged per stage
      prchain p2t         process graphs from gold patches; curated trajectories
      prchain export      kept trajectories → SFT-ready JSONL
      prchain stats       what the store holds, stage by stage
      prchain report      an offline HTML report of the store
      prchain config      the effective configuration, credentials masked
      prchain db          the store's schema revision; upgrading an older store

    Example:

    \b
      prchain mine --source git --name astral-sh/ruff ~/clones/ruff
      prchain stats
    """


def _load_commands() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(f"prchain.cli.{name}")


_load_commands()
