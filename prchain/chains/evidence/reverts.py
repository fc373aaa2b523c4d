"""Reverts the miner's references miss: named only by a commit sha that is not a PR's merge
commit, or pushed straight to the branch without a PR.

The miner resolves "This reverts commit <sha>" only against PRs' merge (or squash) commits. A
revert made from a PR's branch commit (cargo #16299: "This reverts commit 9f5393a5…", a commit of
#16230's branch) stays unresolved, so neither `older_reverted_before` nor the revert-pair rule saw
it. Here the build matches those shas against every PR's own commits (`pr_commits`) as well as its
merge commit, and adds the missing `reverts` references. And a revert committed without a PR
(tokio's maintainers did so) is read from the clone's history: the PR it undid is marked reverted
from that moment, so a later PR does not build on code that was gone (`older_reverted_before`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

from sqlalchemy import Engine, select

from prchain.core import git
from prchain.miner.refs import REVERT_COMMIT, evidence
from prchain.store.models import PRCommit, PullRequest

if TYPE_CHECKING:
    from prchain.chains.evidence.nodes import PRNode

# A short sha shorter than this names too many commits to trust.
MIN_SHA = 7
LOG_TIMEOUT = 120.0


class ShaIndex:
    """sha → PR id for one store: merge commits first, then each PR's own commits; a sha that
    belongs to the commits of two PRs (a stacked branch merged twice) names neither."""

    def __init__(self, merges: Iterable[tuple[str, int]], commits: Iterable[tuple[str, int]]):
        owners: dict[str, set[int]] = defaultdict(set)
        for sha, pr in commits:
            owners[sha.lower()].add(pr)
        for sha, pr in merges:
            owners[sha.lower()] = {pr}
        self._owner = {sha: next(iter(prs)) for sha, prs in owners.items() if len(prs) == 1}
        self._sorted = sorted(owners)
        self._ambiguous = {sha for sha, prs in owners.items() if len(prs) > 1}

    def find(self, sha: str) -> int | None:
        """The PR a full or abbreviated sha belongs to; None when unknown or ambiguous."""
        sha = sha.lower()
        if len(sha) < MIN_SHA:
            return None
        at = bisect_left(self._sorted, sha)
        hits: list[str] = []
        while at < len(self._sorted) and self._sorted[at].startswith(sha) and len(hits) < 2:
            hits.append(self._sorted[at])
            at += 1
        if len(hits) != 1 or hits[0] in self._ambiguous:
            return None
        return self._owner[hits[0]]


def _texts(engine: Engine) -> list[tuple[int, str, str]]:
    """(PR id, where, text) of every PR body and commit message that names a reverted commit."""
    needle = "%reverts commit%"
    with engine.connect() as conn:
        bodies = conn.execute(
            select(PullRequest.id, PullRequest.body).where(PullRequest.body.ilike(needle))
        )
        found = [(pr, "body", text or "") for pr, text in bodies]
        messages = conn.execute(
            select(PRCommit.pr_id, PRCommit.message).where(PRCommit.message.ilike(needle))
        )
        found += [(pr, "commit", text or "") for pr, text in messages]
    return found


def _index(engine: Engine) -> ShaIndex:
    with engine.connect() as conn:
        merges = [
            (sha, pr)
            for pr, sha in conn.execute(select(PullRequest.id, PullRequest.merge_commit_sha))
            if sha
        ]
        commits = [(sha, pr) for pr, sha in conn.execute(select(PRCommit.pr_id, PRCommit.sha))]
    return ShaIndex(merges, commits)


class FoundRevert(NamedTuple):
    """A revert the miner's references miss, found by a sha (`sha_reverts`) or a title
    (`title_reverts`)."""

    reverter: int
    reverted: int
    found_in: str  # body | commit | title
    evidence: str
    repo_id: int


def sha_reverts(
    engine: Engine, nodes: Mapping[int, PRNode], known: Iterable[tuple[int, int]]
) -> list[FoundRevert]:
    """Reverts the miner could not resolve: a PR reverting any commit of another PR.

    Only pairs of mined PRs of one repository not in `known` (reverter, reverted)."""
    texts = _texts(engine)
    if not texts:
        return []
    index = _index(engine)
    have = set(known)
    added: list[FoundRevert] = []
    for pr, where, text in texts:
        reverter = nodes.get(pr)
        for match in REVERT_COMMIT.finditer(text):
            target = index.find(match.group("sha"))
            reverted = nodes.get(target) if target is not None else None
            if reverted is None or reverter is None or reverted.id == pr:
                continue
            if reverted.repo_id != reverter.repo_id or (pr, reverted.id) in have:
                continue
            have.add((pr, reverted.id))
            words = evidence(text, match.start(), match.end())
            added.append(FoundRevert(pr, reverted.id, where, words, reverter.repo_id))
    return added


# A revert commit's subject as git writes it, `Revert "<the reverted subject>"`, and a PR number
# of its own after the quote (then it is a PR, mined as one, and a reference says what it reverts).
PUSHED_REVERT = re.compile(r'^Revert "(?P<quoted>.*)"\s*$', re.I)
_QUOTED_PR = re.compile(r"\(#(?P<number>\d+)\)\s*$")


def title_reverts(
    nodes: Mapping[int, PRNode], known: Iterable[tuple[int, int]]
) -> list[FoundRevert]:
    """Reverts named only by the reverted PR's title: GitHub's revert button titles the new PR
    `Revert "<title>"`, and a squash history whose titles carry no `(#N)` of their own keeps
    nothing else when the body was rewritten (tikv #15787, `Revert "import: write RPC will check
    region epoch before continue"`, body "close tikv/tikv#15791": it undid #15013, which #15795
    then re-landed). The reverted PR is the latest of that exact title merged before the revert,
    in the same repository. Only pairs not in `known` (reverter, reverted)."""
    titled: dict[tuple[int, str], list[PRNode]] = defaultdict(list)
    for node in nodes.values():
        titled[(node.repo_id, node.title.strip())].append(node)
    have = set(known)
    added: list[FoundRevert] = []
    for reverter in nodes.values():
        quoted = PUSHED_REVERT.match(reverter.title.strip())
        if quoted is None or _QUOTED_PR.search(quoted.group("quoted")):
            continue  # not a revert, or one whose number the miner resolves
        earlier = [
            node
            for node in titled.get((reverter.repo_id, quoted.group("quoted").strip()), [])
            if node.merged_at <= reverter.merged_at and node.id != reverter.id
        ]
        if not earlier:
            continue
        reverted = max(earlier, key=lambda node: node.merged_at)
        if (reverter.id, reverted.id) not in have:
            have.add((reverter.id, reverted.id))
            title = reverter.title.strip()
            added.append(FoundRevert(reverter.id, reverted.id, "title", title, reverter.repo_id))
    return added


def pushed_reverts(
    clone: str, rev: str, index: ShaIndex, numbers: Mapping[int, int]
) -> dict[int, datetime]:
    """PR id → when a revert pushed straight to the branch (a commit that is no PR of its own)
    undid it: tokio's `Revert "Add max line length to LinesCodec (#590)"`, 30 minutes after #590.
    The reverted PR is the one owning the commit the message names, else the `(#N)` ending the
    quoted subject (`numbers`: PR number → id, of this repository)."""
    done = git.run(
        clone,
        "log",
        "--first-parent",
        "--no-merges",
        "-i",
        '--grep=^revert "',
        "-z",  # NUL ends each commit: no message holds one (`prchain.miner.gitsource.LOG_FORMAT`)
        "--format=%cI%x1f%B",
        rev,
        check=False,
        timeout=LOG_TIMEOUT,
    )
    if not done.ok:
        return {}
    found: dict[int, datetime] = {}
    for record in done.text.split("\0"):
        when, _, message = record.strip("\n").partition("\x1f")
        subject = PUSHED_REVERT.match(message.split("\n", 1)[0].strip())
        if not when or subject is None:
            continue
        target = next((index.find(m.group("sha")) for m in REVERT_COMMIT.finditer(message)), None)
        if target is None and (quoted := _QUOTED_PR.search(subject.group("quoted"))):
            target = numbers.get(int(quoted.group("number")))
        if target is None:
            continue
        at = datetime.fromisoformat(when).astimezone(UTC).replace(tzinfo=None)
        found[target] = min(at, found.get(target, at))
    return found


def mark_pushed_reverts(
    engine: Engine,
    nodes: Mapping[int, PRNode],
    repos: Mapping[int, tuple[str, str | None, str | None]],
) -> int:
    """Set `reverted_at` of the PRs a pushed revert undid, per repository with a clone; returns
    how many were marked."""
    index: ShaIndex | None = None
    marked = 0
    for repo_id, (_name, clone, branch) in repos.items():
        if not clone:
            continue
        numbers = {n.number: n.id for n in nodes.values() if n.repo_id == repo_id}
        index = index or _index(engine)
        for pr_id, at in pushed_reverts(clone, branch or "HEAD", index, numbers).items():
            node = nodes.get(pr_id)
            if node is not None and node.repo_id == repo_id and at >= node.merged_at:
                node.reverted_at = at if node.reverted_at is None else min(at, node.reverted_at)
                marked += 1
    return marked
