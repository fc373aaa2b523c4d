"""Is pr_(i-1)'s merge commit in pr_i's base history? Answered in bulk from the clone.

One `git rev-list --first-parent` per repository orders its mainline; both commits on it compare by
position. Commits off the mainline are checked one by one with `git merge-base --is-ancestor`, up to
a budget; beyond it, and where no clone or commit is at hand, an edge is kept unchecked.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prchain.core import git

if TYPE_CHECKING:
    from prchain.chains.evidence.nodes import PRNode

GIT_TIMEOUT = 300


def mainline_positions(clone: str, branch: str | None) -> dict[str, int]:
    """sha → distance from the tip along first parents (larger is older); empty when git cannot tell."""
    for ref in ([branch] if branch else []) + ["HEAD"]:
        done = git.run(
            clone, "rev-list", "--first-parent", ref, "--", check=False, timeout=GIT_TIMEOUT
        )
        if done.ok:
            return {sha: pos for pos, sha in enumerate(done.text.split())}
    return {}


def is_ancestor(clone: str, older: str, newer: str) -> bool | None:
    """True/False from git, None when git cannot answer (unknown commit)."""
    return git.answer(clone, "merge-base", "--is-ancestor", older, newer, timeout=GIT_TIMEOUT)


class AncestryOracle:
    """Finds candidate edges whose older merge commit is not in the newer PR's base history."""

    def __init__(
        self, repos: Mapping[int, tuple[str, str | None, str | None]], fallback_limit: int
    ) -> None:
        self.repos = repos
        self.fallback_budget = fallback_limit
        self.checked = 0
        self.unchecked = 0

    def _clone(self, repo_id: int) -> tuple[str, str | None] | None:
        _name, path, branch = self.repos.get(repo_id, ("", None, None))
        return (path, branch) if path and Path(path).exists() else None

    def _verdict(
        self, clone: str, positions: dict[str, int], older: str, newer: str
    ) -> bool | None:
        if older in positions and newer in positions:
            return positions[older] >= positions[newer]
        if self.fallback_budget <= 0:
            return None
        self.fallback_budget -= 1
        return is_ancestor(clone, older, newer)

    def failing(
        self, edges: Mapping[tuple[int, int], Any], nodes: Mapping[int, PRNode]
    ) -> Iterator[tuple[int, int]]:
        """Yield each (newer, older) edge git proves wrong; keep those it cannot judge."""
        by_repo: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for pair in edges:
            by_repo[nodes[pair[0]].repo_id].append(pair)
        for repo_id, pairs in by_repo.items():
            clone = self._clone(repo_id)
            if clone is None:
                self.unchecked += len(pairs)
                continue
            positions = mainline_positions(*clone)
            for newer, older in list(pairs):
                base, merge = nodes[newer].base_sha, nodes[older].merge_sha
                verdict = (
                    self._verdict(clone[0], positions, merge, base) if base and merge else None
                )
                self.checked += verdict is not None
                self.unchecked += verdict is None
                if verdict is False:
                    yield newer, older
