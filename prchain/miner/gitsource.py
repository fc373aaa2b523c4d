"""PRs from a local clone's history alone: squash commits `Title (#N)`, `Merge pull request #N`,
merge-queue merges `Title (#N)` (on the first-parent line, or into any branch that reaches it), bors merges `Auto merge of #N` and bors-ng merges `Merge #N`
(a batch `Merge #N #M` is an octopus merge: each PR is one of its parents, with its own base),
and the single commits of Apache Spark's merge script, which end `Closes #N from owner/branch.`
(Kyuubi, Celeborn and other Apache projects land every PR so).

One `git log` pass reads every new commit's parents and message; the first-parent line of HEAD is
where PRs land. A merge PR's commits are the commits its second parent brings in that nothing
before it did (`first_parent..second_parent`, computed from the parent map instead of one git call
per merge). Patches come from `prchain.miner.gitdiff` streamed in batches by a few diff-tree processes.

A `Merge pull request #N` commit off that line (a PR merged into a maintenance branch that was
merged back later, or into another PR's branch) is a PR too, with its own base (its first parent)
and its own commits (`git rev-list first..second`); it is yielded just before the first-parent
commit that brought it in; so is a two-parent `Title (#N)` merge off the line (a PR merged into a
feature branch by a merge queue or with its title as subject). Its base is its merge's first
parent, the tip of the branch it was merged into at the time: where that branch had moved since the
PR was opened, this differs from the base GitHub shows (the PR's diff is against what it was merged
into). One-parent `Title (#N)` commits count on the first-parent line only: off it they are
backports and cherry-picks, counted as such (`BACKPORTS`) and kept out of the PRs. A number the line lands again months later,
under another title, is the later PR's: the earlier came with the history of the project's
former home. A merge that brings in another project's whole history (commits that reach a root of
their own) keeps none of its commits: their numbers are the other project's.

The cursor is the last first-parent commit fully handled, so a rerun walks only `CURSOR..HEAD`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from prchain.core import git
from prchain.core.errors import GitError, NotAClone
from prchain.miner.gitdiff import PatchResult, iter_patches
from prchain.miner.source import SOURCES, CommitRecord, IssueRecord, PRRecord, SourceInfo
from prchain.miner.subjects import BORS, BORS_NG_ENTRY, MERGE, bors_ng_numbers

SQUASH = re.compile(r"^(?P<title>.*?)\s*\(#(?P<num>\d{1,9})\)$")
# The line Spark's merge script (`merge_spark_pr.py`, and its copies) writes into the one commit it
# lands: the PR's number and its head branch. GitHub's own "Closes #N" names an issue; the
# "from owner/branch" makes it the PR. Older copies go on to list the branch's commits (apache/
# zeppelin: 3,270 of its 3,653 such lines).
MERGE_SCRIPT = re.compile(
    r"^Closes #(?P<num>\d{1,9}) from (?P<branch>[^\s/]+/\S+?)\.?"
    r"(?: and squashes the following commits:)?\s*$",
    re.M,
)
# An issue the script's trailer says the PR closes.
CLOSES_ISSUE = re.compile(
    r"^(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?) #\d{1,9}[ \t]*$", re.I | re.M
)
GITHUB_URL = re.compile(
    r"github\.com[/:](?P<owner>[A-Za-z0-9][\w.-]*)/(?P<name>[\w.-]+?)(?:\.git)?(?=[/\s#)\]>\"'.,:]|$)"
)
NOT_REPOS = ("user-attachments/assets", "user-attachments/files")  # GitHub upload URLs, not repos
# One commit per NUL-terminated record (`git log -z`): a message never holds NUL, while any other
# control byte may stand in one (apache/zeppelin's #815 pasted npm's binary garbage into its
# body, `\x1e` and `\x1f` among it). The message comes last, so a `\x1f` in it stays in it.
LOG_FORMAT = "%H%x1f%P%x1f%an%x1f%at%x1f%ct%x1f%B"
FORK_RATIO = (
    10  # an off-line merge numbered under a tenth of the highest PR landed so far is a fork's
)
# An off-line merge whose first commit was written this long after the first-parent line had
# passed its number is another repository's (a subtree sync brings in Miri's "Merge pull request
# #4001 from rust-lang/rustup", written in 2024, four years after rust-analyzer's own #4001). Our
# own PRs may wait on a maintenance branch for years (click 7.1 took in PRs from 2018), but they
# were written when their number was new.
FOREIGN_AGE = timedelta(days=365)
# An off-line merge numbered far above the highest PR landed so far is a larger repository's: a
# subtree sync brings in rust-lang/rust's bors merges ("Auto merge of #161151") into
# rust-analyzer, whose own numbers were near 23,000. Open PRs keep numbers ahead of those landed,
# hence the ratio and the margin.
FOREIGN_HIGH_RATIO = 1.5
FOREIGN_HIGH_MARGIN = 1000
MOVED_AGE = timedelta(days=90)  # a number landing again this much later is a new home's PR
RESTART_HIGH = 1000  # numbers restart (another repository's line before ours) only past this
RESTART_RATIO = 10  # a restart lands a number under this fraction of the highest before it
RESTART_RUN = 50  # and this many landings from it all stay under half of that highest
# How `mine` counts a PR's change landed again off the first-parent line (a backport onto a
# maintenance branch, a cherry-pick, the same PR's merge on a second branch): never a PR of its own,
# kept out of the chains.
BACKPORTS = "backports and cherry-picks of PRs (kept out)"
PATCH_BATCH = (
    200  # PRs per diff-tree process: small enough to keep memory flat, large enough to amortise
)


@dataclass
class _Commit:
    sha: str
    parents: list[str]
    author: str
    authored_at: datetime
    committed_at: datetime
    message: str


def _time(epoch: str) -> datetime:
    return datetime.fromtimestamp(int(epoch or 0), UTC).replace(tzinfo=None)


@SOURCES.register("git")
class GitSource:
    """A local clone (bare or not, with or without a remote) read without any network."""

    name = "git"

    def __init__(
        self,
        path: str,
        *,
        full_name: str | None = None,
        since: datetime | None = None,
        max_patch_bytes: int = 2_000_000,
        workers: int = 2,
    ) -> None:
        self.path = str(Path(path).expanduser().resolve())
        self._check_clone()
        self.since, self.max_patch_bytes, self.workers = since, max_patch_bytes, max(1, workers)
        self.full_name = full_name or self._guess_name()
        self._pending: int | None = None
        self._kinds: Counter[str] = Counter()
        self._cursors: dict[str, str] = {}  # merge sha of an off-line PR → the cursor to leave

    # ------------------------------------------------------------ the PRSource protocol

    def describe(self) -> SourceInfo:
        branch = (
            git.output(self.path, "symbolic-ref", "--short", "-q", "HEAD", check=False).strip()
            or None
        )
        return SourceInfo(self.full_name, branch, self.path)

    def pull_requests(self, since_cursor: str | None) -> Iterator[PRRecord]:
        head, commits = self._read_log(since_cursor)
        prs = [
            pr
            for pr in self._prs(head, commits)
            if self.since is None or (pr.merged_at and pr.merged_at >= self.since)
        ]
        self._pending = len(prs)
        batches = deque(prs[i : i + PATCH_BATCH] for i in range(0, len(prs), PATCH_BATCH))
        del prs  # each record gains its patch below: only the batches in flight may hold them
        yield from self._with_patches(batches)

    def issues(self, since_cursor: str | None) -> Iterator[IssueRecord]:
        return iter(())  # a clone holds no issues

    def cursor_after(self, record: PRRecord) -> str:
        # An off-line PR leaves the cursor before the first-parent commit that brings it in, so
        # a rerun after a crash walks that commit (and this PR) again rather than skipping them.
        sha = str(record.merge_commit_sha)
        return self._cursors.get(sha, sha)

    def found_by_kind(self) -> dict[str, int]:
        """PRs the current walk found: squash, merge (first-parent line), merge off that line."""
        return dict(self._kinds)

    def known_numbers(self) -> tuple[set[int], set[int]] | None:
        return None  # history cannot tell an issue number from a PR that did not land

    def requests_made(self) -> int:
        return 0

    def points_spent(self) -> int:
        return 0

    def expected_count(self) -> int | None:
        """How many PRs the current `pull_requests` walk will yield (known once it started)."""
        return self._pending

    # ------------------------------------------------------------ reading history

    def _check_clone(self) -> None:
        if not Path(self.path).exists():
            raise NotAClone(f"{self.path} does not exist")
        if git.output(self.path, "rev-parse", "--git-dir", check=False).strip() == "":
            raise NotAClone(f"{self.path} is not a git clone")

    def _guess_name(self) -> str:
        """owner/name from the remote URL, else the GitHub repository most linked in history."""
        for remote in git.output(self.path, "remote", "-v", check=False).splitlines():
            m = GITHUB_URL.search(remote)
            if m:
                return f"{m.group('owner')}/{m.group('name')}"
        # Counted once per commit: dependency-bump messages repeat one action's URL dozens of times.
        log = git.output(self.path, "log", "-z", "--format=%B", check=False)
        counts: Counter[str] = Counter()
        for message in log.split("\0"):
            counts.update(
                {f"{m.group('owner')}/{m.group('name')}" for m in GITHUB_URL.finditer(message)}
            )
        for ignored in NOT_REPOS:
            counts.pop(ignored, None)
        if not counts:
            raise GitError(
                f"cannot tell which GitHub repository {self.path} is; pass --name OWNER/NAME"
            )
        return counts.most_common(1)[0][0]

    def _head(self) -> str | None:
        head = git.output(
            self.path, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False
        ).strip()
        return head or None

    def _read_log(self, since_cursor: str | None) -> tuple[str | None, list[_Commit]]:
        """HEAD and every commit reachable from it and not from the cursor, parents first."""
        head = self._head()
        if head is None:
            return None, []
        rev = head if not self._usable_cursor(since_cursor, head) else f"{since_cursor}..{head}"
        raw = git.output(
            self.path,
            "log",
            "--topo-order",
            "--reverse",
            "--encoding=UTF-8",
            "-z",
            f"--format={LOG_FORMAT}",
            rev,
        )
        return head, [_parse_entry(e) for e in raw.split("\0") if e]

    def _usable_cursor(self, cursor: str | None, head: str) -> bool:
        """A cursor still in HEAD's history; after a force-push the whole history is walked again."""
        if not cursor:
            return False
        return git.succeeds(self.path, "merge-base", "--is-ancestor", cursor, head)

    def _prs(self, head: str | None, commits: list[_Commit]) -> list[PRRecord]:
        by_sha = {c.sha: c for c in commits}
        position = {c.sha: i for i, c in enumerate(commits)}  # topological: parents first
        mainline = _first_parent_line(head, by_sha)
        claimed = set(mainline)
        # A number a first-parent commit lands is that PR's; a merge off the line with the same
        # number is a backport or a fork's own PR.
        owners = _number_owners(mainline, by_sha)
        # Another repository's history on the first-parent line itself (Miri's line runs through
        # two months of rust-lang/rust's bors merges, #102064 to #104456, when it was moved
        # into the compiler's tree and back): neither a PR of ours nor a measure of our numbers.
        foreign = _foreign_on_line(mainline, owners)
        owners = {number: sha for number, sha in owners.items() if sha not in foreign}
        # Another repository's line before ours or inside it, where our numbers start again:
        # apache/iceberg-python's starts with 616 of apache/iceberg's squash commits (up to
        # #8174), tracing's holds tokio's #827-#1170 between its own #120 and #122.
        imported = _imported_before(mainline, owners)
        owners = {number: sha for number, sha in owners.items() if sha not in imported}
        landed = set(owners)
        prs: list[PRRecord] = []
        seen: set[int] = set()
        # When each new highest number landed on the first-parent line, to tell how old a number is.
        times: list[datetime] = []
        highs: list[int] = []
        squashed: list[bool] = []  # whether each high came from a squash-style subject
        self._kinds = Counter()
        for sha in mainline:
            commit = by_sha[sha]
            branch = _claim(commit, by_sha, claimed, position) if len(commit.parents) > 1 else []
            own = _own_history(branch, by_sha)
            if len(own) < len(branch):
                # Another project's history merged in whole (dask #11623 brings dask-expr's 940
                # commits): its "(#6)" and "Merge pull request #31" are that project's numbers,
                # and its first commit is years older than the PR.
                self._kinds["merges of another history: its commits left out"] += 1
                # Count that history's own PR merges, so the PRs found add up to the "Merge pull
                # request" commits reachable from HEAD (containerd's merge of containerd/cri
                # brings 892 of cri's PR merges).
                ours = set(own)
                theirs = sum(_merges_a_pr(by_sha[s]) for s in branch if s not in ours)
                if theirs:
                    self._kinds["skipped: PR merges inside another history"] += theirs
                branch = own
            for side in self._off_line_prs(commit, branch, by_sha):
                if side.number in seen or side.number in landed:
                    self._kinds[BACKPORTS] += 1  # the PR's merge again, on another branch
                    continue
                if side.number * FORK_RATIO < (highs[-1] if highs else 0):
                    # PR numbers grow with time: a tiny number merged this late is a fork's own
                    # PR ("Merge pull request #1 from me/master"), not one of this repository.
                    self._kinds["skipped: a fork's own PR number"] += 1
                    continue
                if highs and side.number > _foreign_bound(highs[-1]):
                    self._kinds["skipped: another repository's PR number"] += 1
                    continue
                opened = side.created_at or commit.committed_at
                year_before = bisect_right(times, opened - FOREIGN_AGE)
                if year_before and side.number < highs[year_before - 1]:
                    self._kinds["skipped: another repository's PR number"] += 1
                    continue
                seen.add(side.number)
                prs.append(side)
                self._kinds["merge off the first-parent line"] += 1
            if sha in foreign:
                self._kinds["skipped: another repository's PR number"] += 1
                continue
            if sha in imported:
                self._kinds["skipped: history imported from another repository"] += 1
                continue
            found: list[PRRecord | None] = [*self._bors_batch(commit, by_sha)]
            found = found or [_pr_from(commit, [by_sha[s] for s in branch])]
            for pr in found:
                if pr is None or pr.number in seen:
                    continue
                if owners.get(pr.number, sha) != sha:
                    self._kinds["skipped: an earlier repository's PR number"] += 1
                    continue
                seen.add(pr.number)
                merged = len(commit.parents) > 1
                # A merge commit's number is surely a PR; a squash-style "(#1779)" over it was
                # another tracker's ticket (numpy's Trac tickets of 2010–11 ran ahead of its PR
                # numbers and made its own #268–#325 look like another repository's).
                while merged and highs and highs[-1] > pr.number and squashed[-1]:
                    del times[-1], highs[-1], squashed[-1]
                if pr.number > (highs[-1] if highs else 0):
                    times.append(commit.committed_at)
                    highs.append(pr.number)
                    squashed.append(not merged)
                prs.append(pr)
                self._kinds[_kind(commit)] += 1
        return prs

    def _bors_batch(self, commit: _Commit, by_sha: dict[str, _Commit]) -> list[PRRecord]:
        """The PRs of a bors-ng batch ("Merge #N #M", one parent after the first per PR), each
        with its own head as merge commit, its base where its branch left the first parent, and
        its own commits; [] for any other commit. The cursor stays before the batch until its
        last PR is yielded."""
        numbers = bors_ng_numbers(commit.message.partition("\n")[0])
        if len(numbers) < 2 or len(commit.parents) != len(numbers) + 1:
            return []
        said = _bors_ng_entries(commit.message)
        first = commit.parents[0]
        prs: list[PRRecord] = []
        for number, head in zip(numbers, commit.parents[1:], strict=True):
            base = git.output(self.path, "merge-base", first, head).strip() or first
            shas = git.output(
                self.path, "rev-list", "--topo-order", "--reverse", f"{first}..{head}"
            ).split()
            title, body = said.get(number, (f"#{number}", ""))
            pr = _record(commit, number, title, body, [by_sha[s] for s in shas if s in by_sha])
            pr.base_sha, pr.head_sha, pr.merge_commit_sha = base, head, head
            self._cursors[head] = first
            prs.append(pr)
        self._cursors[prs[-1].merge_commit_sha or ""] = commit.sha
        return prs

    def _off_line_prs(
        self, commit: _Commit, branch: list[str], by_sha: dict[str, _Commit]
    ) -> Iterator[PRRecord]:
        """The PR merge commits among those a first-parent commit brings in: GitHub's `Merge pull
        request #N`, and bors's `Merge #N` and `Auto merge of #N` (meilisearch merged its fixes
        into `stable` with bors, and `stable` into `main` with one PR per release)."""
        for sha in branch:
            side = by_sha[sha]
            if _backport(side):
                self._kinds[BACKPORTS] += 1
                continue
            if not side.parents or not _merges_a_pr(side):
                continue
            shas: list[str] = []
            if len(side.parents) > 1:  # one parent: a rebased merge, the commit is the PR
                first, second = side.parents[0], side.parents[1]
                shas = git.output(
                    self.path, "rev-list", "--topo-order", "--reverse", f"{first}..{second}"
                ).split()
            pr = _pr_from(side, [by_sha[s] for s in shas if s in by_sha])
            if pr is not None:
                self._cursors[side.sha] = commit.parents[0] if commit.parents else side.sha
                yield pr

    # ------------------------------------------------------------ patches, in parallel batches

    def _with_patches(self, batches: deque[list[PRRecord]]) -> Iterator[PRRecord]:
        """Patches for `batches` in order, `workers` diff-tree processes ahead of the consumer.

        Batches leave the deque when submitted and are dropped once yielded, so memory holds
        the batches in flight, never the whole history's patches."""
        with ThreadPoolExecutor(self.workers, thread_name_prefix="gitdiff") as pool:
            queue: deque[tuple[list[PRRecord], Future[list[PatchResult]]]] = deque()
            while batches or queue:
                while batches and len(queue) <= self.workers:
                    batch = batches.popleft()
                    queue.append((batch, pool.submit(self._patch_batch, batch)))
                batch, future = queue.popleft()
                for pr, result in zip(batch, future.result(), strict=True):
                    pr.patch, pr.files, pr.patch_status = result.patch, result.files, result.status
                    pr.additions = sum(f.additions for f in result.files)
                    pr.deletions = sum(f.deletions for f in result.files)
                    yield pr

    def _patch_batch(self, batch: list[PRRecord]) -> list[PatchResult]:
        pairs = [(str(pr.merge_commit_sha), pr.base_sha) for pr in batch]
        return [result for _sha, result in iter_patches(self.path, pairs, self.max_patch_bytes)]


