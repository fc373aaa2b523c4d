"""`mine`: every repository from its source into the store, then resolve what the references point to."""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from prchain.core.errors import ConfigError, InvalidRepoName
from prchain.miner.config import SOURCE_MODULES, MinerConfig
from prchain.miner.ingest import (
    ISSUE_CURSOR,
    PR_CURSOR,
    Ingestor,
    batched,
    ensure_repo,
    read_cursor,
    record_run,
)
from prchain.miner.resolve import resolve_repo
from prchain.miner.source import SOURCES, IssueRecord, PRRecord, PRSource

# Sources register themselves on import; importing by name keeps each one's dependencies lazy.
REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")

Progress = Callable[[str, int, int | None], None]
"""progress(repo, PRs done so far, PRs expected or None when unknown)."""


@dataclass
class RepoSummary:
    repo: str
    source: str
    prs_new: int = 0
    prs_updated: int = 0
    issues: int = 0
    references: int = 0
    pr_pr_references: int = 0
    issue_mediated: int = 0
    requests: int = 0
    points: int = 0
    seconds: float = 0.0
    # PRs found by kind, for sources that tell (git: squash, merge, merge off the first-parent line)
    kinds: dict[str, int] = field(default_factory=dict)

    @property
    def prs(self) -> int:
        return self.prs_new + self.prs_updated

    @property
    def requests_per_pr(self) -> float:
        return self.requests / self.prs if self.prs else 0.0

    @property
    def points_per_pr(self) -> float:
        return self.points / self.prs if self.prs else 0.0


@dataclass
class MineSummary:
    repos: list[RepoSummary] = field(default_factory=list)


def validate_repo_name(name: str) -> str:
    name = name.strip().removeprefix("https://github.com/").removesuffix(".git").strip("/")
    if not REPO_NAME.match(name):
        raise InvalidRepoName(f"{name!r} is not a repository name of the form owner/name")
    return name


def parse_since(value: str | datetime | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        raise ConfigError(f"--since expects a date like 2024-01-31, got {value!r}") from None


def open_source(
    config: MinerConfig,
    repo: str,
    *,
    source: str,
    clone_dir: str | None,
    name: str | None,
    since: datetime | None,
) -> PRSource:
    """The named source for one repository argument (a path for git, owner/name for github)."""
    module = SOURCE_MODULES.get(source)
    if module is not None:
        importlib.import_module(module)
    cls: Any = SOURCES.get(source)
    if source == "git":
        full_name = validate_repo_name(name) if name else None
        return cls(
            repo,
            full_name=full_name,
            since=since,
            max_patch_bytes=config.max_patch_bytes,
            workers=config.git_workers,
        )
    full_name = validate_repo_name(repo)
    clone_root = clone_dir or config.clone_dir
    return cls(config.github, full_name, clone_root, since, max_patch_bytes=config.max_patch_bytes)


def mine(
    config: MinerConfig,
    engine: Engine,
    repos: list[str],
    *,
    source: str | None = None,
    clone_dir: str | None = None,
    name: str | None = None,
    since: str | datetime | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
) -> MineSummary:
    """Mine each repository in turn; finished batches are kept whatever happens later."""
    source = source or config.source
    if source == "github":
        repos = [validate_repo_name(r) for r in repos]  # every name checked before any work starts
    if name and len(repos) > 1:
        raise ConfigError("--name applies to one repository; give one REPO with it")
    summary = MineSummary()
    bound = parse_since(since)
    for repo in repos:
        src = open_source(config, repo, source=source, clone_dir=clone_dir, name=name, since=bound)
        summary.repos.append(
            mine_one(
                engine,
                src,
                limit=limit,
                progress=progress,
                batch_size=config.batch_size,
                move_cursor=bound is None,
            )
        )
    return summary


def mine_one(
    engine: Engine,
    src: PRSource,
    *,
    limit: int | None = None,
    progress: Progress | None = None,
    batch_size: int = 500,
    move_cursor: bool = True,
) -> RepoSummary:
    """Mine one repository from where its cursor stopped.

    A run bounded by --since (`move_cursor=False`) reads from the later of the cursor and the
    date but never moves the cursor: the cursor promises that everything before it is stored,
    and a bounded run skipped what came before its date (finding 3 of issue 16).
    """
    started = time.monotonic()
    info = src.describe()
    repo_id = ensure_repo(engine, info, src.name)
    ingestor = Ingestor(engine, repo_id, info.full_name, src.name)
    result = RepoSummary(info.full_name, src.name)
    _ingest_prs(engine, src, ingestor, result, limit, progress, batch_size, move_cursor)
    result.kinds = getattr(src, "found_by_kind", dict)()
    _ingest_issues(engine, src, ingestor, result, batch_size, move_cursor)
    resolution = resolve_repo(engine, repo_id)
    result.references, result.pr_pr_references = resolution.references, resolution.pr_pr_references
    result.issue_mediated = resolution.issue_mediated
    result.requests, result.points = src.requests_made(), src.points_spent()
    result.seconds = time.monotonic() - started
    record_run(engine, repo_id, src.name, result)
    return result


def _ingest_prs(
    engine: Engine,
    src: PRSource,
    ingestor: Ingestor,
    result: RepoSummary,
    limit: int | None,
    progress: Progress | None,
    batch_size: int,
    move_cursor: bool,
) -> None:
    cursor = read_cursor(engine, ingestor.repo_id, src.name, PR_CURSOR)
    records = src.pull_requests(cursor)
    if limit is not None:
        records = _take(records, limit)
    done = 0
    for batch in batched(records, batch_size):
        after = src.cursor_after(batch[-1]) if move_cursor else None
        counts = ingestor.write_prs(batch, after or None)
        result.prs_new, result.prs_updated = (
            result.prs_new + counts.new,
            result.prs_updated + counts.updated,
        )
        done += len(batch)
        if progress:
            expected = getattr(src, "expected_count", lambda: None)()
            progress(
                ingestor.full_name, done, min(expected, limit) if expected and limit else expected
            )


def _ingest_issues(
    engine: Engine,
    src: PRSource,
    ingestor: Ingestor,
    result: RepoSummary,
    batch_size: int,
    move_cursor: bool,
) -> None:
    cursor = read_cursor(engine, ingestor.repo_id, src.name, ISSUE_CURSOR)
    for batch in batched(src.issues(cursor), batch_size):
        after = (_issue_cursor(batch) or cursor) if move_cursor else None
        result.issues += ingestor.write_issues(batch, after)


def _issue_cursor(batch: list[IssueRecord]) -> str | None:
    """The latest change in the batch, in GitHub's time format (issues arrive oldest update first)."""
    stamps = [t for r in batch for t in (r.updated_at or r.closed_at or r.created_at,) if t]
    return max(stamps).isoformat(timespec="seconds") + "Z" if stamps else None


def _take(records: Iterator[PRRecord], limit: int) -> Iterator[PRRecord]:
    for index, record in enumerate(records):
        if index >= limit:
            return
        yield record


def read_repos_file(path: str | Path) -> list[str]:
    """One repository per line; blank lines and `#` comments are skipped."""
    lines = Path(path).read_text().splitlines()
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]
