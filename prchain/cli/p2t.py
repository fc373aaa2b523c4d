"""`prchain p2t graph|curate|stats`: process graphs and curated trajectories (P2T)."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from prchain.app.choices import ABLATIONS, ETA_MODES, GRAPH_FORMATS, OOO_MODES
from prchain.cli import main
from prchain.cli.budget import budget_options, budget_overrides, estimate_table
from prchain.cli.exits import finish
from prchain.cli.options import backend_options, build_config, command_store, config_options
from prchain.cli.safe import SafeConsole, echo
from prchain.core.errors import ConfigError


@main.group()
def p2t() -> None:
    """Curate trajectories against process graphs distilled from gold patches (P2T).

    Example:

    \b
      prchain p2t graph 1:1
      prchain p2t curate --chain 1
      prchain p2t stats
    """


def parse_stage(text: str) -> tuple[int, int]:
    chain, sep, idx = text.partition(":")
    if not sep or not chain.isdigit() or not idx.isdigit():
        raise ConfigError(f"STAGE is CHAIN:IDX (e.g. 3:1), got {text!r}")
    return int(chain), int(idx)


@p2t.command()
@config_options
@click.argument("stage")
@click.option(
    "--rebuild", is_flag=True, help="Run the reverse phase again even if a graph is stored."
)
@click.option(
    "--format", "fmt", type=click.Choice(GRAPH_FORMATS), default="tree", show_default=True
)
def graph(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    stage: str,
    rebuild: bool,
    fmt: str,
) -> None:
    """Show (building it first when missing) the process graph of a chain stage, given as CHAIN:IDX.

    Example:

    \b
      prchain p2t graph 1:2 --format text
    """
    config = build_config(config_path, overrides, db_url)
    chain_id, idx = parse_stage(stage)
    from prchain.app.p2t.graphs import graph_for_stage
    from prchain.app.p2t.views import draw_text, draw_tree

    built, row = graph_for_stage(config, chain_id, idx, rebuild=rebuild)
    if fmt == "json":
        echo(json.dumps(built.to_dict(), indent=1))
        return
    summary = (
        f"chain {chain_id} stage {idx}: {len(built.nodes)} nodes, {len(built.edges)} edges, "
        f"{row.rounds} rounds ({row.stop_reason}), {len(row.pruned)} pruned, ${row.cost_usd:.4f}"
    )
    if fmt == "text":
        echo(summary)
        echo(draw_text(built))
    else:
        SafeConsole().print(draw_tree(built, summary))


@p2t.command()
@config_options
@click.option(
    "--chain",
    "chains",
    type=int,
    multiple=True,
    required=True,
    metavar="ID",
    help="Chain to curate (repeatable).",
)
@click.option(
    "--ablation",
    type=click.Choice(ABLATIONS),
    default="none",
    show_default=True,
    help="no-gate: commit mutated steps unchecked; random-pick: any candidate above the floor.",
)
@click.option(
    "--eta-mode",
    type=click.Choice(ETA_MODES),
    help="Floor: const or frontier_scaled (p2t.eta_mode).",
)
@click.option(
    "--ooo-mode", type=click.Choice(OOO_MODES), help="Out-of-order establishment (p2t.ooo_mode)."
)
@click.option(
    "--workers", type=int, help="Chains curated in parallel, each in its own sandbox (p2t.workers)."
)
@backend_options
@budget_options
def curate(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    chains: tuple[int, ...],
    ablation: str,
    eta_mode: str | None,
    ooo_mode: str | None,
    workers: int | None,
    backend: str | None,
    ray_address: str | None,
    budget_usd: float | None,
    budget_tokens: int | None,
    dry_run: bool,
) -> None:
    """Curate chains stage by stage: graph per stage, windows of seeds and mutations, test-checked.

    Chains run in parallel on the configured backend (--workers, --backend ray). A curation that
    was killed or ran out of budget is resumed from its last committed window. A budget stops the
    run before the call that would pass it; the curation stays resumable.

    Example:

    \b
      prchain p2t curate --chain 1 --set p2t.commit=4
      prchain p2t curate --chain 1 --chain 2 --workers 2 --budget-usd 5
      prchain p2t curate --chain 1 --dry-run
    """
    extra: dict[str, object] = {
        "p2t.eta_mode": eta_mode,
        "p2t.ooo_mode": ooo_mode,
        "p2t.workers": workers,
        "scale.backend": backend,
        "scale.ray_address": ray_address,
        **budget_overrides(budget_usd, budget_tokens),
    }
    if ablation == "no-gate":
        extra["p2t.groundedness_gate"] = "false"
    elif ablation == "random-pick":
        extra["p2t.pick"] = "random"
    config = build_config(config_path, overrides, db_url, **extra)
    from prchain.app.p2t.batch import curate_from_config, plan_curation

    if dry_run:
        SafeConsole().print(estimate_table(plan_curation(config, chains), "p2t curate --dry-run"))
        return
    console = SafeConsole(stderr=True)
    results = curate_from_config(
        config,
        chains,
        on_done=lambda r: console.print(escape(f"chain {r.chain_id}: {r.status} ({r.node})")),
        notify=lambda message: console.print(escape(message)),
    )
    table = Table(title="P2T curation")
    for column in ("chain", "rollout", "status", "admitted stages", "cost $", "node", "reason"):
        table.add_column(column)
    for result in results:
        table.add_row(
            str(result.chain_id),
            str(result.rollout_id),
            f"{result.status} (resumed)" if result.resumed else result.status,
            str(result.admitted_stages),
            f"{result.cost_usd:.4f}",
            result.node or "",
            escape(result.reason) if result.status != "kept" else "",
        )
    SafeConsole().print(table)
    unfinished = sum(r.status not in ("kept", "rejected") for r in results)
    finish(unfinished, f"{unfinished} chain(s) busy elsewhere or lost: run again")


@p2t.command()
@config_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def stats(
    config_path: str | None, overrides: tuple[str, ...], db_url: str | None, as_json: bool
) -> None:
    """Figure-2 quantities of curated stages beside plain rollouts of the same stages.

    Example:

    \b
      prchain p2t stats --json
    """
    config = build_config(config_path, overrides, db_url)
    from prchain.app.p2t.views import compare

    rows, extra = compare(command_store(config, readonly=True).engine)
    if as_json:
        echo(json.dumps({"comparisons": [r.__dict__ for r in rows], **extra}, sort_keys=True))
        return
    table = Table(title=f"P2T vs plain rollout ({rows[0].pairs if rows else 0} paired stages)")
    for column in ("quantity", "plain", "p2t", "Δμ", "p (Mann-Whitney)", "Cliff's δ"):
        table.add_column(column, justify="right")
    for r in rows:
        table.add_row(
            r.quantity,
            f"{r.plain_mean:.3f}",
            f"{r.p2t_mean:.3f}",
            f"{r.shift:+.1%}",
            f"{r.p_value:.3g}",
            f"{r.cliffs_delta:+.2f}",
        )
    console = SafeConsole()
    console.print(table)
    console.print(
        f"curated stages admitted: {extra['curated_stages']}; mean G* coverage {extra['mean_coverage']:.2f}"
    )
