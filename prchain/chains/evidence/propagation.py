"""The carry-forward fallback (`propagate`), asked of git before a chain is kept.

Where the earlier stages' gold patches do not revert at B_t (a PR outside the chain edited their
lines in between, prchain/chains/evidence/revertible.py), stage t may be entered by propagating
files instead (docs/architecture.md, "Carry-forward"): the stage base C_t is B_t with every file
an earlier stage's gold patch touches (F_t) taken as the previous stage base C_(t−1) has it, and
the agent's own change so far is carried onto it as at any entry. The agent's files of F_t are then
its own stage t−1 output; what it did not write of them is C_(t−1)'s, which holds no earlier gold
code either. So no gold line is shown, and the cost is what B_t's outside PRs changed in F_t since
the earlier stages: withheld from stage t (`withheld`, measured per stage).

Two conditions, each one git question per commit:
* nothing after B_t: every earlier stage's merge commit is an ancestor of B_t. Entered with the
  gold patches (`tests verify`, `tasks eval`), F_t holds the gold post-images of the earlier
  stages; they are no later than B_t only where those stages were merged into it. A stage whose
  merge commit is unknown is refused too.
* the gold patch of stage t meets history's files: each file of F_t that g_t touches is at B_t as
  the last earlier stage that touched it left it (no outside PR changed it since), so the state the
  gold agent reaches there is B_t's and g_t applies as it was merged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from prchain.core import git
from prchain.environments.stage_entry import patch_paths, reverted_part

GIT_TIMEOUT = 120
LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}  # a path that looks like pathspec magic is a path


@dataclass(frozen=True)
class EarlierStage:
    """What the fallback reads of an earlier stage: its merge commit and gold code patch."""

    merge_sha: str | None
    gold: str


class MergedInto:
    """Per repository clone, whether an earlier stage's merge commit is an ancestor of a later
    base (asked once per pair): the condition every fallback entry shares."""

    def __init__(self, clones: Mapping[int, str | None]) -> None:
        self.clones = {repo: path for repo, path in clones.items() if path and Path(path).exists()}
        self._ancestors: dict[tuple[int, str, str], bool] = {}

    def can_check(self, repo_id: int) -> bool:
        return repo_id in self.clones

    def all_merged(self, repo_id: int, earlier: Sequence[EarlierStage], base: str) -> bool:
        """Whether every `earlier` stage has a merge commit that is an ancestor of `base`."""
        return all(s.merge_sha and self._is_ancestor(repo_id, s.merge_sha, base) for s in earlier)

    def _is_ancestor(self, repo_id: int, older: str, newer: str) -> bool:
        key = (repo_id, older, newer)
        if key not in self._ancestors:
            clone = self.clones[repo_id]
            known = git.answer(clone, "merge-base", "--is-ancestor", older, newer,
                               timeout=GIT_TIMEOUT)  # fmt: skip
            self._ancestors[key] = bool(known)
        return self._ancestors[key]


class Propagation(MergedInto):
    """Answers, per repository clone, whether a stage can be entered by the fallback, and what it
    withholds. Answers of git are cached (ancestry per commit pair, blobs per commit and path)."""

    def __init__(self, clones: Mapping[int, str | None]) -> None:
        super().__init__(clones)
        self._blobs: dict[tuple[int, str, str], str | None] = {}

    def enters(self, repo_id: int, base: str, earlier: Sequence[EarlierStage], gold: str) -> bool:
        """Whether stage t (base B_t, gold patch `gold`) can be entered by propagation after the
        `earlier` stages (oldest first)."""
        if not earlier or not base or repo_id not in self.clones:
            return False
        if not self.all_merged(repo_id, earlier, base):
            return False
        touched = set(patch_paths(gold))
        return not any(path in touched for path in self.withheld(repo_id, base, earlier))

    def withheld(self, repo_id: int, base: str, earlier: Sequence[EarlierStage]) -> list[str]:
        """The paths of F_t that B_t has otherwise than the last earlier stage touching them left
        them: what outside PRs changed there, which a stage entered by propagation does not see."""
        last: dict[str, str] = {}
        for stage in earlier:
            for path in patch_paths(reverted_part(stage.gold)):
                last[path] = stage.merge_sha or ""
        self._learn(repo_id, base, list(last))
        for merge in set(last.values()) - {""}:
            self._learn(repo_id, merge, [p for p, m in last.items() if m == merge])
        return sorted(
            path
            for path, merge in last.items()
            if not merge
            or self._blobs[(repo_id, merge, path)] != self._blobs[(repo_id, base, path)]
        )

    def withheld_lines(self, repo_id: int, base: str, earlier: Sequence[EarlierStage]) -> int:
        """The changed lines of `withheld` (added and deleted, text files), for the measurement."""
        last: dict[str, str] = {}
        for stage in earlier:
            for path in patch_paths(reverted_part(stage.gold)):
                last[path] = stage.merge_sha or ""
        lines = 0
        for path in self.withheld(repo_id, base, earlier):
            if not last[path]:
                continue
            out = git.run(self.clones[repo_id], "diff", "--numstat", last[path], base, "--",
                          path, env=LITERAL, check=False, timeout=GIT_TIMEOUT).text  # fmt: skip
            for row in out.splitlines():
                added, deleted, _ = row.split("\t", 2)
                lines += int(added) + int(deleted) if added.isdigit() and deleted.isdigit() else 0
        return lines

    def _learn(self, repo_id: int, commit: str, paths: list[str]) -> None:
        """The blob of each of `paths` at `commit` (None: absent there), one `ls-tree` for all."""
        todo = [p for p in paths if (repo_id, commit, p) not in self._blobs]
        if not todo:
            return
        done = git.run(self.clones[repo_id], "ls-tree", "-z", commit, "--", *todo, env=LITERAL,
                       check=False, timeout=GIT_TIMEOUT)  # fmt: skip
        found: dict[str, str] = {}
        for entry in filter(None, done.stdout.split(b"\0")):
            meta, _, name = entry.partition(b"\t")
            found[name.decode(errors="surrogateescape")] = meta.split()[-1].decode()
        for path in todo:
            self._blobs[(repo_id, commit, path)] = found.get(path)
