"""PRs that carry other PRs: branch syncs ("Merge master into features"), release merges, rollups.

A long-lived branch merged into another through a PR brings every PR merged on it since the last
sync: its commits are mostly theirs, its diff the sum of theirs, and its texts repeat their
references. As a stage it teaches nothing of its own, and as a link end it takes the credit for
the PRs it carries. It shows in the commits: a commit belongs to the first PR merged with it, and
a carrier has commits of at least `MIN_CARRIED` other PRs (or their `Merge pull request #M`
commits), at least half of its own; or it merges `MIN_CARRIED` other PRs itself (bors's "Rollup of
11 pull requests", whose commits include "Rollup merge of #N"). A PR stacked on one other PR
carries only that one: it stays.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import Connection, select

from prchain.miner.subjects import merged_pr
from prchain.store.models import PRCommit

MIN_CARRIED = 2


def carried_counts(conn: Connection, merged: Mapping[int, tuple[int, datetime]]) -> dict[int, int]:
    """For each PR (id → (number, merged_at)) that carries others, how many it carries."""
    by_sha: dict[str, set[int]] = defaultdict(set)
    commits: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for pr_id, sha, message in conn.execute(select(PRCommit.pr_id, PRCommit.sha, PRCommit.message)):
        if pr_id in merged:
            by_sha[sha].add(pr_id)
            commits[pr_id].append((sha, message))
    # A commit belongs to the first PR merged with it; later PRs that have it too carry it.
    owner = {sha: min(prs, key=lambda pr: (merged[pr][1], pr)) for sha, prs in by_sha.items()}
    found: dict[int, int] = {}
    for pr_id, own in commits.items():
        number = merged[pr_id][0]
        carried: set[int] = set()
        merges: set[int] = set()
        shared = 0
        for sha, message in own:
            theirs = {merged[owner[sha]][0]} if owner[sha] != pr_id else set()
            # A merge of another PR inside this one's commits: GitHub's, bors's (meilisearch's
            # release PRs bring `stable` into `main` with its "Merge #N"), a rollup's.
            merge_of = merged_pr(message.partition("\n")[0])
            if merge_of is not None and merge_of != number:
                theirs.add(merge_of)
                merges.add(merge_of)
            shared += bool(theirs)
            carried |= theirs
        # Merges of other PRs say so themselves: a rollup's own commits are mostly those of the
        # PRs it rolls up, which were never merged apart (so no commit is theirs first).
        if len(merges) >= MIN_CARRIED or (len(carried) >= MIN_CARRIED and 2 * shared >= len(own)):
            found[pr_id] = len(carried)
    return found