def _parse_entry(entry: str) -> _Commit:
    sha, parents, author, authored, committed, message = entry.split("\x1f", 5)
    return _Commit(
        sha, parents.split(), author, _time(authored), _time(committed), message.strip("\n")
    )


def _first_parent_line(head: str | None, by_sha: dict[str, _Commit]) -> list[str]:
    """HEAD's first-parent chain within the walked commits, oldest first."""
    line: list[str] = []
    sha = head
    while sha is not None and sha in by_sha:
        line.append(sha)
        parents = by_sha[sha].parents
        sha = parents[0] if parents else None
    line.reverse()
    return line


def _claim(
    merge: _Commit, by_sha: dict[str, _Commit], claimed: set[str], position: dict[str, int]
) -> list[str]:
    """Commits the merge's other parents bring in that no earlier first-parent commit did."""
    found: list[str] = []
    stack = [p for p in merge.parents[1:] if p in by_sha and p not in claimed]
    while stack:
        sha = stack.pop()
        if sha in claimed:
            continue
        claimed.add(sha)
        found.append(sha)
        stack.extend(p for p in by_sha[sha].parents if p in by_sha and p not in claimed)
    found.sort(key=position.__getitem__)
    return found


def _own_history(branch: list[str], by_sha: dict[str, _Commit]) -> list[str]:
    """The branch's commits that descend from this repository's history: those with a parent
    outside the branch (the first-parent line, an earlier branch, or before the log's cursor) or
    in this set. A commit without parents, and all it alone leads to, is another history merged
    in (a project absorbed with its own history, a subtree added)."""
    inside = set(branch)
    own: set[str] = set()
    for sha in branch:  # parents first
        parents = by_sha[sha].parents
        if any(p not in inside or p in own for p in parents):
            own.add(sha)
    return [sha for sha in branch if sha in own]


