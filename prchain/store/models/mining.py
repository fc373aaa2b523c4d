"""What the miner writes: repositories, PRs and everything hanging off them, and references."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from prchain.store.models.base import Base, utcnow


class Repo(Base):
    __tablename__ = "repos"

    id: Mapped[int] = mapped_column(primary_key=True)
    full_name: Mapped[str] = mapped_column(String(200), unique=True)
    source: Mapped[str] = mapped_column(String(20))
    default_branch: Mapped[str | None] = mapped_column(String(200))
    clone_path: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PullRequest(Base):
    __tablename__ = "pull_requests"
    __table_args__ = (UniqueConstraint("repo_id", "number"), Index(None, "repo_id", "merged_at"))

    id: Mapped[int] = mapped_column(primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id", ondelete="CASCADE"))
    number: Mapped[int]
    title: Mapped[str] = mapped_column(Text, default="")
    body: Mapped[str] = mapped_column(Text, default="")
    state: Mapped[str] = mapped_column(String(20), default="merged")
    author: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime | None]
    merged_at: Mapped[datetime | None]
    closed_at: Mapped[datetime | None]
    updated_at: Mapped[datetime | None]
    base_ref: Mapped[str | None] = mapped_column(String(200))
    base_sha: Mapped[str | None] = mapped_column(String(64))
    head_sha: Mapped[str | None] = mapped_column(String(64))
    merge_commit_sha: Mapped[str | None] = mapped_column(String(64))
    additions: Mapped[int] = mapped_column(default=0)
    deletions: Mapped[int] = mapped_column(default=0)
    changed_files: Mapped[int] = mapped_column(default=0)
    # ok | unavailable (objects missing) | too_large | pending (not fetched yet)
    patch_status: Mapped[str] = mapped_column(String(20), default="pending")
    source: Mapped[str] = mapped_column(String(20))


class PRPatch(Base):
    """The PR's whole unified diff, kept apart so PR rows stay light to scan."""

    __tablename__ = "pr_patches"

    pr_id: Mapped[int] = mapped_column(
        ForeignKey("pull_requests.id", ondelete="CASCADE"), primary_key=True
    )
    diff: Mapped[str] = mapped_column(Text)
    size_bytes: Mapped[int]


class PRFile(Base):
    __tablename__ = "pr_files"
    __table_args__ = (UniqueConstraint("pr_id", "path"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    pr_id: Mapped[int] = mapped_column(
        ForeignKey("pull_requests.id", ondelete="CASCADE"), index=True
    )
    path: Mapped[str] = mapped_column(Text)
    previous_path: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default="modified")
    additions: Mapped[int] = mapped_column(default=0)
    deletions: Mapped[int] = mapped_column(default=0)
    is_binary: Mapped[bool] = mapped_column(default=False)


class PRCommit(Base):
    __tablename__ = "pr_commits"
    __table_args__ = (UniqueConstraint("pr_id", "sha"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    pr_id: Mapped[int] = mapped_column(
        ForeignKey("pull_requests.id", ondelete="CASCADE"), index=True
    )
    sha: Mapped[str] = mapped_column(String(64))
    message: Mapped[str] = mapped_column(Text, default="")
    author: Mapped[str | None] = mapped_column(String(200))
    authored_at: Mapped[datetime | None]


class Comment(Base):
    """Issue comments, review comments and review bodies of a PR."""

    __tablename__ = "comments"
    __table_args__ = (UniqueConstraint("pr_id", "kind", "external_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    pr_id: Mapped[int] = mapped_column(
        ForeignKey("pull_requests.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(20))  # comment | review | review_comment
    external_id: Mapped[str] = mapped_column(String(100))
    author: Mapped[str | None] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text, default="")
    path: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime | None]


class Issue(Base):
    __tablename__ = "issues"
    __table_args__ = (UniqueConstraint("repo_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id", ondelete="CASCADE"))
    number: Mapped[int]
    title: Mapped[str] = mapped_column(Text, default="")
    body: Mapped[str] = mapped_column(Text, default="")
    state: Mapped[str] = mapped_column(String(20), default="open")
    author: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime | None]
    closed_at: Mapped[datetime | None]


class Reference(Base):
    """One reference from a PR to a PR, an issue or something outside the repository.

    Named `pr_references` because REFERENCES is an SQL keyword.
    """

    __tablename__ = "pr_references"
    __table_args__ = (
        UniqueConstraint(
            "src_pr_id", "target_repo", "target_number", "type", "found_in", "via_issue"
        ),
        Index(None, "repo_id", "target_number"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id", ondelete="CASCADE"))
    src_pr_id: Mapped[int] = mapped_column(
        ForeignKey("pull_requests.id", ondelete="CASCADE"), index=True
    )
    target_repo: Mapped[str] = mapped_column(
        String(200)
    )  # owner/name; equals the source repo unless external
    target_number: Mapped[int]
    target_kind: Mapped[str] = mapped_column(String(20))  # pr | issue | external | unknown
    target_pr_id: Mapped[int | None] = mapped_column(
        ForeignKey("pull_requests.id", ondelete="SET NULL")
    )
    # mention | fixes | reverts | follow_up | cross_reference | closing_issue | issue_mediated
    type: Mapped[str] = mapped_column(String(20))
    # title | body | commit | branch (a revert button's head branch) | comment | review | timeline
    # | issue
    found_in: Mapped[str] = mapped_column(String(20))
    via_issue: Mapped[int] = mapped_column(
        default=0
    )  # the mediating issue number; 0 for direct links
    evidence: Mapped[str] = mapped_column(Text, default="")


class SyncCursor(Base):
    """How far a source has read a repository, so a rerun fetches only what changed."""

    __tablename__ = "sync_cursors"

    repo_id: Mapped[int] = mapped_column(
        ForeignKey("repos.id", ondelete="CASCADE"), primary_key=True
    )
    source: Mapped[str] = mapped_column(String(20), primary_key=True)
    kind: Mapped[str] = mapped_column(String(40), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class MineRun(Base):
    """What one `prchain mine` run of one repository cost: API requests and GraphQL points."""

    __tablename__ = "mine_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(20))
    prs: Mapped[int] = mapped_column(default=0)
    requests: Mapped[int] = mapped_column(default=0)
    points: Mapped[int] = mapped_column(default=0)  # as the server reported them (rateLimit.cost)
    seconds: Mapped[float] = mapped_column(default=0.0)
    finished_at: Mapped[datetime] = mapped_column(default=utcnow)
