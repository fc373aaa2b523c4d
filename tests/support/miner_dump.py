"""A canonical dump of everything the miner writes, for comparing two databases row by row.

Surrogate ids differ between runs (PostgreSQL sequences skip values a rolled-back batch took), so
every foreign key is replaced by the natural key it points at: (repo name, PR number).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.store.models import (
    Comment,
    Issue,
    PRCommit,
    PRFile,
    PRPatch,
    PullRequest,
    Reference,
    Repo,
    SyncCursor,
)

SKIP = {"id", "repo_id", "pr_id", "src_pr_id", "target_pr_id"}
# Bookkeeping times (when a row was written), unlike the PR and comment times that are data.
WRITE_TIMES = {Repo: "created_at", SyncCursor: "updated_at"}


def _row(obj: Any, **natural: Any) -> tuple[Any, ...]:
    skip = SKIP | {WRITE_TIMES.get(type(obj), "")}
    columns = {c.name: getattr(obj, c.key) for c in obj.__table__.columns if c.name not in skip}
    return tuple(sorted({**columns, **natural}.items(), key=lambda kv: kv[0]))


def canonical_dump(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    with Session(engine) as session:
        repos = {r.id: r.full_name for r in session.scalars(select(Repo))}
        prs = {p.id: (repos[p.repo_id], p.number) for p in session.scalars(select(PullRequest))}
        dump = {
            "repos": [_row(r) for r in session.scalars(select(Repo))],
            "pull_requests": [
                _row(p, repo=repos[p.repo_id]) for p in session.scalars(select(PullRequest))
            ],
            "issues": [_row(i, repo=repos[i.repo_id]) for i in session.scalars(select(Issue))],
            "sync_cursors": [
                _row(c, repo=repos[c.repo_id]) for c in session.scalars(select(SyncCursor))
            ],
        }
        children: tuple[tuple[str, Any], ...] = (
            ("pr_patches", PRPatch),
            ("pr_files", PRFile),
            ("pr_commits", PRCommit),
            ("comments", Comment),
        )
        for name, model in children:
            dump[name] = [_row(row, pr=prs[row.pr_id]) for row in session.scalars(select(model))]
        dump["pr_references"] = [
            _row(
                r,
                src=prs[r.src_pr_id],
                target_pr=prs.get(r.target_pr_id) if r.target_pr_id else None,
            )
            for r in session.scalars(select(Reference))
        ]
    return {name: sorted(rows, key=repr) for name, rows in dump.items()}