def _number_owners(mainline: list[str], by_sha: dict[str, _Commit]) -> dict[int, str]:
    """PR number → the first-parent commit that lands that PR.

    A number landing again under another title, `MOVED_AGE` or more after it first landed, names
    a PR of another repository: a project that moved keeps its old home's history, so
    tokio-rs/tracing's line holds tokio-trace-prototype's #1–#168 and tokio's #1047–#1170 before
    its own PRs of those numbers took them (150 days or more later; biome's after rome's, 500;
    arrow-rs's after the apache/arrow monorepo's, 1,400). The later one is this repository's, and
    references in its PRs' texts mean it. Sooner, it is the same PR: landed as a series of
    commits (a rebase merge, all on one day), cherry-picked, or named by a commit pushed after
    it. The first landing stays.

    A landing's age runs from when its commit was written: an imported history's commits were all
    committed at the import (apache/iceberg-python's line starts with 616 of apache/iceberg's
    squash commits, each committed on 2023-09-30 and written years before), and the repository's
    own PRs of those numbers landed weeks after it."""
    owners: dict[int, str] = {}
    first: dict[int, tuple[datetime, str]] = {}
    for sha in mainline:
        pr = _pr_from(by_sha[sha], [])
        if pr is None:
            continue
        commit, title = by_sha[sha], " ".join(pr.title.split()).casefold()
        written = min(commit.authored_at, commit.committed_at)
        since, said = first.setdefault(pr.number, (written, title))
        if pr.number not in owners or (title != said and commit.committed_at - since >= MOVED_AGE):
            owners[pr.number] = sha
            first[pr.number] = (written, title)
    return owners


