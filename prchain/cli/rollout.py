"""`prchain rollout`: every pending chain rolled out, with a progress bar and a table of results."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from prchain.app.choices import (
    CONFLICT_POLICIES,
    KEEP_POLICIES,
    KEEP_SIGNALS,
    PRM_VARIANTS,
    SCAFFOLDS,
)
from prchain.cli import main
from prchain.cli.budget import budget_options, budget_overrides, estimate_table
from prchain.cli.exits import finish
from prchain.cli.options import backend_options, build_config, config_options
from prchain.cli.progress import progress_bar
from prchain.cli.safe import SafeConsole, echo, secho
from prchain.core.text import plural

if TYPE_CHECKING:
    from prchain.app.config import Config
    from prchain.app.views import RolloutResult

FAILED = ("failed", "lost")  # results that end `prchain rollout` with exit status 1


@main.command()
@config_options
@click.option(
    "--chain", "chains", type=int, multiple=True, metavar="ID", help="Only this chain (repeatable)."
)
@click.option(
    "--redo",
    "redo",
    type=int,
    multiple=True,
    metavar="ID",
    help="Roll this chain out again (finished or failed), as a new rollout beside the old one "
    "(repeatable).",
)
@click.option("--limit", type=int, help="Roll out at most N pending chains.")
@click.option(
    "--workers", type=int, help="Chains in parallel, each in its own sandbox (agent.workers)."
)
@click.option(
    "--policy",
    type=click.Choice(CONFLICT_POLICIES),
    help="What to do when the carried patch conflicts (environment.conflict_policy).",
)
@click.option(
    "--keep",
    type=click.Choice(KEEP_POLICIES),
    help="Which stages become training data (agent.keep_policy).",
)
@click.option(
    "--keep-on",
    type=click.Choice(KEEP_SIGNALS),
    help="What passes a stage: judge, tests (verified hidden tests) or both (agent.keep_on).",
)
@click.option(
    "--prm",
    "prm_variant",
    type=click.Choice([*PRM_VARIANTS, "none"], case_sensitive=False),
    help="Guide the agent with this SWE-PRM variant (prm.variant).",
)
@click.option(
    "--scaffold",
    type=click.Choice(SCAFFOLDS),
    help="The agent that works each stage: builtin or mini-swe-agent (agent.scaffold; "
    "docs/scaffolds.md).",
)
@click.option("--prm-every", type=int, help="Invoke the PRM every n steps (prm.every).")
@click.option("--prm-window", type=int, help="Show the PRM the last k steps (prm.window).")
@backend_options
@budget_options
def rollout(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    chains: tuple[int, ...],
    redo: tuple[int, ...],
    limit: int | None,
    workers: int | None,
    policy: str | None,
    keep: str | None,
    keep_on: str | None,
    prm_variant: str | None,
    scaffold: str | None,
    prm_every: int | None,
    prm_window: int | None,
    backend: str | None,
    ray_address: str | None,
    budget_usd: float | None,
    budget_tokens: int | None,
    dry_run: bool,
) -> None:
    """Roll the agent through each pending chain, judge every stage, keep or reject the trajectory.

    A killed run resumes where it stopped: finished stages are kept and the interrupted stage
    starts again from its beginning; so does a rollout that failed on infrastructure (a server or
    sandbox failure), once rerun. Chains with a finished rollout are skipped; --redo ID rolls one
    out again beside the old rollout. A budget (--budget-usd / --budget-tokens, shared by all
    workers) stops the run the same resumable way. With --backend ray each chain is one Ray task
    on whichever node has a free sandbox slot (see docs/scale.md).

    Example:

    \b
      prchain rollout --workers 4
      prchain rollout --backend ray --ray-address auto --db postgresql+psycopg://prchain@db/prchain
      prchain rollout --chain 12 --keep prefix --prm DR --prm-every 5
      prchain rollout --redo 12
      prchain rollout --scaffold mini-swe-agent --chain 12
      prchain rollout --dry-run && prchain rollout --budget-usd 20
    """
    config = build_config(
        config_path,
        overrides,
        db_url,
        **{
            "agent.workers": workers,
            "environment.conflict_policy": policy,
            "agent.keep_policy": keep,
            "agent.keep_on": keep_on,
            "prm.variant": prm_variant,
            "agent.scaffold": scaffold,
            "prm.every": prm_every,
            "prm.window": prm_window,
            "scale.backend": backend,
            "scale.ray_address": ray_address,
            **budget_overrides(budget_usd, budget_tokens),
        },
    )
    if dry_run:
        from prchain.app.rollout import plan_rollouts_from_config

        rows = plan_rollouts_from_config(config, chain_ids=chains, limit=limit, redo=redo)
        SafeConsole().print(estimate_table(rows, "rollout --dry-run"))
        return
    results = _roll_out(config, chains, limit, redo)
    if not results:
        echo(
            "nothing to do: every chain with queries has a finished rollout "
            "(`prchain rollout --redo ID` rolls one out again)"
        )
        return
    _report(results)


def _roll_out(
    config: Config, chains: tuple[int, ...], limit: int | None, redo: tuple[int, ...]
) -> list[RolloutResult]:
    """The rollouts, with a progress bar that counts finished chains per node."""
    from prchain.app.rollout import rollout_from_config

    console = SafeConsole(stderr=True)
    nodes: Counter[str] = Counter()

    def done(result: RolloutResult) -> None:
        nodes[result.node or "?"] += 1
        per_node = " · ".join(f"{node} {n}" for node, n in sorted(nodes.items()))
        description = f"chain {result.chain_id}: {_status(result)} ({per_node})"
        progress.update(task, advance=1, description=escape(description))

    with progress_bar(console) as progress:
        task = progress.add_task("rollouts", total=None)
        return rollout_from_config(
            config,
            chain_ids=chains,
            limit=limit,
            on_start=lambda n: progress.update(task, total=n),
            on_done=done,
            notify=lambda message: console.print(escape(message)),
            redo=redo,
        )


def _report(results: list[RolloutResult]) -> None:
    """The results table, a warning per imperfect resume, and the exit status."""
    SafeConsole().print(_results_table(results))
    for r in results:
        for note in r.resume_notes:  # the resumed sandbox is not exactly what the agent left
            secho(f"warning: chain {r.chain_id} resumed: {note}", fg="yellow", err=True)
    failed = [r for r in results if r.status in FAILED]
    skipped = [r for r in results if r.status not in FAILED and r.needs_action]
    finish(
        len(failed),
        f"{plural(len(failed), 'rollout')} failed; fix the cause and rerun to resume "
        "(finished stages are kept)",
    )
    finish(
        len(skipped),
        f"{plural(len(skipped), 'rollout')} skipped stages whose query leaks; "
        "regenerate them (see the reason) and roll out again with --redo",
    )


def _status(result: RolloutResult) -> str:
    """The chain's final state; a rerun task (its node died) or a rerun command says so."""
    return f"{result.status} (retried)" if result.retried else result.status


def _results_table(results: list[RolloutResult]) -> Table:
    table = Table(title="Rollouts")
    for column in ("chain", "rollout", "status", "kept stages", "scores", "node", "reason"):
        table.add_column(column)
    for r in results:
        scores = " ".join("-" if s is None else f"{s:.2f}" for s in r.scores)
        table.add_row(
            str(r.chain_id),
            str(r.rollout_id),
            _status(r),
            str(r.kept_stages),
            scores,
            r.node or "",
            escape(r.reason or ""),
        )
    return table
