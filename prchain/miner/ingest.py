"""Write source records into the store in batches, each batch with its cursor in one transaction.

A batch is the unit of progress: its PR rows, patches, files, commits, comments, extracted
references and the advanced SyncCursor commit together, so a run killed at any point and rerun
produces the same database as an uninterrupted one. Every write is an upsert keyed by natural
keys; the rows a record owns completely (files, commits) are replaced, never appended twice.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Engine, delete, select
from sqlalchemy.orm import Session

from prchain.miner.refs import Ref, branch_refs, extract_refs
from prchain.miner.source import IssueRecord, PRRecord, SourceInfo, TimelineLink
from prchain.store.db import insert_rows, session_scope, upsert
from prchain.store.models import (
    Comment,
    Issue,
    MineRun,
    PRCommit,
    PRFile,
    PRPatch,
    PullRequest,
    Reference,
    Repo,
    SyncCursor,
)

T = TypeVar("T")
PR_CURSOR, ISSUE_CURSOR = "prs", "issues"
FOUND_IN_BY_COMMENT_KIND = {"comment": "comment", "review": "review", "review_comment": "review"}


def clean(text: str | None) -> str:
    """PostgreSQL refuses NUL characters in text; nothing meaningful is lost by replacing them."""
    if not text:
        return ""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


@dataclass
class BatchCounts:
    new: int = 0
    updated: int = 0
    references: int = 0


def ensure_repo(engine: Engine, info: SourceInfo, source: str) -> int:
    with session_scope(engine) as session:
        row = {
            "full_name": info.full_name,
            "source": source,
            "default_branch": info.default_branch,
            "clone_path": info.clone_path,
        }
        upsert(session, Repo, [row], ["full_name"])
        return int(session.scalars(select(Repo.id).where(Repo.full_name == info.full_name)).one())


def read_cursor(engine: Engine, repo_id: int, source: str, kind: str) -> str | None:
    with session_scope(engine) as session:
        return session.scalar(
            select(SyncCursor.value).where(
                SyncCursor.repo_id == repo_id, SyncCursor.source == source, SyncCursor.kind == kind
            )
        )


def record_run(engine: Engine, repo_id: int, source: str, summary: Any) -> None:
    """Keep what a finished run cost, so `prchain stats` can report points per PR over all runs."""
    with session_scope(engine) as session:
        row = {
            "repo_id": repo_id,
            "source": source,
            "prs": summary.prs,
            "requests": summary.requests,
            "points": summary.points,
            "seconds": summary.seconds,
        }
        insert_rows(session, MineRun, [row])


def _write_cursor(session: Session, repo_id: int, source: str, kind: str, value: str) -> None:
    upsert(
        session,
        SyncCursor,
        [{"repo_id": repo_id, "source": source, "kind": kind, "value": value}],
        ["repo_id", "source", "kind"],
    )


class Ingestor:
    """Writes one repository's records for one source."""

    def __init__(self, engine: Engine, repo_id: int, full_name: str, source: str) -> None:
        self.engine, self.repo_id, self.full_name, self.source = engine, repo_id, full_name, source

    def write_prs(self, records: Sequence[PRRecord], cursor: str | None) -> BatchCounts:
        """One transaction: the PRs, everything hanging off them, and the cursor after them."""
        with session_scope(self.engine) as session:
            existing = self._existing_numbers(session, [r.number for r in records])
            ids = self._upsert_prs(session, records)
            self._write_children(session, records, ids)
            refs = self._write_references(session, records, ids)
            if cursor is not None:
                _write_cursor(session, self.repo_id, self.source, PR_CURSOR, cursor)
        numbers = {r.number for r in records}
        return BatchCounts(len(numbers - existing), len(numbers & existing), refs)

    def write_issues(self, records: Sequence[IssueRecord], cursor: str | None) -> int:
        with session_scope(self.engine) as session:
            upsert(session, Issue, [self._issue_row(r) for r in records], ["repo_id", "number"])
            if cursor is not None:
                _write_cursor(session, self.repo_id, self.source, ISSUE_CURSOR, cursor)
        return len(records)

    # ------------------------------------------------------------ pull requests

    def _existing_numbers(self, session: Session, numbers: list[int]) -> set[int]:
        query = select(PullRequest.number).where(
            PullRequest.repo_id == self.repo_id, PullRequest.number.in_(numbers)
        )
        return set(session.scalars(query))

    def _upsert_prs(self, session: Session, records: Sequence[PRRecord]) -> dict[int, int]:
        # A number seen twice in one batch (a re-landed PR) keeps its last record, like sequential upserts would.
        rows = list({r.number: self._pr_row(r) for r in records}.values())
        upsert(session, PullRequest, rows, ["repo_id", "number"])
        query = select(PullRequest.number, PullRequest.id).where(
            PullRequest.repo_id == self.repo_id, PullRequest.number.in_([r["number"] for r in rows])
        )
        return {number: pr_id for number, pr_id in session.execute(query)}

    def _pr_row(self, r: PRRecord) -> dict[str, Any]:
        return {
            "repo_id": self.repo_id,
            "number": r.number,
            "title": clean(r.title),
            "body": clean(r.body),
            "state": r.state,
            "author": r.author,
            "created_at": r.created_at,
            "merged_at": r.merged_at,
            "closed_at": r.closed_at,
            "updated_at": r.updated_at,
            "base_ref": r.base_ref,
            "base_sha": r.base_sha,
            "head_sha": r.head_sha,
            "merge_commit_sha": r.merge_commit_sha,
            "additions": r.additions,
            "deletions": r.deletions,
            "changed_files": len(r.files),
            "patch_status": r.patch_status,
            "source": self.source,
        }

    def _issue_row(self, r: IssueRecord) -> dict[str, Any]:
        return {
            "repo_id": self.repo_id,
            "number": r.number,
            "title": clean(r.title),
            "body": clean(r.body),
            "state": r.state,
            "author": r.author,
            "created_at": r.created_at,
            "closed_at": r.closed_at,
        }

    def _write_children(
        self, session: Session, records: Sequence[PRRecord], ids: dict[int, int]
    ) -> None:
        last = {r.number: r for r in records}.values()
        self._write_patches(session, last, ids)
        with_files = [ids[r.number] for r in last if r.files or r.patch_status != "pending"]
        _replace(
            session,
            PRFile,
            with_files,
            [_file_row(ids[r.number], f) for r in last for f in _unique_files(r)],
        )
        with_commits = [ids[r.number] for r in last if r.commits]
        commit_rows = [
            _commit_row(ids[r.number], c)
            for r in last
            for c in {c.sha: c for c in r.commits}.values()
        ]
        _replace(session, PRCommit, with_commits, commit_rows)
        comment_rows = [_comment_row(ids[r.number], c) for r in last for c in r.comments]
        for chunk in batched(
            list({(c["pr_id"], c["kind"], c["external_id"]): c for c in comment_rows}.values()),
            1000,
        ):
            upsert(session, Comment, chunk, ["pr_id", "kind", "external_id"])

    def _write_patches(
        self, session: Session, records: Iterable[PRRecord], ids: dict[int, int]
    ) -> None:
        rows, gone = [], []
        for r in records:
            if r.patch is not None:
                diff = clean(r.patch)
                rows.append(
                    {
                        "pr_id": ids[r.number],
                        "diff": diff,
                        "size_bytes": len(diff.encode("utf-8", "replace")),
                    }
                )
            elif r.patch_status in ("too_large", "unavailable"):
                gone.append(ids[r.number])
        if gone:
            session.execute(delete(PRPatch).where(PRPatch.pr_id.in_(gone)))
        for chunk in batched(rows, 50):
            upsert(session, PRPatch, chunk, ["pr_id"])

    # ------------------------------------------------------------ references

    def _write_references(
        self, session: Session, records: Sequence[PRRecord], ids: dict[int, int]
    ) -> int:
        per_pr = [(ids[r.number], r.number, pr_refs(r, self.full_name)) for r in records]
        shas = {ref.target_sha for _, _, refs in per_pr for ref in refs if ref.target_sha}
        by_sha = self._prs_by_sha(session, shas)
        rows: dict[tuple[Any, ...], dict[str, Any]] = {}
        for pr_id, number, refs in per_pr:
            for ref in refs:
                target = ref.target_number if ref.target_sha is None else by_sha.get(ref.target_sha)
                if target is None or (target == number and not ref.external):
                    continue
                row = self._ref_row(pr_id, ref, target)
                rows[_ref_key(row)] = row
        for r in records:
            for row in self._link_rows(session, ids[r.number], r.number, r.links):
                rows[_ref_key(row)] = row
        for chunk in batched(list(rows.values()), 1000):
            # Kinds are the resolver's business: a re-ingest must not undo its work.
            upsert(session, Reference, chunk, list(REF_KEY), update=["evidence"])
        return len(rows)

    def _prs_by_sha(self, session: Session, shas: set[str]) -> dict[str, int]:
        if not shas:
            return {}
        full = [s for s in shas if len(s) == 40]
        query = select(PullRequest.merge_commit_sha, PullRequest.number).where(
            PullRequest.repo_id == self.repo_id
        )
        found = {
            str(sha): n
            for sha, n in session.execute(query.where(PullRequest.merge_commit_sha.in_(full)))
        }
        for short in sorted(shas - set(full)):
            hit = session.execute(
                query.where(PullRequest.merge_commit_sha.startswith(short)).limit(2)
            ).all()
            if len(hit) == 1:  # an ambiguous short sha names no one PR
                found[short] = hit[0][1]
        return found

    def _ref_row(self, pr_id: int, ref: Ref, target: int) -> dict[str, Any]:
        return {
            "repo_id": self.repo_id,
            "src_pr_id": pr_id,
            "target_repo": ref.target_repo,
            "target_number": target,
            "target_kind": "external" if ref.external else "unknown",
            "target_pr_id": None,
            "type": ref.type,
            "found_in": ref.found_in,
            "via_issue": 0,
            "evidence": clean(ref.evidence),
        }

    def _link_rows(
        self, session: Session, pr_id: int, number: int, links: list[TimelineLink]
    ) -> list[dict[str, Any]]:
        rows = []
        for link in links:
            external = link.target_repo.lower() != self.full_name.lower()
            kind = "external" if external else link.target_kind
            if not link.incoming:
                rows.append(
                    self._timeline_row(pr_id, link, link.target_repo, link.target_number, kind)
                )
            elif not external and link.target_kind == "pr":
                other = self._existing_id(session, link.target_number)
                if other is not None and other != pr_id:
                    rows.append(self._timeline_row(other, link, self.full_name, number, "pr"))
        return rows

    def _timeline_row(
        self, src: int, link: TimelineLink, repo: str, number: int, kind: str
    ) -> dict[str, Any]:
        return {
            "repo_id": self.repo_id,
            "src_pr_id": src,
            "target_repo": repo,
            "target_number": number,
            "target_kind": kind,
            "target_pr_id": None,
            "type": link.type,
            "found_in": "timeline",
            "via_issue": 0,
            "evidence": clean(link.evidence)[:200],
        }

    def _existing_id(self, session: Session, number: int) -> int | None:
        query = select(PullRequest.id).where(
            PullRequest.repo_id == self.repo_id, PullRequest.number == number
        )
        return session.scalar(query)