def _foreign_bound(high: int) -> float:
    """The highest number one of our PRs may have while `high` is the highest of ours landed."""
    return FOREIGN_HIGH_RATIO * high + FOREIGN_HIGH_MARGIN


def _landings(mainline: list[str], owners: dict[int, str]) -> list[tuple[int, int, str]]:
    """(place on the first-parent line, number, commit) of each owned number, in line order."""
    where = {sha: i for i, sha in enumerate(mainline)}
    return sorted((where[sha], number, sha) for number, sha in owners.items())


def _foreign_on_line(mainline: list[str], owners: dict[int, str]) -> set[str]:
    """The first-parent commits whose PR number is another repository's: far above the highest
    of ours landed before (`FOREIGN_HIGH_RATIO`, `FOREIGN_HIGH_MARGIN`), while most numbers landed
    after it are back under that bound. A project whose own numbers leap and stay up (CPython's
    PRs went from #32,000 to #91,000 when it imported its old tracker's issues) keeps them: the
    line does not come back."""
    landing = _landings(mainline, owners)
    foreign: set[str] = set()
    high = 0
    for i, (_, number, sha) in enumerate(landing):
        bound = _foreign_bound(high)
        if high and number > bound:
            later = [n for _, n, _ in landing[i + 1 :]]
            if 2 * sum(n <= bound for n in later) > len(later):
                foreign.add(sha)
                continue
        high = max(high, number)
    return foreign


