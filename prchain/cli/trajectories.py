"""`prchain trajectories list|show`: rolled-out trajectories, as a table or one conversation."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from prchain.cli import main
from prchain.cli.options import build_config, command_store, config_options
from prchain.cli.safe import SafeConsole
from prchain.core.errors import NothingToDo

if TYPE_CHECKING:
    from prchain.app.views import RolloutView

PREVIEW = 300  # characters of each message `trajectories show` prints


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
    from prchain.app.views import list_rollouts

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
    for r in list_rollouts(command_store(config, readonly=True).engine, limit):
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
    SafeConsole().print(table)


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
    from prchain.app.views import load_rollout

    config = build_config(config_path, overrides, db_url)
    view = load_rollout(command_store(config, readonly=True).engine, rollout_id)
    if view is None:
        raise NothingToDo(
            f"rollout {rollout_id} does not exist", hint="`prchain trajectories list` shows the ids"
        )
    _print_view(SafeConsole(), view, None if full else PREVIEW)


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