REF_KEY = ("src_pr_id", "target_repo", "target_number", "type", "found_in", "via_issue")


def _ref_key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row[k] for k in REF_KEY)


def pr_refs(record: PRRecord, repo: str) -> list[Ref]:
    """References in every text of a PR, one per (target, type): the first place it was found wins."""
    texts = [("title", record.title), ("body", record.body)]
    # A squash commit's message is the PR's title and body again: reading it twice adds nothing.
    texts += [("commit", c.message) for c in record.commits if c.sha != record.merge_commit_sha]
    texts += [(FOUND_IN_BY_COMMENT_KIND.get(c.kind, "comment"), c.body) for c in record.comments]
    seen: dict[tuple[str, int | None, str | None, str], Ref] = {}
    found = [ref for found_in, text in texts for ref in extract_refs(text or "", found_in, repo)]
    for ref in [*found, *branch_refs(record.head_ref, repo)]:
        seen.setdefault((ref.target_repo.lower(), ref.target_number, ref.target_sha, ref.type), ref)
    return list(seen.values())


def _replace(session: Session, model: Any, pr_ids: list[int], rows: list[dict[str, Any]]) -> None:
    if pr_ids:
        session.execute(delete(model).where(model.pr_id.in_(pr_ids)))
    for chunk in batched(rows, 1000):
        insert_rows(session, model, chunk)


def _unique_files(record: PRRecord) -> list[Any]:
    return list({f.path: f for f in record.files}.values())


def _file_row(pr_id: int, f: Any) -> dict[str, Any]:
    return {
        "pr_id": pr_id,
        "path": clean(f.path),
        "previous_path": f.previous_path,
        "status": f.status,
        "additions": f.additions,
        "deletions": f.deletions,
        "is_binary": f.is_binary,
    }


def _commit_row(pr_id: int, c: Any) -> dict[str, Any]:
    return {
        "pr_id": pr_id,
        "sha": c.sha,
        "message": clean(c.message),
        "author": c.author,
        "authored_at": c.authored_at,
    }


def _comment_row(pr_id: int, c: Any) -> dict[str, Any]:
    return {
        "pr_id": pr_id,
        "kind": c.kind,
        "external_id": str(c.external_id),
        "author": c.author,
        "body": clean(c.body),
        "path": c.path,
        "created_at": c.created_at,
    }
