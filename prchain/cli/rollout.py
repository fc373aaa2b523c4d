"""`prchain rollout`, `prchain trajectories list|show` and `prchain export`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from prchain.app.choices import (
    CONFLICT_POLICIES,
    EXPORT_FORMATS,
    KEEP_POLICIES,
    KEEP_SIGNALS,
    PRM_VARIANTS,
)
from prchain.cli import main
from prchain.cli.budget import budget_options, budget_overrides, estimate_table
from prchain.cli.exits import finish
from prchain.cli.options import backend_options, build_config, config_options
from prchain.core.errors import NothingToDo
from prchain.core.text import plural

if TYPE_CHECKING:
    from prchain.app.views import RolloutResult, RolloutView

PREVIEW = 300  # characters of each message `trajectories show` prints
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
            "prm.every": prm_every,
            "prm.window": prm_window,
            "scale.backend": backend,
            "scale.ray_address": ray_address,
            **budget_overrides(budget_usd, budget_tokens),
        },
    )
    from prchain.app.rollout import plan_rollouts_from_config, rollout_from_config

    if dry_run:
        rows = plan_rollouts_from_config(config, chain_ids=chains, limit=limit, redo=redo)
        Console().print(estimate_table(rows, "rollout --dry-run"))
        return

    console = Console(stderr=True)
    nodes: Counter[str] = Counter()

    def done(result: RolloutResult) -> None:
        nodes[result.node or "?"] += 1
        per_node = " · ".join(f"{node} {n}" for node, n in sorted(nodes.items()))
        description = f"chain {result.chain_id}: {_status(result)} ({per_node})"
        progress.update(task, advance=1, description=escape(description))

    with _progress(console) as progress:
        task = progress.add_task("rollouts", total=None)
        results = rollout_from_config(
            config,
            chain_ids=chains,
            limit=limit,
            on_start=lambda n: progress.update(task, total=n),
            on_done=done,
            notify=lambda message: console.print(escape(message)),
            redo=redo,
        )
    if not results:
        click.echo(
            "nothing to do: every chain with queries has a finished rollout "
            "(`prchain rollout --redo ID` rolls one out again)"
        )
        return
    Console().print(_results_table(results))
    for r in results:
        for note in r.resume_notes:  # the resumed sandbox is not exactly what the agent left
            click.secho(f"warning: chain {r.chain_id} resumed: {note}", fg="yellow", err=True)
    failed = [r for r in results if r.status in FAILED]
    finish(
        len(failed),
        f"{plural(len(failed), 'rollout')} failed; fix the cause and rerun to resume "
        "(finished stages are kept)",
    )


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
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


@main.group()
def trajectories() -> None:
    """Inspect rolled-out trajectories.

    Example:

    \b
      prchain trajectories list
      prchain trajectories show 3
    """


@trajectories.command("list")
@config_options
@click.option("--limit", default=100, show_default=True, help="Newest N rollouts.")
def list_command(
    config_path: str | None, overrides: tuple[str, ...], db_url: str | None, limit: int
) -> None:
    """List rollouts, newest first, with status, kept stages, size and cost.

    Example:

    \b
      prchain trajectories list --limit 20
    """
    from prchain.app.views import list_rollouts, make_engine

    config = build_config(config_path, overrides, db_url)
    table = Table(title="Trajectories")
    for column in (
        "id",
        "chain",
        "status",
        "kept",
        "steps",
        "tool calls",
        "tokens",
        "cost $",
        "reason",
    ):
        table.add_column(column)
    for r in list_rollouts(make_engine(config.store.url, readonly=True), limit):
        table.add_row(
            str(r.id),
            str(r.chain_id),
            r.status,
            str(r.kept_stages),
            str(r.agent_steps),
            str(r.tool_calls),
            str(r.trajectory_tokens),
            f"{r.cost_usd:.4f}",
            r.reason or "",
        )
    Console().print(table)


@trajectories.command("show")
@config_options
@click.argument("rollout_id", type=int)
@click.option("--full", is_flag=True, help="Print whole messages instead of the first characters.")
def show_command(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    rollout_id: int,
    full: bool,
) -> None:
    """Print one trajectory: stage boundaries, every message and tool call, judge verdicts.

    Example:

    \b
      prchain trajectories show 3 --full | less -R
    """
    from prchain.app.views import load_rollout, make_engine

    config = build_config(config_path, overrides, db_url)
    view = load_rollout(make_engine(config.store.url, readonly=True), rollout_id)
    if view is None:
        raise NothingToDo(
            f"rollout {rollout_id} does not exist", hint="`prchain trajectories list` shows the ids"
        )
    _print_view(Console(), view, None if full else PREVIEW)


def _print_view(console: Console, view: RolloutView, limit: int | None) -> None:
    r = view.rollout
    console.print(
        f"[bold]rollout {r.id}[/] chain {r.chain_id} · {r.status} · kept {r.kept_stages} stage(s) · "
        f"{r.agent_steps} steps · {r.tool_calls} tool calls · ${r.cost_usd:.4f}"
        + (f"\n{escape(r.reason)}" if r.reason else "")
    )
    verdicts = {(j.stage_idx, j.round): j for j in view.judgements}
    stages = {s.stage_idx: s for s in view.stages}
    transitions = {t.stage_idx: t for t in view.transitions}
    current, submits = 0, 0
    for step in view.steps:
        if step.stage_idx != current:
            current, submits = step.stage_idx, 0
            _stage_rule(console, current, stages.get(current), transitions.get(current))
        _print_message(console, step.kind, step.message, limit)
        if (
            step.kind == "tool"
            and (step.tool_call or {}).get("function", {}).get("name") == "submit"
        ):
            verdict = verdicts.get((current, submits))
            submits += 1
            if verdict is not None:
                line = Text(
                    f"  judge round {verdict.round}: score {verdict.score:.2f} ",
                    style="green" if verdict.passed else "red",
                )
                line.append(verdict.comment if limit is None else " ".join(verdict.comment.split()))
                console.print(line, no_wrap=limit is not None, overflow="ellipsis")


def _stage_rule(console: Console, idx: int, stage: object, transition: object) -> None:
    status = getattr(stage, "status", "?")
    detail = f" · entered {getattr(transition, 'outcome', '?')}" if transition is not None else ""
    reason = getattr(stage, "reason", None)
    console.rule(escape(f"stage {idx} · {status}{detail}" + (f" · {reason}" if reason else "")))


def _print_message(console: Console, kind: str, message: dict, limit: int | None) -> None:
    """One message; the preview is one line per message and per tool call, cut with an ellipsis
    at the terminal's width (an 80-column terminal shows it without wrapping word by word)."""
    content = message.get("content") or ""
    if limit is not None:
        head = Text(f"{kind} ", style="bold cyan")
        head.append(f"({message['role']})")
        if content:
            head.append(": " + " ".join(str(content)[: limit * 2].split()))
        console.print(head, no_wrap=True, overflow="ellipsis", highlight=False)
    else:
        console.print(
            f"[bold cyan]{kind}[/] ({message['role']})"
            + (f": {escape(content)}" if content else ""),
            highlight=False,
        )
    for call in message.get("tool_calls") or []:
        line = f"  → {call['function']['name']} {call['function']['arguments']}"
        if limit is not None:
            console.print(
                Text("  " + " ".join(line.split())),
                no_wrap=True,
                overflow="ellipsis",
                highlight=False,
            )
        else:
            console.print(line, markup=False)


