"""Tests for a stage whose PR changes none, lent by a later stage of its chain.

A PR that changes no test file gives its stage nothing a clean room can run: it could only be
judged. Others write tests for such PRs with a model (SWE-Factory, Scale-SWE); a chain often holds
them already, since its later stages build on the earlier ones and their tests read that code.

For a stage without a test patch, the nearest later stage of its chain whose PR changes tests lends
them: the stage's test patch becomes the diff from its base B_t to the lender's merge commit,
limited to the lender's test files (kept byte for byte as git writes it, like a PR's own patch).
`tests verify` decides what of it counts, as for any stage: only tests that fail at B_t and pass
with this stage's gold patch alone are required, so a borrowed test that needs the lender's own
code fails both ways and asks nothing. The agent reads none of it (hidden, like any test patch),
and the sub-query never sees it (`prchain.chains.writers.queries`). A stage's `tests_from` names
the lender; the funnel counts lent tests apart from a PR's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prchain.chains.reading.patches import SplitPatch, kept_paths
from prchain.core import git
from prchain.miner.gitdiff import DIFF_FLAGS, GIT_DIFF_OPTS

MAX_BYTES = 400_000  # a lent test patch past this is not lent (a test tree rewritten in between)


@dataclass
class TestLender:
    """Lends test patches within a chain, where the repository's clone is at hand."""

    clones: Mapping[int, str | None]  # repo id → clone path

    def lend(
        self,
        repo_id: int,
        base_sha: str | None,
        later: Sequence[tuple[int, str | None, SplitPatch]],
    ) -> tuple[str, int | None]:
        """(test patch, lender's PR id) for a stage at `base_sha`, from the first of `later`
        stages (PR id, merge commit, split gold patch) whose test files differ from B_t's;
        ("", None) where none does or the clone cannot say."""
        clone = self.clones.get(repo_id)
        if not clone or not base_sha:
            return "", None
        for pr_id, end_sha, split in later:
            paths = kept_paths(split.test)
            if not paths or not end_sha:
                continue
            done = git.run(
                clone,
                "diff",
                *DIFF_FLAGS,
                base_sha,
                end_sha,
                "--",
                *paths,
                options=GIT_DIFF_OPTS,
                check=False,
            )
            if done.ok and done.stdout.strip() and len(done.stdout) <= MAX_BYTES:
                return done.stdout.decode("utf-8", errors="replace"), pr_id
        return "", None

    def fill(
        self, rows: list[dict[str, Any]], repo_id: int, splits: Mapping[int, SplitPatch]
    ) -> None:
        """Give each of one chain's stage rows (in stage order) without a test patch the tests the
        nearest later stage lends; `splits`: each PR's own split gold patch."""
        for at, row in enumerate(rows):
            if row["gold_test_patch"]:
                continue
            later = [
                (r["pr_id"], r["end_sha"], splits[r["pr_id"]])
                for r in rows[at + 1 :]
                if r["pr_id"] in splits
            ]
            row["gold_test_patch"], row["tests_from"] = self.lend(repo_id, row["base_sha"], later)
