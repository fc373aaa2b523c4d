"""The local bare clone the GitHub source takes patches from (one `git fetch` instead of a request per PR).

`refs/pull/*/head` is fetched too, so the heads of open, closed and squash-merged PRs are present.
The clone URL comes from a template (`GithubConfig.clone_url_template`) so tests point it at a local
path; it never carries a token.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from prchain.core import git
from prchain.miner.source import PRRecord

log = logging.getLogger("prchain.miner.github")
REFSPECS = (
    "+refs/heads/*:refs/heads/*",
    "+refs/tags/*:refs/tags/*",
    "+refs/pull/*/head:refs/pull/*/head",
)


def clone_path(clone_dir: str | Path, full_name: str) -> Path:
    owner, name = full_name.split("/", 1)
    return Path(clone_dir) / owner / f"{name}.git"


def ensure_clone(url: str, path: Path) -> Path:
    """Clone `url` bare into `path` the first time, fetch it afterwards (branches, tags, PR heads)."""
    if not (path / "HEAD").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)  # left by a clone that was killed
        log.info("cloning %s into %s (once; later runs only fetch)", url, path)
        git.run(None, "clone", "--bare", "--quiet", url, str(partial))
        partial.rename(path)  # a killed clone leaves only the .partial directory behind
    git.run(path, "fetch", "--quiet", "--prune", url, *REFSPECS)
    return path


class CloneReader:
    """Object lookups in one clone: which commits exist, their parents, merge bases."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def close(self) -> None:
        """Nothing is held open between git calls; kept so callers can release a reader uniformly."""

    def parents(self, sha: str | None) -> list[str] | None:
        """The commit's parents, or None when the clone lacks it."""
        if not sha or git.resolve(self.path, sha) is None:
            return None
        return git.output(self.path, "rev-list", "--parents", "-n", "1", sha, "--").split()[1:]

    def message(self, sha: str) -> str:
        return git.output(self.path, "log", "-1", "--format=%B", sha, "--")

    def merge_base(self, a: str | None, b: str | None) -> str | None:
        if self.parents(a) is None or self.parents(b) is None:
            return None
        done = git.run(self.path, "merge-base", a or "", b or "", check=False)
        return done.text.strip() or None if done.ok else None

    def first_parent_ancestor(self, sha: str, generations: int) -> str | None:
        for _ in range(generations):
            parents = self.parents(sha)
            if not parents:
                return None
            sha = parents[0]
        return sha

    def patch_range(self, pr: PRRecord) -> tuple[str, str] | None:
        """(base, tip) of the change a PR made, or None when the clone lacks the objects.

        Merged PRs: what landed, i.e. the merge commit against its first parent (squash and merge
        commits), or against the commit before the rebased series (rebase merges). Others: the
        head against its merge base with the base branch, as GitHub shows it.
        """
        if pr.merge_commit_sha and (parents := self.parents(pr.merge_commit_sha)):
            if len(parents) == 1 and len(pr.commits) > 1 and self._is_rebase(pr):
                base = self.first_parent_ancestor(pr.merge_commit_sha, len(pr.commits))
                return (base, pr.merge_commit_sha) if base else None
            return parents[0], pr.merge_commit_sha
        base = self.merge_base(pr.base_sha, pr.head_sha)
        return (base, pr.head_sha) if base and pr.head_sha else None

    def _is_rebase(self, pr: PRRecord) -> bool:
        """A rebase merge's last commit repeats the PR's last commit message; a squash does not."""
        return self.message(pr.merge_commit_sha or "").strip() == pr.commits[-1].message.strip()
