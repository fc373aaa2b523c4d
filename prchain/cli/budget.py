"""The --budget-usd / --budget-tokens / --dry-run options shared by every command that calls LLMs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich import box
from rich.table import Table

if TYPE_CHECKING:
    from prchain.llm.estimate import RoleEstimate

F = TypeVar("F", bound=Callable[..., Any])


def budget_options(func: F) -> F:
    func = click.option(
        "--dry-run",
        is_flag=True,
        help="Print the calls, tokens and cost the run is expected to take, then stop.",
    )(func)
    func = click.option(
        "--budget-tokens",
        type=click.IntRange(min=1),
        help="Stop before the LLM call that would pass this many tokens (llm.budget_tokens).",
    )(func)
    func = click.option(
        "--budget-usd",
        type=click.FloatRange(min=0, min_open=True),
        help="Stop before the LLM call that would spend more than this (llm.budget_usd).",
    )(func)
    return func


def budget_overrides(budget_usd: float | None, budget_tokens: int | None) -> dict[str, Any]:
    return {"llm.budget_usd": budget_usd, "llm.budget_tokens": budget_tokens}


def estimate_table(rows: Sequence[RoleEstimate], title: str) -> Table:
    """Numbers never wrap and the basis of each row goes below the table, so 80 columns hold it."""
    basis = "; ".join(f"{r.role}: {r.basis}" for r in rows)
    table = Table(
        title=title,
        box=box.SIMPLE_HEAD,
        caption=f"basis: {basis}" if rows else None,
        collapse_padding=True,
        pad_edge=False,
    )
    table.add_column("role", no_wrap=True)
    table.add_column("model", overflow="fold")
    for column in ("calls", "prompt tok", "compl. tok", "cost $"):
        table.add_column(column, justify="right", no_wrap=True)
    for r in rows:
        table.add_row(
            r.role,
            r.model,
            str(r.calls),
            f"{r.prompt_tokens:,}",
            f"{r.completion_tokens:,}",
            f"{r.cost_usd:.4f}",
        )
    total = sum(r.cost_usd for r in rows)
    tokens = sum(r.prompt_tokens + r.completion_tokens for r in rows)
    table.add_row(
        "total", f"{tokens:,} tokens", str(sum(r.calls for r in rows)), "", "", f"{total:.4f}"
    )
    return table
