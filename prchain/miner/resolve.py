"""Decide what each referenced number is, and add the links an issue mediates.

Runs after ingestion over a whole repository, idempotently: kinds are recomputed from the PR and
issue tables every time (pr / issue / unknown; cross-repo targets stay external), and the
issue-mediated rows are rebuilt from scratch. A run killed here just redoes it.

Issue-mediated: PR B fixes issue I, and PR A also refers to I (or I's body refers to A, i.e. the
issue was opened about A) → a reference B→A of type `issue_mediated` with via_issue = I.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Engine, Table, and_, delete, exists, select, update
from sqlalchemy.orm import Session

from prchain.miner.refs import extract_refs
from prchain.store.db import session_scope, upsert
from prchain.store.models import Issue, PullRequest, Reference, Repo

FIXING_TYPES = ("fixes", "closing_issue")
# A tracking issue that dozens of PRs mention links nothing meaningful; skip mediation through it.
MAX_PRS_PER_ISSUE = 10


@dataclass
class Resolution:
    references: int
    pr_pr_references: int
    issue_mediated: int


def resolve_repo(engine: Engine, repo_id: int) -> Resolution:
    with session_scope(engine) as session:
        full_name = session.scalar(select(Repo.full_name).where(Repo.id == repo_id))
        _resolve_kinds(session, repo_id, str(full_name))
        mediated = _rebuild_issue_mediated(session, repo_id, str(full_name))
        return Resolution(*_counts(session, repo_id), mediated)


def _resolve_kinds(session: Session, repo_id: int, full_name: str) -> None:
    table = cast(Table, Reference.__table__)
    ref = table.c
    same_repo = and_(ref.repo_id == repo_id, ref.target_repo == full_name)
    pr_id = (
        select(PullRequest.id)
        .where(PullRequest.repo_id == repo_id, PullRequest.number == ref.target_number)
        .scalar_subquery()
    )
    is_pr = exists().where(PullRequest.repo_id == repo_id, PullRequest.number == ref.target_number)
    is_issue = exists().where(Issue.repo_id == repo_id, Issue.number == ref.target_number)
    session.execute(
        update(table).where(same_repo, is_pr).values(target_kind="pr", target_pr_id=pr_id)
    )
    session.execute(
        update(table)
        .where(same_repo, ~is_pr, is_issue)
        .values(target_kind="issue", target_pr_id=None)
    )
    # GitHub's own timeline knows what a number is even when we have not mined it; text does not.
    session.execute(
        update(table)
        .where(same_repo, ~is_pr, ~is_issue, ref.found_in != "timeline")
        .values(target_kind="unknown", target_pr_id=None)
    )


def _counts(session: Session, repo_id: int) -> tuple[int, int]:
    total = session.query(Reference).filter(Reference.repo_id == repo_id).count()
    pr_pr = (
        session.query(Reference)
        .filter(Reference.repo_id == repo_id, Reference.target_pr_id.is_not(None))
        .count()
    )
    return total, pr_pr


def _rebuild_issue_mediated(session: Session, repo_id: int, full_name: str) -> int:
    session.execute(
        delete(Reference).where(Reference.repo_id == repo_id, Reference.type == "issue_mediated")
    )
    fixers, referrers = _issue_links(session, repo_id, full_name)
    query = select(PullRequest.id, PullRequest.number).where(PullRequest.repo_id == repo_id)
    numbers: dict[int, int] = {pr_id: number for pr_id, number in session.execute(query)}
    ids = {n: i for i, n in numbers.items()}
    _add_issue_openers(session, repo_id, full_name, fixers, referrers, ids)
    rows: dict[tuple[int, int, int], dict[str, Any]] = {}
    for issue, fixing in sorted(fixers.items()):
        about = referrers.get(issue, set())
        if len(about) > MAX_PRS_PER_ISSUE:
            continue
        for b in sorted(fixing):
            for a in sorted(about - {b}):
                rows[(b, a, issue)] = _mediated_row(repo_id, full_name, b, a, numbers, issue)
    for chunk in _chunks(list(rows.values()), 1000):
        upsert(
            session,
            Reference,
            chunk,
            ["src_pr_id", "target_repo", "target_number", "type", "found_in", "via_issue"],
        )
    return len(rows)


def _issue_links(
    session: Session, repo_id: int, full_name: str
) -> tuple[dict[int, set[int]], dict[int, set[int]]]:
    """issue number → PR ids fixing it, and issue number → PR ids referring to it at all."""
    query = select(Reference.target_number, Reference.src_pr_id, Reference.type).where(
        Reference.repo_id == repo_id,
        Reference.target_repo == full_name,
        Reference.target_kind.in_(("issue", "unknown")),
    )
    fixers: dict[int, set[int]] = defaultdict(set)
    referrers: dict[int, set[int]] = defaultdict(set)
    for number, src, kind in session.execute(query):
        referrers[number].add(src)
        if kind in FIXING_TYPES:
            fixers[number].add(src)
    return fixers, referrers


def _add_issue_openers(
    session: Session,
    repo_id: int,
    full_name: str,
    fixers: dict[int, set[int]],
    referrers: dict[int, set[int]],
    ids: dict[int, int],
) -> None:
    """An issue whose text refers to PR A was opened about A: A counts as referring to it."""
    if not fixers:
        return
    query = select(Issue.number, Issue.title, Issue.body).where(
        Issue.repo_id == repo_id, Issue.number.in_(list(fixers))
    )
    for number, title, body in session.execute(query):
        for ref in extract_refs(f"{title}\n{body}", "issue", full_name):
            if not ref.external and ref.target_number in ids:
                referrers[number].add(ids[ref.target_number])


def _mediated_row(
    repo_id: int, full_name: str, src: int, target: int, numbers: dict[int, int], issue: int
) -> dict[str, Any]:
    return {
        "repo_id": repo_id,
        "src_pr_id": src,
        "target_repo": full_name,
        "target_number": numbers[target],
        "target_kind": "pr",
        "target_pr_id": target,
        "type": "issue_mediated",
        "found_in": "issue",
        "via_issue": issue,
        "evidence": f"#{numbers[src]} fixes #{issue}, which #{numbers[target]} also refers to",
    }


def _chunks(rows: list[dict[str, Any]], size: int) -> list[list[dict[str, Any]]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]
