"""The miner's section of `prchain stats`: repositories, PRs, patches, references by type and kind."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from prchain.store.models import Issue, MineRun, PRPatch, PullRequest, Reference, Repo


def _count(session: Session, query: Any) -> int:
    return int(session.scalar(query) or 0)


def collect(session: Session) -> dict[str, Any]:
    refs = select(func.count()).select_from(Reference)
    by_type = session.execute(select(Reference.type, func.count()).group_by(Reference.type))
    by_kind = session.execute(
        select(Reference.target_kind, func.count()).group_by(Reference.target_kind)
    )
    by_status = session.execute(
        select(PullRequest.patch_status, func.count()).group_by(PullRequest.patch_status)
    )
    runs = session.execute(
        select(func.sum(MineRun.prs), func.sum(MineRun.requests), func.sum(MineRun.points))
    ).one()
    run_prs, requests, points = (int(v or 0) for v in runs)
    return {
        "api_requests": requests,
        "graphql_points": points,
        "graphql_points_per_pr": round(points / run_prs, 4) if run_prs else 0.0,
        "repos": _count(session, select(func.count()).select_from(Repo)),
        "prs": _count(session, select(func.count()).select_from(PullRequest)),
        "issues": _count(session, select(func.count()).select_from(Issue)),
        "prs_with_patch": _count(session, select(func.count()).select_from(PRPatch)),
        "prs_by_patch_status": {status: count for status, count in by_status},
        "references": _count(session, refs),
        # A PR→PR reference points at a PR this store holds (same repository or another mined one).
        "pr_pr_references": _count(session, refs.where(Reference.target_pr_id.is_not(None))),
        "references_by_type": {kind: count for kind, count in sorted(by_type)},
        "references_by_kind": {kind: count for kind, count in sorted(by_kind)},
    }


def render(data: dict[str, Any]) -> list[Table]:
    table = Table(title="Mined")
    table.add_column("what")
    table.add_column("count", justify="right")
    for label, key in (
        ("repositories", "repos"),
        ("pull requests", "prs"),
        ("  with a patch", "prs_with_patch"),
        ("issues", "issues"),
        ("references", "references"),
        ("  PR → PR", "pr_pr_references"),
        ("API requests (all runs)", "api_requests"),
        ("GraphQL points (all runs)", "graphql_points"),
        ("  points per PR mined", "graphql_points_per_pr"),
    ):
        table.add_row(label, str(data.get(key, 0)))
    for status, count in data.get("prs_by_patch_status", {}).items():
        table.add_row(f"  patch {status}", str(count))
    for kind, count in data.get("references_by_type", {}).items():
        table.add_row(f"  type {kind}", str(count))
    for kind, count in data.get("references_by_kind", {}).items():
        table.add_row(f"  target {kind}", str(count))
    return [table]