def _imported_before(mainline: list[str], owners: dict[int, str]) -> set[str]:
    """The first-parent commits of another repository's line that ours holds before our numbers
    start again: where, `RESTART_HIGH` numbers having been used, one lands under a
    `RESTART_RATIO`th of the highest so far and the next `RESTART_RUN` all stay under half of it.
    The other line is what landed before, from the first number above twice the highest of that
    run: apache/iceberg-python's line starts with 616 of apache/iceberg's squash commits, up to
    #8174, before its own #1; tokio-rs/tracing's holds tokio's #827–#1170 between its own #120
    and #122. A PR merged late, or a few, lands a low number once; a numbering of our own lands
    nothing but low numbers for a long time."""
    landing = _landings(mainline, owners)
    numbers = [number for _, number, _ in landing]
    imported: set[str] = set()
    high = since = 0  # the highest number landed, and where our present numbering started
    for i, number in enumerate(numbers):
        if high >= RESTART_HIGH and number * RESTART_RATIO < high:
            run = numbers[i : i + RESTART_RUN]
            if len(run) == RESTART_RUN and all(2 * n < high for n in run):
                ceiling = 2 * max(run)
                begin = next(k for k in range(since, i) if numbers[k] > ceiling)
                imported.update(sha for _, n, sha in landing[begin:i] if n > ceiling)
                high, since = max(run), i
                continue
        high = max(high, number)
    return imported


