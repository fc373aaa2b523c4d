"""Tiny real git histories written PR by PR, for the chain rules that read the clone (lineage)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from prchain.dev.repos import git


class History:
    """A repository on `main` with squash-merged PRs `Title (#N)`, one day apart unless dated."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        git(path, "init", "-q", "-b", "main")
        git(path, "remote", "add", "origin", "https://github.com/acme/lineage.git")
        self.day = 1
        self.prs: dict[int, str] = {}  # PR number → its squash commit

    def commit(
        self,
        message: str,
        files: dict[str, str | None],
        *,
        day: int | None = None,
        moves: dict[str, str] | None = None,
        author: str | None = None,
    ) -> str:
        """Write (None: delete) `files`, `git mv` the `moves`, commit (as `author`, a name, when
        given); returns the commit's sha."""
        for old, new in (moves or {}).items():
            (self.path / new).parent.mkdir(parents=True, exist_ok=True)
            git(self.path, "mv", old, new)
        for rel, text in files.items():
            target = self.path / rel
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        git(self.path, "add", "-A")
        self.day = day if day is not None else self.day + 1
        who = (
            [f"--author={author} <{author.lower().replace(' ', '-')}@example.com>"]
            if author
            else []
        )
        git(self.path, "commit", "-q", *who, "-m", message, date=_date(self.day))
        return git(self.path, "rev-parse", "HEAD")

    def pr(
        self,
        number: int,
        title: str,
        files: dict[str, str | None],
        *,
        body: str = "",
        day: int | None = None,
        moves: dict[str, str] | None = None,
        author: str | None = None,
    ) -> str:
        self.prs[number] = self.commit(
            f"{title} (#{number})\n\n{body}", files, day=day, moves=moves, author=author
        )
        return self.prs[number]


def _date(day: int) -> str:
    """An ISO date `day` days after 2024-01-01."""
    return (datetime(2024, 1, 1, 10) + timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%S")
