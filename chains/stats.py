"""The chains section of `prchain stats`: chains by length, stages, stages with a query, and what
each rule dropped in the latest build of each strategy."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sql.models import Chain, ChainBuild, ChainStage


def latest_builds(session: Session) -> dict[str, list[dict[str, Any]]]:
    """strategy → the rules of its latest `chains build`."""
    latest = select(ChainBuild.strategy, func.max(ChainBuild.id)).group_by(ChainBuild.strategy)
    ids = [build_id for _strategy, build_id in session.execute(latest)]
    builds = session.scalars(select(ChainBuild).where(ChainBuild.id.in_(ids)))
    return {b.strategy: list(b.rules or []) for b in sorted(builds, key=lambda b: b.strategy)}


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
    tables = [table]
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
