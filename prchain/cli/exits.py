"""The exit-status contract every `prchain` command keeps, in one place.

    0  all work done (including "nothing left to do": every item was already finished)
    1  some work failed, or was skipped for a reason the user must act on
    2  usage or configuration error (bad option, bad config value, missing credentials)

A command that does its work and then finds some of it failed prints its summary as usual and
ends with `finish(failed, what)`; a command that cannot start raises a PrchainError, whose class
says which status it is (`PrchainError.exit_status`: 1, or 2 for configuration errors). Click's
own usage errors already exit 2.
"""

from __future__ import annotations

from enum import IntEnum

import click

from prchain.cli.safe import secho
from prchain.core.errors import PrchainError


class ExitStatus(IntEnum):
    DONE = 0
    WORK_FAILED = 1
    USAGE = 2


CONTRACT = (
    "Exit status: 0 all work done; 1 some work failed or was skipped for a reason you must act "
    "on; 2 usage or configuration error."
)


def status_of(error: PrchainError) -> ExitStatus:
    """The status a deliberate error ends a command with."""
    return ExitStatus(error.exit_status)


def finish(failed: int, what: str = "") -> None:
    """End a command that ran: status 1 (with `what` on stderr) when `failed` > 0, else return."""
    if failed <= 0:
        return
    if what:
        secho(what, fg="yellow", err=True)
    raise click.exceptions.Exit(ExitStatus.WORK_FAILED)