def _pr_from(commit: _Commit, branch: list[_Commit]) -> PRRecord | None:
    subject, _, rest = commit.message.partition("\n")
    merge = MERGE.match(subject)
    if merge:
        # A one-parent "Merge pull request" is a merge that was rebased away: the commit is the PR.
        title, _, body = rest.strip("\n").partition("\n")
        commits = branch if len(commit.parents) > 1 else [commit]
        # "from owner/branch": the PR's head branch (GitHub's revert button names it
        # "revert-<N>-<branch>", the one place such a revert says which PR it undoes).
        head_ref = (merge.group("branch") or "").partition("/")[2] or None
        said = title.strip() or merge.group("said").strip()
        record = _record(
            commit,
            int(merge.group("num")),
            said or _default_title(commits, head_ref) or subject,
            body.strip("\n"),
            commits,
        )
        record.head_ref = head_ref
        return record
    bors_ng = bors_ng_numbers(subject)
    if len(bors_ng) == 1 and len(commit.parents) == 2:
        # A hand-written "Merge #1029" has no entry: the title GitHub would give the branch.
        fallback = (_default_title(branch, None) or subject, "")
        title, body = _bors_ng_entries(commit.message).get(bors_ng[0], fallback)
        return _record(commit, bors_ng[0], title, body, branch)
    if bors_ng:
        return None  # a batch: `GitSource._bors_batch`
    bors = BORS.match(subject)
    if bors and len(commit.parents) > 1:
        title, _, body = rest.strip("\n").partition("\n")
        number = int(bors.group("num"))
        return _record(commit, number, title.strip() or subject, body.strip("\n"), branch)
    squash = SQUASH.match(subject)
    if squash:
        # One parent: a squash or rebase merge, the commit is the PR. Two: GitHub's merge queue (or
        # a merge commit given the PR's title as subject), the PR's commits on the second parent.
        commits = branch if len(commit.parents) > 1 else [commit]
        number, title = int(squash.group("num")), squash.group("title")
        return _record(commit, number, title, rest.strip("\n"), commits)
    script = _merge_script_line(commit)
    if script:
        # The PR's body stands above the script's line. Below it come the script's own trailers:
        # the issues the PR closes ("Closes #7635", from the title's "[KYUUBI #7635]"), kept;
        # Kyuubi's list of the branch's commits, whose "(#9)" are a fork's numbers and whose
        # "Merge branch 'master'" subjects name others' PRs; "Authored-by", "Signed-off-by".
        closes = CLOSES_ISSUE.findall(rest, script.end())
        body = "\n\n".join([rest[: script.start()].strip("\n"), *closes]).strip("\n")
        record = _record(commit, int(script.group("num")), subject.strip(), body, [commit])
        record.head_ref = script.group("branch").partition("/")[2]
        return record
    return None


