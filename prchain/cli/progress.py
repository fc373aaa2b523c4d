"""The progress bar long commands (rollout, tests verify, env builds) draw on stderr."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

Report = Callable[[str, int, int], None]


def progress_bar(console: Console | None = None, *, transient: bool = False) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=transient,
    )


@contextmanager
def reporting(first: str) -> Iterator[Report]:
    """A bar that is gone when the work ends, and the `progress(description, done, total)`
    callback the library steps call to move it."""
    with progress_bar(transient=True) as bar:
        task = bar.add_task(first, total=None)

        def report(description: str, done: int, total: int) -> None:
            bar.update(task, description=description, completed=done, total=total)

        yield report
