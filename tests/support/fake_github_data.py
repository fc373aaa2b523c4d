"""The data a fake GitHub serves, built from real git repositories made in a temp dir.

`generate_repo` writes an N-PR history in one `git fast-import` (fast enough for 1,000 PRs) with
squash merges, merge commits, open and closed PRs, issues, comments, reviews and references, plus
optional odd cases (binary file, huge file, non-UTF-8 message, head missing from clones, PRs whose
commits/comments overflow GraphQL's first page). `repo_from_chain` serves `make_chain_repo`'s repo.
Every sha, file list and diff the server hands out comes from git itself.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from prchain.dev.repos import ChainRepo, git

T0 = datetime(2024, 1, 1, 9, 0, 0)
USERS = ["ada", "grace", "linus", "barbara", "ken", "margaret"]
MENTION = re.compile(r"(?<![\w/])#(\d+)\b")
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\xff\xfe"


@dataclass
class FakeComment:
    id: int
    body: str
    author: str
    created_at: datetime
    path: str | None = None


@dataclass
class FakeReview:
    id: int
    body: str
    author: str
    submitted_at: datetime
    state: str = "COMMENTED"
    comments: list[FakeComment] = field(default_factory=list)


@dataclass
class FakeCommit:
    oid: str
    message: str
    author: str
    authored_at: datetime


@dataclass
class FakeFile:
    path: str
    additions: int
    deletions: int
    change_type: str  # ADDED | MODIFIED | DELETED | RENAMED


@dataclass
class FakePR:
    number: int
    title: str
    body: str
    author: str
    created_at: datetime
    updated_at: datetime
    state: str = "MERGED"  # OPEN | CLOSED | MERGED
    merged_at: datetime | None = None
    closed_at: datetime | None = None
    base_ref: str = "main"
    base_sha: str = ""
    head_sha: str = ""
    merge_sha: str | None = None
    head_ref: str = ""
    diff_base: str = ""  # merge base of base and head: where GitHub's "files changed" view starts
    files: list[FakeFile] = field(default_factory=list)
    commits: list[FakeCommit] = field(default_factory=list)
    comments: list[FakeComment] = field(default_factory=list)
    reviews: list[FakeReview] = field(default_factory=list)
    closing_issues: list[int] = field(default_factory=list)
    cross_refs: list[tuple[str, int]] = field(
        default_factory=list
    )  # (PullRequest|Issue, source number)

    @property
    def additions(self) -> int:
        return sum(f.additions for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f.deletions for f in self.files)


@dataclass
class FakeIssue:
    number: int
    title: str
    body: str
    author: str
    created_at: datetime
    updated_at: datetime
    state: str = "OPEN"
    closed_at: datetime | None = None


@dataclass
class FakeRepo:
    full_name: str
    git_path: Path  # the "origin": what clone URLs point at and what diffs are made from
    id: int = 1
    default_branch: str = "main"
    prs: dict[int, FakePR] = field(default_factory=dict)
    issues: dict[int, FakeIssue] = field(default_factory=dict)

    def link_mentions(self) -> None:
        """Give every mentioned PR the timeline cross-reference event GitHub would create."""
        for kind, number, texts in self._texts():
            for target in {int(m) for text in texts for m in MENTION.findall(text)} - {number}:
                if target in self.prs:
                    self.prs[target].cross_refs.append((kind, number))

    def _texts(self) -> list[tuple[str, int, list[str]]]:
        out = [("Issue", i.number, [i.title, i.body]) for i in self.issues.values()]
        for pr in self.prs.values():
            out.append(
                ("PullRequest", pr.number, [pr.title, pr.body, *(c.body for c in pr.comments)])
            )
        return out


# ---------------------------------------------------------------- a generated N-PR history


@dataclass
class _Stream:
    """A `git fast-import` input being written, with marks for every commit."""

    chunks: list[bytes] = field(default_factory=list)
    marks: int = 0

    def commit(
        self,
        ref: str,
        message: bytes,
        when: datetime,
        who: str,
        parents: list[int],
        files: dict[str, bytes],
    ) -> int:
        self.marks += 1
        stamp = f"{int(when.replace(tzinfo=UTC).timestamp())} +0000"
        head = [
            f"commit {ref}",
            f"mark :{self.marks}",
            f"author {who} <{who}@example.com> {stamp}",
            f"committer {who} <{who}@example.com> {stamp}",
            f"data {len(message)}",
        ]
        self.chunks.append("\n".join(head).encode() + b"\n" + message + b"\n")
        self.chunks += [f"from :{parents[0]}\n".encode()] if parents else []
        self.chunks += [f"merge :{p}\n".encode() for p in parents[1:]]
        for path, data in files.items():
            self.chunks.append(
                f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"
            )
        self.chunks.append(b"\n")
        return self.marks

    def run(self, path: Path) -> dict[int, str]:
        marks_file = path / ".git" / "fast-import-marks"
        subprocess.run(
            ["git", "-C", str(path), "fast-import", "--quiet", f"--export-marks={marks_file}"],
            input=b"".join(self.chunks),
            check=True,
            capture_output=True,
        )
        pairs = (line.split() for line in marks_file.read_text().splitlines())
        return {int(mark[1:]): sha for mark, sha in pairs}


@dataclass
class _Plan:
    pr: FakePR
    base: int
    commits: list[int]
    merge: int | None
    messages: list[str]
    publish: bool = True


def _pr_state(n: int) -> str:
    return "OPEN" if n % 11 == 0 else "CLOSED" if n % 13 == 0 else "MERGED"


def _pr_changes(
    n: int, module: bytes, special: str | None, huge_bytes: int
) -> list[tuple[bytes, dict[str, bytes]]]:
    """(message, files) of each commit of PR n, the files holding their full new contents."""
    mod_path = f"pkg/mod_{n % 10}.py"
    new_module = module + f"\n\ndef f_{n}(x):\n    return x + {n}\n".encode()
    test = f"from pkg.mod_{n % 10} import f_{n}\n\n\ndef test_f_{n}():\n    assert f_{n}(1) == {n + 1}\n".encode()
    changes = [
        (f"Add f_{n}".encode(), {mod_path: new_module}),
        (f"Test f_{n}".encode(), {f"tests/test_{n}.py": test}),
    ]
    if special == "binary":
        changes.append((b"Add logo", {f"assets/logo_{n}.png": PNG * 4}))
    elif special == "huge":
        line = b"0123456789abcdef" * 4 + b"\n"
        changes.append(
            (b"Add generated data", {f"data/big_{n}.txt": line * (huge_bytes // len(line) + 1)})
        )
    elif special == "latin1":
        changes.append(
            (
                "Caf\xe9: fix the na\xefve accents".encode("latin-1"),
                {f"docs/caf_{n}.txt": "caf\xe9\n".encode("latin-1")},
            )
        )
    elif special == "many":
        changes += [
            (f"Step {k} of f_{n}".encode(), {f"steps/s_{n}.txt": f"{k}\n".encode()})
            for k in range(130)
        ]
    return changes[: 1 + n % 3] if special is None else changes


def _plan_pr(
    stream: _Stream,
    n: int,
    main: int,
    module: bytes,
    special: str | None,
    huge_bytes: int,
    issue: int | None,
    previous: int | None,
) -> tuple[_Plan, dict[str, bytes]]:
    created = T0 + timedelta(hours=n)
    state = "OPEN" if special == "missing" else _pr_state(n)
    merged = created + timedelta(hours=2) if state == "MERGED" else None
    closed = merged or (created + timedelta(hours=5) if state == "CLOSED" else None)
    updated = (closed or created) + timedelta(hours=(n * 7919) % 97, minutes=n % 60)
    body = f"Adds f_{n} to pkg/mod_{n % 10}.py."
    body += f"\n\nFollow-up to #{previous}." if previous and n % 3 == 0 else ""
    body += f"\n\nFixes #{issue}" if issue and state == "MERGED" else ""
    who = USERS[n % len(USERS)]
    pr = FakePR(
        n,
        f"Add f_{n}",
        body,
        who,
        created,
        updated,
        state,
        merged,
        closed,
        head_ref=f"feature-{n}",
        closing_issues=[issue] if issue and state == "MERGED" else [],
    )
    parent, marks, messages, final = main, [], [], {}
    for message, files in _pr_changes(n, module, special, huge_bytes):
        ref = f"refs/hidden/{n}" if special == "missing" else f"refs/pull/{n}/head"
        parent = stream.commit(ref, message, created, who, [parent], files)
        marks.append(parent)
        messages.append(message.decode("utf-8", errors="replace"))
        final.update(files)
    return _Plan(pr, main, marks, None, messages, special != "missing"), final


def _add_talk(pr: FakePR, ids: list[int], mentions: list[int], many: bool) -> None:
    count = 60 if many else pr.number % 4
    for k in range(count):
        ids[0] += 1
        ref = f" See also #{mentions[k % len(mentions)]}." if mentions and k == 0 else ""
        pr.comments.append(
            FakeComment(
                ids[0],
                f"Comment {k} on #{pr.number}.{ref}",
                USERS[(pr.number + k) % 6],
                pr.created_at + timedelta(minutes=10 + k),
            )
        )
    if pr.number % 2 == 0 or many:
        ids[0] += 1
        review = FakeReview(
            ids[0],
            "Looks good, one nit.",
            USERS[(pr.number + 1) % 6],
            pr.created_at + timedelta(hours=1),
        )
        for k in range(40 if many else 1 + pr.number % 2):
            ids[0] += 1
            review.comments.append(
                FakeComment(
                    ids[0],
                    f"nit {k}: rename x",
                    review.author,
                    review.submitted_at,
                    f"pkg/mod_{pr.number % 10}.py",
                )
            )
        pr.reviews.append(review)


def _land(stream: _Stream, plan: _Plan, main: int, files: dict[str, bytes]) -> int:
    """Merge a PR into main: a squash commit, or (every 7th) a real two-parent merge commit."""
    pr = plan.pr
    message = f"{pr.title} (#{pr.number})\n\n{pr.body}"
    parents = [main]
    if pr.number % 7 == 0:
        message = f"Merge pull request #{pr.number} from {pr.author}/{pr.head_ref}\n\n{pr.title}"
        parents.append(plan.commits[-1])
    plan.merge = stream.commit(
        "refs/heads/main", message.encode(), pr.merged_at or T0, pr.author, parents, files
    )
    return plan.merge


def _new_issue(number: int) -> FakeIssue:
    opened = T0 + timedelta(hours=number)
    return FakeIssue(
        number,
        f"Bug {number}",
        f"f_{number - 1} misbehaves.",
        USERS[number % 6],
        opened,
        opened + timedelta(hours=3),
    )


def generate_repo(
    path: Path,
    n_prs: int,
    *,
    full_name: str = "acme/widgets",
    specials: dict[int, str] | None = None,
    huge_bytes: int = 300_000,
) -> FakeRepo:
    """A real git repository at `path` with `n_prs` PRs (numbers shared with issues, as on GitHub).

    `specials` maps PR numbers to one of: binary, huge, latin1, missing, many.
    """
    specials = specials or {}
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    stream, repo, ids = _Stream(), FakeRepo(full_name, path), [1000]
    plans: list[_Plan] = []
    modules = {k: f'"""Module {k}."""\n'.encode() for k in range(10)}
    main = stream.commit(
        "refs/heads/main",
        b"Initial commit",
        T0,
        "ada",
        [],
        {**{f"pkg/mod_{k}.py": v for k, v in modules.items()}, "README.md": b"# widgets\n"},
    )
    number, issue, previous = 0, None, None
    while len(plans) < n_prs:
        number += 1
        if number % 5 == 0:
            repo.issues[number], issue = _new_issue(number), number
            continue
        plan, final = _plan_pr(
            stream,
            number,
            main,
            modules[number % 10],
            specials.get(number),
            huge_bytes,
            issue,
            previous,
        )
        _add_talk(plan.pr, ids, [previous] if previous else [], specials.get(number) == "many")
        if plan.pr.state == "MERGED":
            main, previous = _land(stream, plan, main, final), number
            modules[number % 10] = final.get(f"pkg/mod_{number % 10}.py", modules[number % 10])
            for closed in plan.pr.closing_issues:
                repo.issues[closed].state, repo.issues[closed].closed_at = (
                    "CLOSED",
                    plan.pr.merged_at,
                )
        plans.append(plan)
    _finish(repo, plans, stream.run(path))
    return repo


def _finish(repo: FakeRepo, plans: list[_Plan], shas: dict[int, str]) -> None:
    for plan in plans:
        pr = plan.pr
        pr.base_sha = pr.diff_base = shas[plan.base]
        pr.head_sha = shas[plan.commits[-1]]
        pr.merge_sha = shas[plan.merge] if plan.merge else None
        pr.commits = [
            FakeCommit(shas[m], msg, pr.author, pr.created_at)
            for m, msg in zip(plan.commits, plan.messages, strict=True)
        ]
        repo.prs[pr.number] = pr
    _fill_files(repo)
    repo.link_mentions()


def _fill_files(repo: FakeRepo) -> None:
    """Per-PR files and line counts, as GitHub lists them (merge base..head), in one git process."""
    pairs = "".join(f"{pr.head_sha} {pr.diff_base}\n" for pr in repo.prs.values())
    done = subprocess.run(
        ["git", "-C", str(repo.git_path), "diff-tree", "--stdin", "-r", "-M", "--numstat", "--raw"],
        input=pairs.encode(),
        capture_output=True,
        check=True,
    )
    current: FakePR | None = None
    by_head = {pr.head_sha: pr for pr in repo.prs.values()}
    statuses: dict[str, str] = {}
    for line in done.stdout.decode(errors="replace").splitlines():
        if line.split(" ")[0] in by_head:
            current, statuses = by_head[line.split(" ")[0]], {}
        elif line.startswith(":") and current:
            meta, *paths = line.split("\t")
            statuses[paths[-1]] = {"A": "ADDED", "D": "DELETED", "R": "RENAMED"}.get(
                meta.split()[-1][0], "MODIFIED"
            )
        elif line and current:
            added, deleted, *paths = line.split("\t")
            path = paths[-1]
            current.files.append(
                FakeFile(
                    path,
                    int(added) if added != "-" else 0,
                    int(deleted) if deleted != "-" else 0,
                    statuses.get(path, "MODIFIED"),
                )
            )


# ---------------------------------------------------------------- make_chain_repo's history, served


def repo_from_chain(chain: ChainRepo, full_name: str = "acme/calc") -> FakeRepo:
    """Serve `prchain.dev.repos.make_chain_repo`'s PRs: refs/pull/N/head are created in it."""
    repo = FakeRepo(full_name, chain.path)
    for n, info in sorted(chain.prs.items()):
        parents = git(chain.path, "rev-list", "--parents", "-n1", info.merge_sha).split()[1:]
        head = parents[1] if len(parents) > 1 else info.merge_sha
        git(chain.path, "update-ref", f"refs/pull/{n}/head", head)
        body = git(chain.path, "log", "-1", "--format=%b", info.merge_sha)
        log = git(chain.path, "log", "--format=%H%x1f%B%x1e", f"{info.base_sha}..{head}")
        commits = [
            FakeCommit(h.strip(), m.strip(), "ada", T0)
            for h, m in (c.split("\x1f") for c in log.split("\x1e") if c.strip())
        ]
        when = T0 + timedelta(days=n)
        repo.prs[n] = FakePR(
            n,
            info.title,
            body,
            "ada",
            when,
            when + timedelta(hours=1),
            "MERGED",
            when,
            when,
            base_sha=info.base_sha,
            head_sha=head,
            merge_sha=info.merge_sha,
            commits=commits[::-1],
            diff_base=git(chain.path, "merge-base", info.base_sha, head),
        )
    _fill_files(repo)
    repo.link_mentions()
    return repo