@main.command("export")
@config_options
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--min-score",
    type=float,
    help="Stage score a kept stage needs (default agent.judge_threshold).",
)
@click.option(
    "--keep",
    type=click.Choice(KEEP_POLICIES),
    help="all stages, or the longest passing prefix (default agent.keep_policy).",
)
@click.option(
    "--keep-on",
    type=click.Choice(KEEP_SIGNALS),
    help="What passes a stage: judge, tests or both (default agent.keep_on).",
)
@click.option(
    "--keep-prm/--no-keep-prm",
    default=None,
    help="Keep PRM guidance turns (default prm.keep_in_export).",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(EXPORT_FORMATS),
    default="openai",
    show_default=True,
    help="openai (messages + tools) or sharegpt (LLaMA-Factory). A .parquet OUT writes Parquet.",
)
@click.option(
    "--keep-reasoning",
    is_flag=True,
    help="Export reasoning models' reasoning (openai: reasoning_content; sharegpt: <think>).",
)
@click.option(
    "--manifest",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Export exactly the rollouts a previous export's manifest lists.",
)
def export_command(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    out: Path,
    min_score: float | None,
    keep: str | None,
    keep_on: str | None,
    keep_prm: bool | None,
    format_: str,
    keep_reasoning: bool,
    manifest: Path | None,
) -> None:
    """Write kept trajectories for a trainer, one chain per row, with a dataset card and manifest.

    OUT ending in .parquet writes Parquet, anything else JSON Lines. Beside OUT: README.md (the
    dataset card: counts, repos, filters, models, prompt hashes, config) and OUT.manifest.json
    (the exported ids; --manifest reproduces that subset).

    Example:

    \b
      prchain export data/trajectories.jsonl --min-score 0.8 --keep prefix
      prchain export data/sharegpt/train.parquet --format sharegpt --keep-reasoning
    """
    from prchain.app.config import save_config
    from prchain.app.rollout import public_config
    from prchain.app.views import ExportOptions, export_dataset, make_engine, read_manifest

    config = build_config(
        config_path, overrides, db_url, **{"agent.keep_policy": keep, "agent.keep_on": keep_on}
    )
    options = ExportOptions(
        format=format_,  # type: ignore[arg-type]  # click.Choice of EXPORT_FORMATS
        min_score=config.agent.judge_threshold if min_score is None else min_score,
        keep=config.agent.keep_policy,
        keep_on=config.agent.keep_on,
        keep_prm=config.prm.keep_in_export if keep_prm is None else keep_prm,
        keep_reasoning=keep_reasoning,
        leak_min_chars=config.agent.leak_min_chars,
        rollout_ids=tuple(read_manifest(manifest)) if manifest else None,
    )
    summary = export_dataset(
        make_engine(config.store.url, readonly=True), out, options, public_config(config)
    )
    save_config(config, out.parent, name=f"{out.stem}.config.json")
    table = Table(title=f"Export ({format_}) → {summary.path}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name, value in [
        ("trajectories written", summary.written),
        ("tool calls", summary.tool_calls),
        ("tokens (final context, summed)", summary.tokens),
        ("secrets redacted", summary.redactions),
        *((f"skipped: {why}", n) for why, n in summary.skipped.items()),
        ("dataset card", summary.card),
        ("manifest", summary.manifest),
    ]:
        table.add_row(name, str(value))
    Console().print(table)
