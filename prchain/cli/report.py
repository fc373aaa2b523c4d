"""`prchain report OUT_DIR`: a static site of the store that opens from disk with no network."""

from __future__ import annotations

from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from prchain.cli import main
from prchain.cli.options import build_config, config_options
from prchain.cli.safe import SafeConsole, echo


@main.command()
@config_options
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--max-chain-pages",
    type=click.IntRange(min=1),
    help="Chain pages written, best chains first (report.max_chain_pages).",
)
def report(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    out_dir: Path,
    max_chain_pages: int | None,
) -> None:
    """Write an HTML report of the store: funnel, plots, chain and trajectory pages.

    Every script and style is written inside OUT_DIR; open OUT_DIR/index.html in a browser.

    Example:

    \b
      prchain report data/report
      prchain report data/ruff-report --db sqlite:///data/ruff.db --set report.max_diff_lines=200
    """
    from prchain.app.report import report_from_config

    config = build_config(
        config_path, overrides, db_url, **{"report.max_chain_pages": max_chain_pages}
    )
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=True, console=SafeConsole(stderr=True)) as bar:
        task = bar.add_task("reading the store", total=None)

        def progress(description: str, done: int, total: int) -> None:
            bar.update(task, description=description, completed=done, total=total)

        summary = report_from_config(config, out_dir, progress)
    echo(
        f"wrote {summary.out_dir / 'index.html'}: {summary.chain_pages} chain pages, "
        f"{summary.trajectory_pages} trajectory pages, {summary.bytes / 1e6:.1f} MB "
        f"in {summary.seconds:.1f} s"
    )
