"""Writing records into a real store (SQLite and PostgreSQL): idempotent, resolved, issue-mediated."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from prchain.dev.repos import git, make_chain_repo
from prchain.miner.gitsource import GitSource
from prchain.miner.ingest import Ingestor, ensure_repo, read_cursor
from prchain.miner.mine import mine_one
from prchain.miner.resolve import resolve_repo
from prchain.miner.source import (
    CommentRecord,
    CommitRecord,
    FileRecord,
    IssueRecord,
    PRRecord,
    SourceInfo,
    TimelineLink,
)
from prchain.store.models import PRFile, PRPatch, PullRequest, Reference
from tests.support.miner_dump import canonical_dump

REPO = "acme/calc"


def _refs(engine: Engine) -> set[tuple[int, int, str, str, str, int]]:
    with Session(engine) as session:
        numbers = {
            pr_id: n for pr_id, n in session.execute(select(PullRequest.id, PullRequest.number))
        }
        rows = session.scalars(select(Reference)).all()
        return {
            (numbers[r.src_pr_id], r.target_number, r.target_kind, r.type, r.found_in, r.via_issue)
            for r in rows
        }


def _ingestor(engine: Engine) -> Ingestor:
    repo_id = ensure_repo(engine, SourceInfo(REPO), "github")
    return Ingestor(engine, repo_id, REPO, "github")


def test_git_mining_twice_changes_nothing(engine: Engine, tmp_path: Path) -> None:
    chain = make_chain_repo(tmp_path / "calc")
    first = mine_one(engine, GitSource(str(chain.path)), batch_size=2)
    dump = canonical_dump(engine)
    again = mine_one(engine, GitSource(str(chain.path)), batch_size=2)
    assert (first.prs_new, again.prs_new, again.prs_updated) == (4, 0, 0)
    assert canonical_dump(engine) == dump
    assert _refs(engine) == {
        (2, 1, "pr", "follow_up", "body", 0),
        (3, 2, "pr", "fixes", "commit", 0),
    }
    with Session(engine) as session:
        patches = {
            pr: diff
            for pr, diff in session.execute(select(PullRequest.number, PRPatch.diff).join(PRPatch))
        }
        assert patches == {n: info.gold_patch + "\n" for n, info in chain.prs.items()}
        ref = session.scalars(select(Reference).where(Reference.type == "fixes")).one()
        assert ref.evidence == "Fixes #2 by completing the arithmetic set on top of it."
        assert ref.target_pr_id == session.scalar(
            select(PullRequest.id).where(PullRequest.number == 2)
        )


def test_forced_full_rewalk_upserts_without_duplicates(engine: Engine, tmp_path: Path) -> None:
    chain = make_chain_repo(tmp_path / "calc")
    mine_one(engine, GitSource(str(chain.path)))
    dump = canonical_dump(engine)
    source = GitSource(str(chain.path))
    ingestor = _ingestor_for(engine, source)
    records = list(source.pull_requests(None))  # everything again, ignoring the cursor
    counts = ingestor.write_prs(records, source.cursor_after(records[-1]))
    resolve_repo(engine, ingestor.repo_id)
    assert (counts.new, counts.updated) == (0, 4)
    assert canonical_dump(engine) == dump


def _ingestor_for(engine: Engine, source: GitSource) -> Ingestor:
    repo_id = ensure_repo(engine, source.describe(), "git")
    return Ingestor(engine, repo_id, source.full_name, "git")


def test_new_commits_are_picked_up_from_the_cursor(engine: Engine, tmp_path: Path) -> None:
    chain = make_chain_repo(tmp_path / "calc")
    mine_one(engine, GitSource(str(chain.path)))
    (chain.path / "calc" / "mod.py").write_text("def mod(a, b):\n    return a % b\n")
    git(chain.path, "add", "-A")
    git(chain.path, "commit", "-q", "-m", "Add modulo (#5)\n\nFollow-up to #3.")
    head = git(chain.path, "rev-parse", "HEAD")
    summary = mine_one(engine, GitSource(str(chain.path)))
    assert (summary.prs_new, summary.prs_updated) == (1, 0)
    assert (5, 3, "pr", "follow_up", "body", 0) in _refs(engine)
    repo_id = ensure_repo(engine, SourceInfo(REPO), "git")
    assert read_cursor(engine, repo_id, "git", "prs") == head


def _pr(number: int, body: str = "", **extra: object) -> PRRecord:
    base = {
        "title": f"PR {number}",
        "body": body,
        "merged_at": datetime(2024, 1, number),
        "merge_commit_sha": f"{number:040x}",
    }
    return PRRecord(number=number, **{**base, **extra})  # type: ignore[arg-type]


def test_comments_timeline_links_and_issues_resolve(engine: Engine) -> None:
    ingestor = _ingestor(engine)
    ingestor.write_issues(
        [
            IssueRecord(50, "Crash on divide"),
            IssueRecord(60, "Opened about #1", "Since #1 it fails"),
        ],
        "c1",
    )
    records = [
        _pr(1, "Mentions #50 and other/lib#3."),
        _pr(2, "Unrelated", comments=[CommentRecord("review_comment", "r1", "see #1", "bob")]),
        _pr(
            3,
            "Closes #50, closes #60",
            links=[
                TimelineLink("closing_issue", REPO, 50, "issue"),
                TimelineLink("cross_reference", REPO, 2, "pr", "mentioned in #2", incoming=True),
                TimelineLink("cross_reference", "other/lib", 7, "pr"),
            ],
        ),
    ]
    ingestor.write_prs(records, "cursor-1")
    resolution = resolve_repo(engine, ingestor.repo_id)
    assert _refs(engine) == {
        (1, 50, "issue", "mention", "body", 0),
        (1, 3, "external", "mention", "body", 0),
        (2, 1, "pr", "mention", "review", 0),
        (3, 50, "issue", "fixes", "body", 0),
        (3, 60, "issue", "fixes", "body", 0),
        (3, 50, "issue", "closing_issue", "timeline", 0),
        (2, 3, "pr", "cross_reference", "timeline", 0),  # #2 referenced #3, seen from #3's timeline
        (3, 7, "external", "cross_reference", "timeline", 0),
        # #3 fixes #50 which #1 mentions, and #60 was opened about #1.
        (3, 1, "pr", "issue_mediated", "issue", 50),
        (3, 1, "pr", "issue_mediated", "issue", 60),
    }
    assert resolution.issue_mediated == 2 and resolution.pr_pr_references == 4
    assert read_cursor(engine, ingestor.repo_id, "github", "issues") == "c1"


def test_unknown_numbers_stay_unknown_and_become_prs_once_mined(engine: Engine) -> None:
    ingestor = _ingestor(engine)
    ingestor.write_prs([_pr(2, "Builds on #1")], "a")
    resolve_repo(engine, ingestor.repo_id)
    assert _refs(engine) == {(2, 1, "unknown", "follow_up", "body", 0)}
    ingestor.write_prs([_pr(1, "first")], "b")
    resolve_repo(engine, ingestor.repo_id)
    assert _refs(engine) == {(2, 1, "pr", "follow_up", "body", 0)}


def test_rewritten_pr_replaces_its_files_and_commits(engine: Engine) -> None:
    ingestor = _ingestor(engine)
    first = _pr(
        1,
        files=[FileRecord("a.py"), FileRecord("b.py")],
        commits=[CommitRecord("s1", "one")],
        patch="diff a",
        patch_status="ok",
    )
    ingestor.write_prs([first], None)
    second = _pr(
        1,
        files=[FileRecord("c.py", "added", 3)],
        commits=[CommitRecord("s2", "two")],
        patch=None,
        patch_status="too_large",
    )
    counts = ingestor.write_prs([second, second], None)  # the same PR twice in one batch is one row
    assert (counts.new, counts.updated) == (0, 1)
    dump = canonical_dump(engine)
    assert [dict(r)["path"] for r in dump["pr_files"]] == ["c.py"]
    assert [dict(r)["sha"] for r in dump["pr_commits"]] == ["s2"]
    assert dump["pr_patches"] == []
    assert [dict(r)["patch_status"] for r in dump["pull_requests"]] == ["too_large"]


def test_revert_commit_sha_becomes_a_reference_to_the_reverted_pr(engine: Engine) -> None:
    ingestor = _ingestor(engine)
    sha = "ab" * 20
    ingestor.write_prs(
        [_pr(1, merge_commit_sha=sha), _pr(2, f"This reverts commit {sha[:10]}.")], None
    )
    resolve_repo(engine, ingestor.repo_id)
    assert _refs(engine) == {(2, 1, "pr", "reverts", "body", 0)}


def test_nul_characters_and_odd_text_are_stored(engine: Engine) -> None:
    ingestor = _ingestor(engine)
    ingestor.write_prs(
        [
            _pr(
                1,
                "body\x00with NUL",
                patch="+\x00x\n",
                patch_status="ok",
                files=[FileRecord("dé.txt")],
            )
        ],
        None,
    )
    with Session(engine) as session:
        assert session.scalar(select(PullRequest.body)) == "body\ufffdwith NUL"
        assert session.scalar(select(PRPatch.diff)) == "+\ufffdx\n"
        assert session.scalar(select(func.count()).select_from(PRFile)) == 1
