"""What every PR source yields, and the interface a source fits.

Sources know nothing of the store: they turn GitHub or a local clone into these records, and
`prchain.miner.ingest` writes them. Times are naive UTC.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from prchain.core.registry import Registry


@dataclass
class FileRecord:
    path: str
    status: str = "modified"  # added | modified | removed | renamed
    additions: int = 0
    deletions: int = 0
    is_binary: bool = False
    previous_path: str | None = None


@dataclass
class CommitRecord:
    sha: str
    message: str
    author: str | None = None
    authored_at: datetime | None = None


@dataclass
class CommentRecord:
    kind: str  # comment | review | review_comment
    external_id: str
    body: str
    author: str | None = None
    created_at: datetime | None = None
    path: str | None = None


@dataclass
class TimelineLink:
    """A link GitHub itself knows of: a cross-reference event or a closing-issue link."""

    type: str  # cross_reference | closing_issue
    target_repo: str  # owner/name
    target_number: int
    target_kind: str  # pr | issue
    evidence: str = ""
    incoming: bool = False  # True when the other item referenced this PR (timeline cross-reference)


@dataclass
class PRRecord:
    number: int
    title: str
    body: str = ""
    state: str = "merged"  # open | closed | merged
    author: str | None = None
    created_at: datetime | None = None
    merged_at: datetime | None = None
    closed_at: datetime | None = None
    updated_at: datetime | None = None
    base_ref: str | None = None
    base_sha: str | None = None
    head_sha: str | None = None
    head_ref: str | None = None
    merge_commit_sha: str | None = None
    additions: int = 0
    deletions: int = 0
    patch: str | None = None  # the whole unified diff; None when not (yet) available
    patch_status: str = "pending"  # ok | unavailable | too_large | pending
    files: list[FileRecord] = field(default_factory=list)
    commits: list[CommitRecord] = field(default_factory=list)
    comments: list[CommentRecord] = field(default_factory=list)
    links: list[TimelineLink] = field(default_factory=list)


@dataclass
class IssueRecord:
    number: int
    title: str
    body: str = ""
    state: str = "open"
    author: str | None = None
    created_at: datetime | None = None
    closed_at: datetime | None = None
    updated_at: datetime | None = None  # the issue cursor; sources yield issues oldest update first


@dataclass
class SourceInfo:
    full_name: str  # owner/name
    default_branch: str | None = None
    clone_path: str | None = None


class PRSource(Protocol):
    """A place PRs come from: the GitHub API or a local clone's history."""

    name: str  # "github" | "git"

    def describe(self) -> SourceInfo: ...

    def pull_requests(self, since_cursor: str | None) -> Iterator[PRRecord]:
        """PRs changed after the cursor (all when None), oldest change first."""
        ...

    def issues(self, since_cursor: str | None) -> Iterator[IssueRecord]: ...

    def cursor_after(self, record: PRRecord) -> str:
        """The cursor to store once `record` (and everything before it) is safely written."""
        ...

    def known_numbers(self) -> tuple[set[int], set[int]] | None:
        """(PR numbers, issue numbers) when the source can tell them apart; None when it cannot."""
        ...

    def requests_made(self) -> int:
        """API requests spent so far (0 for sources that make none)."""
        ...

    def points_spent(self) -> int:
        """GraphQL rate-limit points the server charged so far (0 for sources without an API)."""
        ...


SOURCES: Registry[type] = Registry("PR source")
