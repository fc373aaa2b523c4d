"""The reference graph's records: a merged PR (`PRNode`) and a reference between two PRs
(`RefRow`), as the store's loaders fill them and every rule reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

EVIDENCE_CHARS = 240


# Reference types that link two PRs through an issue (`_issue_wording`).
THROUGH_ISSUE = frozenset({"issue_mediated", "issue_analogy", "issue_prepares"})


@dataclass
class PRNode:
    id: int
    repo_id: int
    number: int
    title: str
    author: str | None
    created_at: datetime | None  # when it was opened (or at the latest: `opened_by`)
    merged_at: datetime
    base_sha: str | None
    merge_sha: str | None
    lines: int
    files: frozenset[str] = frozenset()
    code_lines: int = 0  # changed lines outside tests, fixtures, config and docs (substance)
    carried: int = 0  # earlier PRs whose commits it brings: a branch sync (prchain/chains/evidence/carriers.py)
    # When a revert pushed without a PR undid it (prchain/chains/evidence/reverts.py).
    reverted_at: datetime | None = None

    @property
    def opened(self) -> datetime:
        return self.created_at or self.merged_at


@dataclass
class RefRow:
    src: int
    dst: int
    type: str
    found_in: str
    via_issue: int
    evidence: str
    number: int | None = None  # the number as written (the target's), to find it in the evidence
    repo_id: int = 0  # the referring PR's repository