def _merge_script_line(commit: _Commit) -> re.Match[str] | None:
    """The line of Spark's merge script in a one-parent commit whose subject names no PR (in the
    message after its subject), or None: where `_pr_from` reads the PR from the script."""
    subject, _, rest = commit.message.partition("\n")
    if len(commit.parents) != 1 or SQUASH.match(subject) or MERGE.match(subject):
        return None
    return MERGE_SCRIPT.search(rest)


def _kind(commit: _Commit) -> str:
    """How a first-parent commit landed its PR, as `mine` counts it."""
    if len(commit.parents) > 1:
        return "merge"
    return "merge script" if _merge_script_line(commit) else "squash"


def _merges_a_pr(commit: _Commit) -> bool:
    """Whether a commit off the first-parent line is the merge of one PR: GitHub's subject (also a
    one-parent merge rebased away), or, with two parents, bors's for one PR or the PR's title
    `Title (#N)` (a merge queue, or GitHub's merge button with the title as subject, into a
    feature branch). A one-parent "(#N)" is not: off the line it is a backport or a cherry-pick
    (`_backport`)."""
    subject = commit.message.partition("\n")[0]
    if MERGE.match(subject):
        return True
    two = len(commit.parents) == 2
    titled = SQUASH.match(subject) is not None
    return two and (len(bors_ng_numbers(subject)) == 1 or BORS.match(subject) is not None or titled)


