"""The chains section of `prchain stats`: chains by length, stages, stages with a query, and what
each rule dropped in the latest build of each strategy, with that build's length distribution and
why its chains are no longer (`prchain.chains.building.lengths`)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from prchain.chains.building.lengths import STOP_REASONS, length_rows
from prchain.store.models import Chain, ChainBuild, ChainStage


def _latest(session: Session) -> list[ChainBuild]:
    """The latest `chains build` of each strategy, by strategy name."""
    latest = select(ChainBuild.strategy, func.max(ChainBuild.id)).group_by(ChainBuild.strategy)
    ids = [build_id for _strategy, build_id in session.execute(latest)]
    builds = session.scalars(select(ChainBuild).where(ChainBuild.id.in_(ids)))
    return sorted(builds, key=lambda b: b.strategy)


def latest_builds(session: Session) -> dict[str, list[dict[str, Any]]]:
    """strategy → the rules of its latest `chains build`."""
    return {b.strategy: list(b.rules or []) for b in _latest(session)}


def latest_lengths(session: Session) -> dict[str, list[list[Any]]]:
    """strategy → its latest build's [length, chains, {reason: chains}] rows, lengths 2 to the
    build's longest (a build of one-PR chains, `single`, has none)."""
    found = {}
    for build in _latest(session):
        graph = build.graph or {}
        high = int(graph.get("max_len", 5))
        if high > 1:
            rows = length_rows(graph.get("lengths", {}), graph.get("stops", {}), 2, high)
            found[build.strategy] = [list(row) for row in rows]
    return found


def latest_yield(session: Session) -> dict[str, dict[str, Any]]:
    """strategy → its latest build's PRs read, stages selected and stages per 1,000 PRs (builds
    recorded before these were kept have none)."""
    keys = ("prs", "stages", "per_thousand")
    return {
        b.strategy: {k: (b.graph or {})[k] for k in keys}
        for b in _latest(session)
        if all(k in (b.graph or {}) for k in keys)
    }


def collect(session: Session) -> dict[str, Any]:
    by_length = session.execute(
        select(Chain.length, func.count()).group_by(Chain.length).order_by(Chain.length)
    )
    by_strategy = session.execute(select(Chain.strategy, func.count()).group_by(Chain.strategy))
    return {
        "chains": session.scalar(select(func.count()).select_from(Chain)) or 0,
        "chains_by_length": {str(length): count for length, count in by_length},
        "chains_by_strategy": {name: count for name, count in by_strategy},
        "stages": session.scalar(select(func.count()).select_from(ChainStage)) or 0,
        "queries": session.scalar(
            select(func.count()).select_from(ChainStage).where(ChainStage.query.is_not(None))
        )
        or 0,
        "chain_build_drops": latest_builds(session),
        "chain_build_lengths": latest_lengths(session),
        "chain_build_yield": latest_yield(session),
    }


def render(data: dict[str, Any]) -> list[Table]:
    table = Table(title="Chains")
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("chains", str(data.get("chains", 0)))
    for length, count in data.get("chains_by_length", {}).items():
        table.add_row(f"  of length {length}", str(count))
    for name, count in data.get("chains_by_strategy", {}).items():
        table.add_row(f"  by strategy {name}", str(count))
    table.add_row("stages", str(data.get("stages", 0)))
    table.add_row("stages with a query", str(data.get("queries", 0)))
    for name, got in data.get("chain_build_yield", {}).items():
        table.add_row(
            f"  latest build ({name}): stages per 1,000 PRs",
            f"{got['per_thousand']} ({got['stages']} of {got['prs']} PRs)",
        )
    tables = [table]
    for strategy, rows in data.get("chain_build_lengths", {}).items():
        tables.append(lengths_table(rows, f"latest build ({strategy}): chains by length"))
    for strategy, rules in data.get("chain_build_drops", {}).items():
        tables.append(rules_table(rules, f"latest build ({strategy}): dropped by rule"))
    return tables


def rules_table(rules: list[dict[str, Any]], title: str = "dropped by rule") -> Table:
    """Per rule: the PRs, links and chains it dropped (a dash where the rule does not act)."""
    table = Table("rule", "acts on", "PRs", "links", "chains", title=title)
    for rule in rules:
        level = rule["level"]
        table.add_row(
            rule["rule"],
            level,
            str(rule["prs"]) if level == "pr" else "-",
            str(rule["links"]) if level != "pr" else "-",
            str(rule["chains"]) if level == "chain" else "-",
        )
    return table


def lengths_table(rows: list[list[Any]], title: str) -> Table:
    """Per length: the chains, and why those short of the longest are no longer
    (`prchain.chains.building.lengths`: full, no_link, carry_forward, chain_rules)."""
    table = Table("stages", "chains", *(r.replace("_", " ") for r in STOP_REASONS), title=title)
    for length, count, reasons in rows:
        table.add_row(str(length), str(count), *(str(reasons.get(r, 0)) for r in STOP_REASONS))
    table.add_row("total", str(sum(row[1] for row in rows)), style="bold")
    return table
