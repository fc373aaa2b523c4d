"""The GitHub source, through the real PyGithub client, against the local fake GitHub."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from prchain.core.errors import BadCredentials, InvalidRepoName, MissingCredentials, RepoNotFound
from prchain.miner.github import GithubSource
from prchain.miner.source import SOURCES, PRRecord
from tests.support.fake_github import FakeGithub
from tests.support.fake_github_data import FakeComment, FakeRepo, generate_repo
from tests.support.github_fixtures import HUGE_BYTES, github_config

MAX_PATCH = HUGE_BYTES // 2


def git_diff(repo: FakeRepo, base: str | None, head: str | None) -> str:
    assert base and head
    out = subprocess.run(
        ["git", "-C", str(repo.git_path), "diff", base, head], capture_output=True, check=True
    ).stdout
    return out.decode("utf-8", errors="replace")


def source_for(fake: FakeGithub, repo: FakeRepo, tmp_path: Path, **fields: object) -> GithubSource:
    fake.add_repo(repo)
    config = github_config(fake, repo, **fields)
    return GithubSource(config, repo.full_name, str(tmp_path / "clones"), max_patch_bytes=MAX_PATCH)


@pytest.fixture
def mined(
    fake_github: FakeGithub, generated_repo: FakeRepo, tmp_path: Path
) -> tuple[GithubSource, dict[int, PRRecord]]:
    source = source_for(fake_github, generated_repo, tmp_path)
    return source, {pr.number: pr for pr in source.pull_requests(None)}


def test_registered_as_github() -> None:
    assert SOURCES.get("github") is GithubSource


def test_full_fetch_pages_through_every_pr_oldest_update_first(
    fake_github: FakeGithub, generated_repo: FakeRepo, tmp_path: Path
) -> None:
    source = source_for(fake_github, generated_repo, tmp_path, page_size=50)
    records = list(source.pull_requests(None))
    assert [r.number for r in records] == sorted(
        generated_repo.prs, key=lambda n: (generated_repo.prs[n].updated_at, n)
    )
    # 120 PRs in pages of 50 → 3 pages, each followed by one query for its reviews' comments (the
    # 40 comments of PR #8's busy review fit its first 100); PR #8 overflows commits and comments.
    assert fake_github.counts["POST /graphql"] == 3 + 3 + 2
    assert fake_github.counts["GET /repos/{owner}/{repo}"] == 1
    assert source.requests_made() == fake_github.total
    cursors = [source.cursor_after(r) for r in records]
    assert cursors == sorted(cursors)


def test_records_carry_what_github_holds(
    mined: tuple[GithubSource, dict[int, PRRecord]], generated_repo: FakeRepo
) -> None:
    _, records = mined
    for number, pr in generated_repo.prs.items():
        record = records[number]
        assert (record.title, record.body, record.author, record.state) == (
            pr.title,
            pr.body,
            pr.author,
            pr.state.lower(),
        )
        assert record.head_sha == pr.head_sha and record.merge_commit_sha == pr.merge_sha
        assert [c.sha for c in record.commits] == [c.oid for c in pr.commits]
        expected_comments = len(pr.comments) + sum(
            len(r.comments) + bool(r.body) for r in pr.reviews
        )
        assert len(record.comments) == expected_comments
        assert (record.created_at, record.merged_at, record.updated_at) == (
            pr.created_at,
            pr.merged_at,
            pr.updated_at,
        )
    many = records[8]
    assert len(many.commits) == 132 and many.commits[-1].message == "Step 129 of f_8"
    assert sum(c.kind == "review_comment" for c in many.comments) == 40
    assert {c.external_id for c in many.comments} == {
        c.external_id for c in many.comments if ":" in c.external_id
    }


def test_links_from_timeline_and_closing_issues(
    mined: tuple[GithubSource, dict[int, PRRecord]],
) -> None:
    _, records = mined
    closing = [
        (link.target_number, link.target_kind)
        for link in records[6].links
        if link.type == "closing_issue"
    ]
    assert closing == [(5, "issue")]
    incoming = {
        (link.target_number, link.target_kind)
        for link in records[4].links
        if link.type == "cross_reference"
    }
    assert (6, "pr") in incoming  # #6's body says "Follow-up to #4"
    assert all(link.incoming for link in records[4].links if link.type == "cross_reference")


def test_patches_come_from_the_clone(
    mined: tuple[GithubSource, dict[int, PRRecord]],
    generated_repo: FakeRepo,
    fake_github: FakeGithub,
) -> None:
    _, records = mined
    squash, merge_commit, open_pr = records[1], records[21], records[11]
    assert squash.patch == git_diff(
        generated_repo, f"{squash.merge_commit_sha}^", squash.merge_commit_sha
    )
    assert merge_commit.patch == git_diff(
        generated_repo, f"{merge_commit.merge_commit_sha}^1", merge_commit.merge_commit_sha
    )
    assert merge_commit.base_sha == generated_repo.prs[21].base_sha
    assert open_pr.state == "open" and open_pr.patch == git_diff(
        generated_repo, open_pr.base_sha, open_pr.head_sha
    )
    ok = [r for r in records.values() if r.patch_status == "ok"]
    assert len(ok) == len(records) - 1  # all but the huge one
    # Only #7, whose head no clone can fetch, cost a diff request.
    assert fake_github.counts["GET /repos/{owner}/{repo}/pulls/{number}"] == 1


def test_odd_patches_binary_huge_non_utf8_and_missing_objects(
    mined: tuple[GithubSource, dict[int, PRRecord]], generated_repo: FakeRepo
) -> None:
    _, records = mined
    binary = {f.path: f.is_binary for f in records[3].files}
    assert binary["assets/logo_3.png"] is True and binary["pkg/mod_3.py"] is False
    assert "Binary files" in (records[3].patch or "")
    assert records[4].patch is None and records[4].patch_status == "too_large"
    assert "data/big_4.txt" in {f.path for f in records[4].files}
    latin = records[6]
    assert latin.commits[-1].message.startswith("Caf\ufffd: fix the na\ufffdve accents")
    assert latin.patch_status == "ok" and "docs/caf_6.txt" in (latin.patch or "")
    missing = records[7]  # head only under refs/hidden: the clone lacks it, the API diff stands in
    assert missing.patch_status == "ok"
    assert missing.patch == git_diff(
        generated_repo, generated_repo.prs[7].base_sha, generated_repo.prs[7].head_sha
    )


def test_issues_and_known_numbers(
    mined: tuple[GithubSource, dict[int, PRRecord]], generated_repo: FakeRepo
) -> None:
    source, records = mined
    issues = {i.number: i for i in source.issues(None)}
    assert set(issues) == set(generated_repo.issues)
    assert issues[5].state == "closed" and issues[5].title == "Bug 5"
    assert source.known_numbers() == (set(records), set(issues))


def test_incremental_run_fetches_only_what_changed(fake_github: FakeGithub, tmp_path: Path) -> None:
    repo = generate_repo(tmp_path / "origins" / "acme" / "tiny", 40, full_name="acme/tiny")
    first = source_for(fake_github, repo, tmp_path, page_size=10)
    records = list(first.pull_requests(None))
    cursor = first.cursor_after(records[-1])
    newest = max(pr.updated_at for pr in repo.prs.values())
    for number in (2, 9):  # new comments bump updatedAt, as on GitHub
        pr = repo.prs[number]
        pr.updated_at = newest + timedelta(hours=number)
        pr.comments.append(
            FakeComment(99_000 + number, f"Late remark, see #{number - 1}", "ken", pr.updated_at)
        )
    fake_github.reset_counts()
    second = source_for(fake_github, repo, tmp_path, page_size=10)
    changed = list(second.pull_requests(cursor))
    # Inclusive cursor: the last PR of the first run comes again (an upsert), then the two changed.
    assert [r.number for r in changed] == [records[-1].number, 2, 9]
    assert changed[-1].comments[-1].body == "Late remark, see #8"
    # One scan page, one batch of three PRs, one query for their reviews' comments.
    assert fake_github.counts["POST /graphql"] == 3
    assert second.cursor_after(changed[-1]) > cursor
    third = source_for(fake_github, repo, tmp_path)
    assert [r.number for r in third.pull_requests(second.cursor_after(changed[-1]))] == [9]


def test_since_bounds_the_first_run(
    fake_github: FakeGithub, generated_repo: FakeRepo, tmp_path: Path
) -> None:
    since = sorted(pr.updated_at for pr in generated_repo.prs.values())[-5]
    fake_github.add_repo(generated_repo)
    source = GithubSource(
        github_config(fake_github, generated_repo),
        generated_repo.full_name,
        str(tmp_path),
        since=since,
    )
    assert len(list(source.pull_requests(None))) == 5


def test_chain_repo_patches_equal_the_gold_patches(
    fake_github: FakeGithub, chain_github_repo: FakeRepo, tmp_path: Path
) -> None:
    source = source_for(fake_github, chain_github_repo, tmp_path)
    records = {r.number: r for r in source.pull_requests(None)}
    assert set(records) == {1, 2, 3, 4}
    for number, record in records.items():
        gold = git_diff(
            chain_github_repo,
            chain_github_repo.prs[number].base_sha,
            chain_github_repo.prs[number].merge_sha,
        )
        assert record.patch == gold
    assert len(records[3].commits) == 1 and records[3].commits[0].message.startswith("Add divide")
    assert any(link.target_number == 2 and link.incoming for link in records[1].links)
    assert source.describe().full_name == "acme/calc" and source.describe().default_branch == "main"


def test_without_a_clone_patches_come_from_the_api(
    fake_github: FakeGithub, chain_github_repo: FakeRepo, tmp_path: Path
) -> None:
    fake_github.add_repo(chain_github_repo)
    config = github_config(
        fake_github, chain_github_repo, clone_url_template="file:///nowhere/{full_name}"
    )
    source = GithubSource(config, "acme/calc", str(tmp_path / "clones"))
    records = list(source.pull_requests(None))
    assert all(r.patch_status == "ok" for r in records)
    assert fake_github.counts["GET /repos/{owner}/{repo}/pulls/{number}"] == 4


def test_unknown_repo(fake_github: FakeGithub, tmp_path: Path) -> None:
    source = GithubSource(github_config(fake_github), "acme/nope", str(tmp_path))
    with pytest.raises(RepoNotFound, match="acme/nope"):
        list(source.pull_requests(None))


@pytest.mark.parametrize(
    "name",
    [
        "acme",
        "acme/calc/extra",
        "https://github.com/acme/calc",
        "ac me/calc",
        "",
        "acme/..",
        "-x/y",
    ],
)
def test_malformed_repo_names(fake_github: FakeGithub, tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidRepoName):
        GithubSource(github_config(fake_github), name, str(tmp_path))
    assert fake_github.total == 0


def test_missing_token(
    fake_github: FakeGithub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN")
    with pytest.raises(MissingCredentials, match="export GITHUB_TOKEN"):
        GithubSource(github_config(fake_github), "acme/calc", str(tmp_path))


def test_bad_token(
    fake_github: FakeGithub,
    chain_github_repo: FakeRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_revoked")
    source = source_for(fake_github, chain_github_repo, tmp_path)
    with pytest.raises(BadCredentials) as caught:
        source.describe()
    assert "ghp_revoked" not in str(caught.value) and "token #1" in str(caught.value)


def test_records_are_plain_data(mined: tuple[GithubSource, dict[int, PRRecord]]) -> None:
    """What prchain.miner.ingest receives: dataclasses with naive UTC times and no client objects inside."""
    _, records = mined
    record = records[6]
    assert replace(record) == record
    assert record.created_at is not None and record.created_at.tzinfo is None
    assert all(
        type(c).__module__ == "prchain.miner.source"
        for c in [*record.commits, *record.comments, *record.files, *record.links]
    )


def test_a_killed_clone_is_redone_and_later_runs_fetch(
    fake_github: FakeGithub, chain_github_repo: FakeRepo, tmp_path: Path
) -> None:
    partial = tmp_path / "clones" / "acme" / "calc.git.partial"
    partial.mkdir(parents=True)
    (partial / "junk").write_text("left behind by SIGKILL")
    first = source_for(fake_github, chain_github_repo, tmp_path)
    assert all(r.patch_status == "ok" for r in first.pull_requests(None))
    assert not partial.exists() and (tmp_path / "clones" / "acme" / "calc.git" / "HEAD").exists()
    again = source_for(fake_github, chain_github_repo, tmp_path)
    assert all(r.patch_status == "ok" for r in again.pull_requests(None))
    assert fake_github.counts["GET /repos/{owner}/{repo}/pulls/{number}"] == 0


def test_mine_github_into_the_store_and_rerun(
    fake_github: FakeGithub, generated_repo: FakeRepo, tmp_path: Path, db_url: str
) -> None:
    """End to end through prchain.miner.mine: the records land in a real database; a rerun adds nothing."""
    from sqlalchemy import func, select

    from prchain.app.config import Config
    from prchain.miner.mine import mine
    from prchain.store.models.mining import PRPatch, PullRequest, Reference
    from prchain.store.opener import make_engine

    fake_github.add_repo(generated_repo)
    github = github_config(fake_github, generated_repo).model_dump()
    config = Config.model_validate(
        {
            "store": {"url": db_url},
            "miner": {
                "source": "github",
                "clone_dir": str(tmp_path / "clones"),
                "max_patch_bytes": MAX_PATCH,
                "github": github,
            },
        }
    )
    engine = make_engine(db_url)
    try:
        first = mine(config.miner, engine, ["acme/widgets"]).repos[0]
        assert first.prs_new == 120 and first.requests == fake_github.total
        with engine.connect() as conn:
            assert conn.scalar(select(func.count()).select_from(PullRequest)) == 120
            assert (
                conn.scalar(select(func.count()).select_from(PRPatch)) == 119
            )  # all but the huge one
            assert conn.scalar(
                select(func.count()).select_from(Reference).where(Reference.type == "closing_issue")
            )
            assert conn.scalar(
                select(func.count()).select_from(Reference).where(Reference.target_kind == "pr")
            )
        fake_github.reset_counts()
        again = mine(config.miner, engine, ["acme/widgets"]).repos[0]
        assert again.prs_new == 0 and again.requests <= 5
        with engine.connect() as conn:
            assert conn.scalar(select(func.count()).select_from(PullRequest)) == 120
    finally:
        engine.dispose()