def _backport(commit: _Commit) -> bool:
    """A one-parent commit off the first-parent line that names a PR `Title (#N)`: a PR's change
    backported or cherry-picked onto a branch (the PR itself landed elsewhere)."""
    subject = commit.message.partition("\n")[0]
    return len(commit.parents) == 1 and SQUASH.match(subject) is not None


def _default_title(commits: list[_Commit], head_ref: str | None) -> str:
    """The title GitHub gives a new PR, for a merge commit that kept none ("Merge pull request
    #8438 from radarhere/filter"): its only own commit's subject, else its branch's name in
    words ('' when neither is known)."""
    own = [c for c in commits if len(c.parents) < 2]
    if len(own) == 1:
        return own[0].message.partition("\n")[0].strip()
    words = re.sub(r"[-_]+", " ", (head_ref or "").rpartition("/")[2]).strip()
    return words[:1].upper() + words[1:]


def _bors_ng_entries(message: str) -> dict[int, tuple[str, str]]:
    """A bors-ng merge message's PRs: number → (title, body); the co-author trailers are left out."""
    subject, _, text = message.partition("\n")
    numbers = set(bors_ng_numbers(subject))
    text = re.sub(r"^Co-authored-by: .*$", "", text, flags=re.MULTILINE)
    entries = [e for e in BORS_NG_ENTRY.finditer(text) if int(e.group("num")) in numbers]
    ends = [e.start() for e in entries[1:]] + [len(text)]
    return {
        int(entry.group("num")): (entry.group("title").strip(), text[entry.end() : end].strip())
        for entry, end in zip(entries, ends, strict=False)  # no entry at all: a hand merge
    }


def _record(commit: _Commit, number: int, title: str, body: str, branch: list[_Commit]) -> PRRecord:
    commits = [CommitRecord(c.sha, c.message, c.author, c.authored_at) for c in branch]
    created = min((c.authored_at for c in branch), default=commit.authored_at)
    return PRRecord(
        number=number,
        title=title,
        body=body,
        state="merged",
        author=(branch[0] if branch else commit).author,
        created_at=created,
        merged_at=commit.committed_at,
        closed_at=commit.committed_at,
        updated_at=commit.committed_at,
        base_sha=commit.parents[0] if commit.parents else None,
        head_sha=commit.parents[1] if len(commit.parents) > 1 else commit.sha,
        merge_commit_sha=commit.sha,
        commits=commits,
    )
