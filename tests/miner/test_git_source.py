"""The git source on real repositories built in a temp dir: squash and merge PRs, names, cursors."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from prchain.core.errors import GitError
from prchain.dev.repos import GIT_IDENTITY, ChainRepo, git, make_chain_repo
from prchain.miner.gitsource import GitSource
from prchain.miner.ingest import pr_refs
from prchain.miner.source import SOURCES


@pytest.fixture
def chain(tmp_path: Path) -> ChainRepo:
    return make_chain_repo(tmp_path / "calc")


def _squash(repo: Path, message: str, name: str = "notes.txt", date: str | None = None) -> str:
    path = repo / name
    path.write_text((path.read_text() if path.exists() else "") + message.splitlines()[0] + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD")


def _commit_bytes(repo: Path, message: bytes, *config: str) -> None:
    (repo / "bytes.txt").write_text(str(len(message)))
    git(repo, "add", "-A")
    cfg = [arg for item in config for arg in ("-c", item)]
    env = {**os.environ, **GIT_IDENTITY}
    subprocess.run(
        ["git", "-C", str(repo), *cfg, "commit", "-q", "-F", "-"],
        input=message,
        env=env,
        check=True,
    )


def test_registered_by_name() -> None:
    assert SOURCES.get("git") is GitSource


def test_squash_and_merge_prs_of_the_chain_repo(chain: ChainRepo) -> None:
    source = GitSource(str(chain.path))
    prs = list(source.pull_requests(None))
    assert [pr.number for pr in prs] == [1, 2, 4, 3]
    by_number = {pr.number: pr for pr in prs}
    for number, info in chain.prs.items():
        pr = by_number[number]
        assert (pr.title, pr.base_sha, pr.merge_commit_sha) == (
            info.title,
            info.base_sha,
            info.merge_sha,
        )
        assert (pr.patch_status, pr.patch) == ("ok", info.gold_patch + "\n")
        assert pr.state == "merged" and pr.merged_at == datetime(
            2024, 1, int(pr.merged_at.day), 10, 0
        )  # type: ignore[union-attr]
    assert (
        by_number[2].body
        == "Follow-up to #1, built on top of it: the calculator also needs products."
    )
    merge = by_number[3]
    assert [c.message for c in merge.commits] == [
        "Add divide\n\nFixes #2 by completing the arithmetic set on top of it."
    ]
    assert merge.head_sha == merge.commits[0].sha != merge.merge_commit_sha
    assert merge.files[0].path == "calc/ops.py" and merge.additions == 7
    assert [c.sha for c in by_number[1].commits] == [chain.prs[1].merge_sha]
    assert source.known_numbers() is None and source.requests_made() == 0


def test_bare_clone_without_remote_gets_its_name_from_history(
    chain: ChainRepo, tmp_path: Path
) -> None:
    _squash(
        chain.path,
        "Docs (#5)\n\nSee https://github.com/acme/calc/issues/9 and https://github.com/other/x/pull/1",
    )
    _squash(chain.path, "More docs (#6)\n\nAs https://github.com/acme/calc/pull/5 said")
    bare = tmp_path / "calc.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(chain.path), str(bare)], check=True)
    git(bare, "remote", "remove", "origin")
    source = GitSource(str(bare))
    assert source.full_name == "acme/calc"
    assert [pr.number for pr in source.pull_requests(None)] == [1, 2, 4, 3, 5, 6]
    assert source.describe().clone_path == str(bare.resolve())


def test_name_from_remote_and_from_the_option(tmp_path: Path) -> None:
    repo = make_chain_repo(tmp_path / "r", remote="git@github.com:Acme/Calc.git").path
    assert GitSource(str(repo)).full_name == "Acme/Calc"
    assert GitSource(str(repo), full_name="other/name").full_name == "other/name"


def test_no_way_to_tell_the_name_is_a_clear_error(tmp_path: Path) -> None:
    repo = make_chain_repo(tmp_path / "r", remote=None).path
    with pytest.raises(GitError, match="--name"):
        GitSource(str(repo))


def test_not_a_clone_and_missing_path(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="does not exist"):
        GitSource(str(tmp_path / "nowhere"), full_name="a/b")
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitError, match="not a git clone"):
        GitSource(str(tmp_path / "plain"), full_name="a/b")


def test_cursor_walks_only_new_history(chain: ChainRepo) -> None:
    source = GitSource(str(chain.path))
    prs = list(source.pull_requests(None))
    cursor = source.cursor_after(prs[-1])
    assert list(source.pull_requests(cursor)) == []
    _squash(chain.path, "Unrelated commit without a PR number")
    _squash(chain.path, "Add modulo (#7)\n\nBuilds on #3.")
    assert [pr.number for pr in source.pull_requests(cursor)] == [7]


def test_since_keeps_later_prs_only(chain: ChainRepo) -> None:
    source = GitSource(str(chain.path), since=datetime(2024, 1, 4))
    assert [pr.number for pr in source.pull_requests(None)] == [4, 3]


def test_non_utf8_commit_messages(chain: ChainRepo) -> None:
    # Declared latin-1 (git converts it) and undeclared raw bytes (replaced, never an exception).
    _commit_bytes(
        chain.path,
        "Caf\xe9 menu (#8)\n\nCr\xe8me br\xfbl\xe9e.".encode("latin-1"),
        "i18n.commitEncoding=latin-1",
    )
    _commit_bytes(chain.path, b"Raw \xff\xfe bytes (#9)\n\nbody \xe9")
    # Control bytes pasted into a message (apache/zeppelin's #815 quotes npm's binary garbage):
    # they end no commit and no field early.
    _commit_bytes(chain.path, b"Pasted log (#10)\n\nnpm ERR! \x1f\x8b\x08\x1e\x1d end")
    prs = {pr.number: pr for pr in GitSource(str(chain.path)).pull_requests(None)}
    assert (prs[8].title, prs[8].body) == ("Café menu", "Crème brûlée.")
    # Undeclared bytes come out as some text (git may guess latin-1): never an exception, never lost.
    assert (
        prs[9].title.startswith("Raw ")
        and prs[9].title.endswith(" bytes")
        and prs[9].body.startswith("body ")
    )
    assert prs[10].title == "Pasted log"
    assert prs[10].body.startswith("npm ERR! \x1f") and prs[10].body.endswith("\x1e\x1d end")


def test_revert_and_reland_keep_their_own_numbers(chain: ChainRepo) -> None:
    _squash(chain.path, 'Revert "Add multiply operation (#2)" (#10)\n\nThis reverts commit abc.')
    prs = {pr.number: pr for pr in GitSource(str(chain.path)).pull_requests(None)}
    assert prs[10].title == 'Revert "Add multiply operation (#2)"'


def test_missing_object_marks_the_patch_unavailable_and_goes_on(chain: ChainRepo) -> None:
    # ops.py as #1 left it: #1 adds it and #2 changes it (and no work-tree file can stand in for it).
    blob = git(chain.path, "rev-parse", f"{chain.prs[1].merge_sha}:calc/ops.py")
    (chain.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    prs = {pr.number: pr for pr in GitSource(str(chain.path)).pull_requests(None)}
    assert {n: pr.patch_status for n, pr in prs.items()} == {
        1: "unavailable",
        2: "unavailable",
        4: "ok",
        3: "ok",
    }
    assert prs[2].patch is None and prs[2].title == "Add multiply operation"
    assert prs[4].patch == chain.prs[4].gold_patch + "\n"


def test_huge_and_binary_patches(chain: ChainRepo) -> None:
    (chain.path / "data.bin").write_bytes(bytes(range(256)) * 4)
    (chain.path / "big.txt").write_text("x\n" * 10_000)
    _squash(chain.path, "Add data (#11)")
    source = GitSource(str(chain.path), max_patch_bytes=5_000)
    pr = [p for p in source.pull_requests(None) if p.number == 11][0]
    assert pr.patch_status == "too_large" and pr.patch is None
    files = {f.path: f for f in pr.files}
    assert files["data.bin"].is_binary and files["big.txt"].additions == 10_000


def test_merge_commit_of_a_branch_that_merged_main_in(chain: ChainRepo) -> None:
    repo = chain.path
    git(repo, "checkout", "-q", "-b", "feature")
    _squash(repo, "feature work", name="feature.txt")
    git(repo, "checkout", "-q", "main")
    _squash(repo, "Main moves on (#12)")
    git(repo, "checkout", "-q", "feature")
    git(repo, "merge", "-q", "--no-ff", "main", "-m", "Merge branch 'main' into feature")
    _squash(repo, "more feature work", name="feature.txt")
    git(repo, "checkout", "-q", "main")
    git(
        repo,
        "merge",
        "-q",
        "--no-ff",
        "feature",
        "-m",
        "Merge pull request #13 from dev/feature\n\nAdd the feature",
    )
    prs = {pr.number: pr for pr in GitSource(str(repo)).pull_requests(None)}
    assert [c.message for c in prs[13].commits] == [
        "feature work",
        "Merge branch 'main' into feature",
        "more feature work",
    ]
    assert {f.path for f in prs[13].files} == {"feature.txt"}
    assert prs[13].title == "Add the feature"


def test_patches_of_yielded_prs_are_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory is bounded by the batches in flight: once a batch was yielded and the consumer let
    go of it, nothing in the source still holds its records (and their patches)."""
    import gc
    import weakref

    from prchain.miner import gitsource

    repo = tmp_path / "many"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for n in range(1, 25):
        _squash(repo, f"Change {n} (#{n})", name=f"f{n}.txt")
    monkeypatch.setattr(gitsource, "PATCH_BATCH", 2)
    records = GitSource(str(repo), full_name="acme/many", workers=1).pull_requests(None)
    first = weakref.ref(next(records))
    for _ in range(12):  # well past the first batch and the ones in flight
        next(records)
    gc.collect()
    assert first() is None
    assert len(list(records)) == 24 - 13


def _no_ff(repo: Path, branch: str, message: str, date: str | None = None) -> str:
    git(repo, "merge", "-q", "--no-ff", "-m", message, branch, date=date)
    return git(repo, "rev-parse", "HEAD")


def _merged(
    repo: Path,
    branch: str,
    into: str,
    work: str,
    message: str,
    *,
    name: str,
) -> tuple[str, str]:
    """Branch `branch` off `into`, commit `work` (to file `name`) there and merge it back into
    `into` with `message`: (the branch's commit, the merge commit)."""
    git(repo, "checkout", "-q", "-b", branch, into)
    commit = _squash(repo, work, name=name)
    git(repo, "checkout", "-q", into)
    return commit, _no_ff(repo, branch, message)


def _new_repo(tmp_path: Path, name: str, date: str | None = None) -> Path:
    """An empty history on `main` with one initial commit (no PR)."""
    repo = tmp_path / name
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    _squash(repo, "Initial commit", date=date)
    return repo


def test_bors_ng_merges_and_batches_are_prs_with_their_own_changes(tmp_path: Path) -> None:
    """rust-analyzer until 2022: "Merge #N" with "N: Title r=… a=…" below; a batch "Merge #N #M"
    is an octopus merge, one parent per PR (6,663 of its PRs were not mined before)."""
    repo = _new_repo(tmp_path, "borsng")
    git(repo, "checkout", "-q", "-b", "hover")
    hover = _squash(repo, "Show docs on hover", name="hover.rs")
    git(repo, "checkout", "-q", "main")
    base = git(repo, "rev-parse", "HEAD")
    single = _no_ff(
        repo,
        "hover",
        "Merge #10\n\n10: Show docs on hover r=ada a=bob\n\nFollows #7.\n\n"
        "Co-authored-by: Bob <bob@example.com>",
    )
    for branch, name in (("lint", "lint.rs"), ("fmt", "fmt.rs")):
        git(repo, "checkout", "-q", "-b", branch, single)
        _squash(repo, f"Work on {name}", name=name)
    git(repo, "checkout", "-q", "main")
    _squash(repo, "Unrelated work on main (#13)", name="main.rs")
    before_batch = git(repo, "rev-parse", "HEAD")
    message = (
        "Merge #11 #12\n\n11: Lint unused imports r=ada a=cy\n\nCloses #5\n\n"
        "12: Format match arms r=ada a=dee\n\nPart of #6.\n"
    )
    git(repo, "merge", "-q", "--no-ff", "-m", message, "lint", "fmt")
    batch = git(repo, "rev-parse", "HEAD")
    source = GitSource(str(repo), full_name="acme/borsng")
    prs = {pr.number: pr for pr in source.pull_requests(None)}
    assert sorted(prs) == [10, 11, 12, 13]
    ten = prs[10]
    assert (ten.title, ten.body, ten.base_sha, ten.merge_commit_sha) == (
        "Show docs on hover",
        "Follows #7.",
        base,
        single,
    )
    assert [c.sha for c in ten.commits] == [hover]
    lint, fmt = prs[11], prs[12]
    assert (lint.title, lint.body, fmt.title, fmt.body) == (
        "Lint unused imports",
        "Closes #5",
        "Format match arms",
        "Part of #6.",
    )
    # Each batch PR holds its own change only, against where its branch left main.
    assert lint.base_sha == fmt.base_sha == single
    assert lint.patch is not None and "lint.rs" in lint.patch and "fmt.rs" not in lint.patch
    assert "main.rs" not in lint.patch
    assert fmt.patch is not None and "fmt.rs" in fmt.patch and "lint.rs" not in fmt.patch
    assert [c.message for c in fmt.commits] == ["Work on fmt.rs"]
    assert source.found_by_kind() == {"merge": 3, "squash": 1}
    # The cursor reaches the batch only with its last PR; a rerun from there finds nothing.
    assert [source.cursor_after(pr) for pr in (lint, fmt)] == [before_batch, batch]
    assert list(source.pull_requests(batch)) == []


def test_a_hand_written_merge_subject_without_entries_is_a_pr(tmp_path: Path) -> None:
    """mocha's 1f9c1bbb: a merge made by hand as "Merge #1029", with no "1029: Title" line below;
    it stopped the whole mine (the entries' zip raised). It is the PR its subject names, titled
    like GitHub titles a branch: its only commit's subject."""
    repo = _new_repo(tmp_path, "handmerge")
    git(repo, "checkout", "-q", "-b", "reporter")
    _squash(repo, "Add the dot reporter", name="dot.js")
    git(repo, "checkout", "-q", "main")
    _squash(repo, "Tidy the changelog (#3)", name="main.js")
    merged = _no_ff(repo, "reporter", "Merge #4")
    prs = {pr.number: pr for pr in GitSource(str(repo), full_name="acme/hand").pull_requests(None)}
    assert sorted(prs) == [3, 4]
    four = prs[4]
    assert (four.title, four.body, four.merge_commit_sha) == ("Add the dot reporter", "", merged)
    assert four.patch is not None and "dot.js" in four.patch and "main.js" not in four.patch


def test_prs_merged_into_a_maintenance_branch_merged_back_are_mined(tmp_path: Path) -> None:
    repo = _new_repo(tmp_path, "maint")
    _squash(repo, "Add parser (#1)", name="parser.py")
    git(repo, "branch", "1.x")
    _squash(repo, "New feature (#2)", name="feature.py")
    # On the maintenance branch: PR #3 merged with a merge commit, from its own branch.
    fix, merge3 = _merged(
        repo,
        "fix-crash",
        "1.x",
        "Fix the crash on empty input",
        "Merge pull request #3 from ada/fix-crash\n\nFix crash",
        name="parser.py",
    )
    base3 = git(repo, "rev-parse", f"{merge3}^1")
    # A merge made by hand with GitHub's subject but no "from" part, also on the branch.
    _merged(
        repo,
        "docs-fix",
        "1.x",
        "Fix a typo",
        "Merge pull request #5\n\nFix a typo",
        name="typo.txt",
    )
    # Back on main: the maintenance branch comes back with a plain merge (no PR of its own).
    git(repo, "checkout", "-q", "main")
    _no_ff(repo, "1.x", "Merge branch '1.x'")
    _squash(repo, "Later work (#4)", name="later.py")
    # A subject edited by hand (pip's "Merge pull request #7232 - Release 19.3.1"), no body.
    release = "Merge pull request #6 - Release 1.0.1"
    _merged(repo, "release", "main", "Bump the version", release, name="version.txt")
    source = GitSource(str(repo), full_name="acme/maint")
    prs = {pr.number: pr for pr in source.pull_requests(None)}
    assert sorted(prs) == [1, 2, 3, 4, 5, 6]
    assert prs[6].title == "Release 1.0.1"
    pr3 = prs[3]
    assert (pr3.title, pr3.base_sha, pr3.merge_commit_sha) == ("Fix crash", base3, merge3)
    assert [c.sha for c in pr3.commits] == [fix]
    assert pr3.patch is not None and "parser.py" in pr3.patch and "feature.py" not in pr3.patch
    assert source.found_by_kind() == {"squash": 3, "merge off the first-parent line": 2, "merge": 1}
    # The cursor after #3 stops before the merge that brought it in: a rerun from there finds
    # #3 again (and nothing is skipped), a rerun from #4 finds nothing.
    merge_back = git(repo, "rev-parse", "HEAD~2")
    assert source.cursor_after(pr3) == git(repo, "rev-parse", f"{merge_back}^1")
    again = [pr.number for pr in source.pull_requests(source.cursor_after(pr3))]
    assert again == [3, 5, 4, 6]
    assert list(source.pull_requests(source.cursor_after(prs[6]))) == []


def test_bors_merges_on_a_release_branch_merged_back_are_mined(tmp_path: Path) -> None:
    """meilisearch: fixes merged into `stable` by bors ("Merge #1456"), then `stable` into `main`
    by a PR of its own (#1607, "Merge changes in `stable` into `main`", merged by bors too). Such
    merges from another repository, far above our numbers, are not ours (rust-analyzer's subtree
    syncs bring in 2,600 of rust-lang/rust's)."""
    repo = _new_repo(tmp_path, "stable")
    _squash(repo, "Add the update loop (#1)", name="loop.rs")
    git(repo, "branch", "stable")
    _squash(repo, "New feature (#2)", name="feature.rs")
    bors = "Merge #3\n\n3: Fix update loop timeout r=ada a=bob\n\nFixes #1."
    fix, _ = _merged(
        repo, "fix-loop", "stable", "Fix the update loop timeout", bors, name="loop.rs"
    )
    homu = "Auto merge of #4 - ada:fix-dump, r=bob\nFix dumps\n\nBody of #4."
    _merged(repo, "fix-dump", "stable", "Fix dumps", homu, name="dump.rs")
    # A commit cherry-picked into stable keeps its squash subject: it is no PR of its own here.
    _squash(repo, "Backport the new feature (#2)", name="backport.rs")
    # A subtree sync brings in a larger repository's bors merge: its number is far above ours.
    upstream = "Auto merge of #161151 - eve:work, r=bors\nUpstream work"
    _merged(repo, "upstream", "stable", "Upstream work", upstream, name="upstream.rs")
    git(repo, "checkout", "-q", "main")
    _no_ff(repo, "stable", "Merge #5\n\n5: Merge changes in `stable` into `main` r=ada a=bob\n")
    source = GitSource(str(repo), full_name="acme/stable")
    prs = {pr.number: pr for pr in source.pull_requests(None)}
    assert sorted(prs) == [1, 2, 3, 4, 5]
    three, four = prs[3], prs[4]
    assert (three.title, three.body, [c.sha for c in three.commits]) == (
        "Fix update loop timeout",
        "Fixes #1.",
        [fix],
    )
    assert (four.title, four.body) == ("Fix dumps", "Body of #4.")
    assert three.patch is not None and "loop.rs" in three.patch and "dump.rs" not in three.patch
    # The release PR's commits hold the bors merges of the PRs it brings in.
    assert {"Merge #3", "Auto merge of #4 - ada:fix-dump, r=bob"} <= {
        c.message.partition("\n")[0] for c in prs[5].commits
    }
    assert source.found_by_kind() == {
        "squash": 2,
        "merge off the first-parent line": 2,
        "merge": 1,
        "skipped: another repository's PR number": 1,
        "backports and cherry-picks of PRs (kept out)": 1,  # the cherry-picked #2
    }


def test_a_pr_merged_into_a_feature_branch_by_its_title_is_mined(tmp_path: Path) -> None:
    """Issue 51: PR #3 merged into the `big-feature` branch by a two-parent commit titled
    `Title (#3)` (a merge queue, or the merge button with the PR's title), the branch then landing
    on main as PR #4; a backport of #2 onto `1.x` (its own commit, `Title (#2)`) and a merge of
    the same PR #2 into `1.x` are counted as backports and are no PRs of their own."""
    repo = _new_repo(tmp_path, "feature")
    _squash(repo, "Add the parser (#1)", name="parser.py")
    git(repo, "branch", "1.x")
    git(repo, "branch", "big-feature")
    _squash(repo, "Fix the crash (#2)", name="parser.py")
    work, merge3 = _merged(
        repo, "pr-3", "big-feature", "Stream tokens", "Stream tokens (#3)\n\nFaster.",
        name="stream.py",
    )  # fmt: skip
    base3 = git(repo, "rev-parse", f"{merge3}^1")
    git(repo, "checkout", "-q", "1.x")
    _squash(repo, "Fix the crash (#2)", name="backport.py")  # the backport's own commit
    git(repo, "checkout", "-q", "-b", "again", "1.x")
    _squash(repo, "Fix the crash", name="again.py")
    git(repo, "checkout", "-q", "1.x")
    _no_ff(repo, "again", "Fix the crash (#2)")  # the same PR merged into 1.x as well
    git(repo, "checkout", "-q", "main")
    _no_ff(repo, "big-feature", "Merge pull request #4 from ada/big-feature\n\nBig feature")
    _no_ff(repo, "1.x", "Merge branch '1.x'")
    source = GitSource(str(repo), full_name="acme/feature")
    prs = {pr.number: pr for pr in source.pull_requests(None)}
    assert sorted(prs) == [1, 2, 3, 4]
    three = prs[3]
    assert (three.title, three.body, three.base_sha, three.merge_commit_sha) == (
        "Stream tokens", "Faster.", base3, merge3,
    )  # fmt: skip
    assert [c.sha for c in three.commits] == [work]
    assert three.patch is not None and "stream.py" in three.patch and "parser.py" not in three.patch
    assert prs[2].patch is not None and "backport.py" not in prs[2].patch
    assert source.found_by_kind() == {
        "squash": 2,
        "merge": 1,  # "Merge branch '1.x'" is no PR
        "merge off the first-parent line": 1,
        "backports and cherry-picks of PRs (kept out)": 2,
    }


def test_a_revert_buttons_branch_names_the_pr_it_reverts(tmp_path: Path) -> None:
    """pillow #1847 ("Revert 1813, plus second commit with tweaks.", from branch
    revert-1813-DIB_1293) names the PR it undoes only in its branch; a merge commit GitHub wrote
    without a title takes its one commit's subject."""
    repo = _new_repo(tmp_path, "reverted")
    for number, branch, subject in (
        (1813, "dib", "Fix for DIB images"),
        (1847, "revert-1813-dib", 'Revert "Fix for DIB images"'),
    ):
        message = f"Merge pull request #{number} from ada/{branch}"
        _merged(repo, branch, "main", subject, message, name="dib.py")
    source = GitSource(str(repo), full_name="acme/reverted")
    prs = {pr.number: pr for pr in source.pull_requests(None)}
    assert (prs[1813].title, prs[1813].head_ref) == ("Fix for DIB images", "dib")
    assert prs[1847].head_ref == "revert-1813-dib"
    refs = pr_refs(prs[1847], "acme/reverted")
    assert [(r.target_number, r.type, r.found_in) for r in refs] == [(1813, "reverts", "branch")]
    assert pr_refs(prs[1813], "acme/reverted") == []
    # Several commits: the branch's name in words, as GitHub titles a new PR.
    git(repo, "checkout", "-q", "-b", "fix-dib_masks")
    _squash(repo, "Read three masks", name="dib.py")
    _squash(repo, "Test the masks", name="test_dib.py")
    git(repo, "checkout", "-q", "main")
    _no_ff(repo, "fix-dib_masks", "Merge pull request #1850 from ada/fix-dib_masks")
    latest = list(source.pull_requests(source.cursor_after(prs[1847])))
    assert [(pr.number, pr.title) for pr in latest] == [(1850, "Fix dib masks")]


def test_a_forks_own_pr_merged_back_is_not_taken_for_one_of_ours(tmp_path: Path) -> None:
    repo = _new_repo(tmp_path, "forked")
    _squash(repo, "Big feature (#40)", name="feature.py")
    # A contributor's fork merged its own PR #1 into its branch, then that branch came in as #41.
    git(repo, "checkout", "-q", "-b", "contrib")
    git(repo, "checkout", "-q", "-b", "fork-pr")
    _squash(repo, "Tweak", name="tweak.py")
    git(repo, "checkout", "-q", "contrib")
    _no_ff(repo, "fork-pr", "Merge pull request #1 from me/fork-pr\n\nMy own PR")
    git(repo, "checkout", "-q", "main")
    _no_ff(repo, "contrib", "Merge pull request #41 from me/contrib\n\nContribution")
    source = GitSource(str(repo), full_name="acme/forked")
    assert [pr.number for pr in source.pull_requests(None)] == [40, 41]
    assert source.found_by_kind() == {
        "squash": 1,
        "skipped: a fork's own PR number": 1,
        "merge": 1,
    }


def test_another_repositorys_merges_brought_in_by_a_subtree_sync_are_not_ours(
    tmp_path: Path,
) -> None:
    """rust-analyzer's syncs with rust-lang/rust bring in Miri's "Merge pull request #4001 from
    rust-lang/rustup" in 2024, years after rust-analyzer's own PRs passed #4001; a PR merged
    into a maintenance branch a few weeks after it was opened is ours."""
    repo = _new_repo(tmp_path, "synced", date="2020-01-01T10:00:00")
    _squash(repo, "Parser (#4001)", name="parser.rs", date="2020-03-01T10:00:00")
    _squash(repo, "Lexer (#9000)", name="lexer.rs", date="2022-06-01T10:00:00")
    _squash(repo, "Hover (#17000)", name="hover.rs", date="2024-05-01T10:00:00")
    git(repo, "checkout", "-q", "-b", "sync")
    for number, name in ((4002, "rustup"), (17010, "fix-hover")):
        git(repo, "checkout", "-q", "-b", name, "sync")
        _squash(repo, f"Work of {name}", name=f"{name}.rs", date="2024-06-01T10:00:00")
        git(repo, "checkout", "-q", "sync")
        message = f"Merge pull request #{number} from someone/{name}"
        _no_ff(repo, name, message, date="2024-06-02T10:00:00")
    git(repo, "checkout", "-q", "main")
    _no_ff(repo, "sync", "Merge pull request #17020 from someone/sync", date="2024-06-03T10:00:00")
    source = GitSource(str(repo), full_name="acme/synced")
    assert [pr.number for pr in source.pull_requests(None)] == [4001, 9000, 17000, 17010, 17020]
    assert source.found_by_kind() == {
        "squash": 3,
        "skipped: another repository's PR number": 1,
        "merge off the first-parent line": 1,
        "merge": 1,
    }


def test_another_repositorys_merges_on_the_first_parent_line_are_not_ours(tmp_path: Path) -> None:
    """Miri's first-parent line runs through two months of rust-lang/rust's bors merges (#102064
    to #104456) and then comes back to Miri's own numbers: those merges are not Miri's PRs, and
    the foreign merges its later syncs bring in off the line are still told from its own."""
    repo = _new_repo(tmp_path, "moved")
    for number in range(1, 6):
        _squash(repo, f"Shim number {number} (#{number})", name="shims.rs")
    for number in (102064, 102068):
        message = f"Auto merge of #{number} - eve:work{number}, r=bors\nCompiler work"
        _merged(repo, f"rustc{number}", "main", "Compiler work", message, name="rustc.rs")
    git(repo, "checkout", "-q", "-b", "sync")
    upstream = "Auto merge of #103000 - eve:more, r=bors\nMore compiler work"
    _merged(repo, "more", "sync", "More compiler work", upstream, name="rustc.rs")
    git(repo, "checkout", "-q", "main")
    _no_ff(repo, "sync", "Merge from rustc")
    for number in range(6, 9):
        _squash(repo, f"Shim number {number} (#{number})", name="shims.rs")
    source = GitSource(str(repo), full_name="rust-lang/miri")
    assert [pr.number for pr in source.pull_requests(None)] == list(range(1, 9))
    assert source.found_by_kind() == {
        "squash": 8,
        "skipped: another repository's PR number": 3,
    }


def test_another_repositorys_line_before_our_numbers_start_again_is_not_ours(
    tmp_path: Path,
) -> None:
    """apache/iceberg-python's line starts with apache/iceberg's squash commits (up to #8174),
    then its own numbers start from #1; tokio-rs/tracing's holds a block of tokio's PRs between
    its own #120 and #122. Neither block is ours, and neither lifts our numbers' bound."""
    repo = _new_repo(tmp_path, "split")
    foreign = list(range(1000, 1300, 10))
    for number in foreign:
        _squash(repo, f"Python: upstream work {number} (#{number})", name="types.py")
    for number in range(1, 56):
        _squash(repo, f"Own change {number} (#{number})", name="types.py")
    source = GitSource(str(repo), full_name="apache/iceberg-python")
    assert [pr.number for pr in source.pull_requests(None)] == list(range(1, 56))
    assert source.found_by_kind() == {
        "squash": 55,
        "skipped: history imported from another repository": len(foreign),
    }

    repo = _new_repo(tmp_path, "moved-in")
    ours = list(range(1, 81))
    for number in ours[:20] + foreign[:12] + ours[20:]:
        _squash(repo, f"Change {number} (#{number})", name="span.rs")
    source = GitSource(str(repo), full_name="tokio-rs/tracing")
    assert [pr.number for pr in source.pull_requests(None)] == ours
    assert source.found_by_kind()["skipped: history imported from another repository"] == 12


def test_an_imported_commit_is_as_old_as_when_it_was_written(tmp_path: Path) -> None:
    """apache/iceberg-python's line starts with apache/iceberg's #54, written in 2019 and
    committed at the split on 2023-09-30; its own #54 landed nine days after the split. A number
    landing again counts its age from when the first landing was written: the later one is ours."""
    repo = _new_repo(tmp_path, "split-54", date="2019-01-01T10:00:00")
    (repo / "types.py").write_text("upstream\n")
    git(repo, "add", "-A")
    message = "Initial python implementation (#54)"
    git(
        repo,
        "commit",
        "-q",
        "-m",
        message,
        "--date",
        "2019-03-14T10:00:00",
        date="2023-09-30T19:32:22",
    )
    _squash(repo, "Docs: fix repo name and url (#54)", name="README.md", date="2023-10-09T20:20:24")
    source = GitSource(str(repo), full_name="apache/iceberg-python")
    assert [pr.title for pr in source.pull_requests(None)] == ["Docs: fix repo name and url"]


def test_a_low_number_merged_late_is_no_new_numbering(tmp_path: Path) -> None:
    """A PR opened long ago lands a low number among high ones: one landing, not a run."""
    repo = _new_repo(tmp_path, "late")
    numbers = [*range(1000, 1040), 5, *range(1040, 1100)]
    for number in numbers:
        _squash(repo, f"Change {number} (#{number})", name="lib.rs")
    source = GitSource(str(repo), full_name="acme/late")
    assert [pr.number for pr in source.pull_requests(None)] == numbers


def test_our_numbers_leaping_and_staying_up_are_ours(tmp_path: Path) -> None:
    """CPython's PR numbers leapt from about #32,000 to #91,000 when it imported its old
    tracker's issues, and stayed there; a PR opened before the leap may still merge after it."""
    repo = _new_repo(tmp_path, "leap")
    numbers = [30, 31, 32, 9100, 9101, 33, 9102, 9103]
    for number in numbers:
        _squash(repo, f"Change {number} (#{number})", name="ceval.c")
    source = GitSource(str(repo), full_name="python/cpython")
    assert [pr.number for pr in source.pull_requests(None)] == numbers
    assert source.found_by_kind() == {"squash": 8}


def test_squash_style_ticket_numbers_do_not_make_our_merges_look_foreign(tmp_path: Path) -> None:
    """numpy's line has Trac tickets as "Title (#1779)" in 2011, ahead of its first GitHub PRs;
    its PR #268, merged on a maintenance branch in 2012, is its own, not another repository's."""
    repo = _new_repo(tmp_path, "tickets", date="2010-01-01T10:00:00")
    _squash(repo, "Speed up tolist (#1779)", name="core.c", date="2011-03-01T10:00:00")
    for number, day in ((82, "2011-06-03"), (250, "2012-04-10")):
        git(repo, "checkout", "-q", "-b", f"pr{number}")
        _squash(repo, f"Work {number}", name=f"w{number}.c", date=f"{day}T09:00:00")
        git(repo, "checkout", "-q", "main")
        _no_ff(repo, f"pr{number}", f"Merge pull request #{number} from a/pr", f"{day}T10:00:00")
    git(repo, "checkout", "-q", "-b", "maint")
    git(repo, "checkout", "-q", "-b", "pr268")
    _squash(repo, "Docs fix", name="docs.c", date="2012-05-04T10:00:00")
    git(repo, "checkout", "-q", "maint")
    _no_ff(repo, "pr268", "Merge pull request #268 from b/docs", date="2012-05-18T10:00:00")
    git(repo, "checkout", "-q", "main")
    _no_ff(repo, "maint", "Merge branch 'maint'", date="2012-05-19T10:00:00")
    source = GitSource(str(repo), full_name="numpy/numpy")
    assert [pr.number for pr in source.pull_requests(None)] == [1779, 82, 250, 268]
    assert source.found_by_kind() == {
        "squash": 1,
        "merge": 2,
        "merge off the first-parent line": 1,
    }


def test_a_number_landed_again_under_another_title_is_the_later_prs(tmp_path: Path) -> None:
    """tokio-rs/tracing's line starts with tokio-trace-prototype's #1–#168 and tokio's
    #1047–#1170, then its own PRs take those numbers again; a cherry-pick repeats a title."""
    repo = _new_repo(tmp_path, "moved", date="2018-01-01T10:00:00")
    _squash(repo, "Prototype spans (#2)", name="proto.rs", date="2018-02-01T10:00:00")
    _squash(repo, "Prototype events (#3)", name="events.rs", date="2018-03-01T10:00:00")
    _squash(repo, "Prototype fields (#6)", name="fields.rs", date="2018-03-02T10:00:00")
    _squash(repo, "Own layer (#2)", name="layer.rs", date="2019-02-01T10:00:00")
    _squash(repo, "Own filter (#4)", name="filter.rs", date="2019-03-01T10:00:00")
    _squash(repo, "Own filter (#4)", name="filter2.rs", date="2019-04-01T10:00:00")
    _squash(repo, "Fix a regression of the layer from #2 (#5)", "fix.rs", "2019-04-02T10:00:00")
    for number in range(300, 304):
        _squash(repo, f"Later work (#{number})", f"later{number}.rs", "2019-04-03T10:00:00")
    # A commit pushed without a PR that names one in its subject takes no number; a PR that
    # waited long lands among higher numbers, months after the number's first PR, and takes it.
    _squash(repo, "Address the last review comment of (#4)", "review.rs", "2019-04-04T10:00:00")
    _squash(repo, "Own fields (#6)", name="own-fields.rs", date="2019-05-01T10:00:00")
    source = GitSource(str(repo), full_name="acme/moved")
    prs = {pr.number: pr for pr in source.pull_requests(None)}
    assert {n: pr.title for n, pr in prs.items()} == {
        3: "Prototype events",
        2: "Own layer",
        4: "Own filter",
        5: "Fix a regression of the layer from #2",
        **{n: "Later work" for n in range(300, 304)},
        6: "Own fields",
    }
    # The cherry-pick of #4 is the same PR: the first landing stays.
    assert prs[4].created_at.date().isoformat() == "2019-03-01"
    assert source.found_by_kind() == {"squash": 9, "skipped: an earlier repository's PR number": 2}


def test_merge_queue_and_bors_merges_are_prs_with_their_branch_commits(tmp_path: Path) -> None:
    repo = _new_repo(tmp_path, "queued")
    # GitHub's merge queue: a two-parent merge whose subject is the PR's title and number.
    git(repo, "checkout", "-q", "-b", "speedup")
    work = _squash(repo, "Cache the parsed manifest", name="manifest.rs")
    git(repo, "checkout", "-q", "main")
    base7 = git(repo, "rev-parse", "HEAD")
    queued = _no_ff(repo, "speedup", "Cache the manifest (#7)\n\nParsing twice was slow.")
    # bors: "Auto merge of #N - owner:branch, r=reviewer", then the PR's title and body.
    git(repo, "checkout", "-q", "-b", "fix")
    fix = _squash(repo, "Handle an empty manifest", name="manifest.rs")
    git(repo, "checkout", "-q", "main")
    bors_message = (
        "Auto merge of #9 - ada:fix, r=bob\n\nHandle an empty manifest\n\nFollows #7: it panicked."
    )
    merged = _no_ff(repo, "fix", bors_message)
    source = GitSource(str(repo), full_name="acme/queued")
    prs = {pr.number: pr for pr in source.pull_requests(None)}
    assert sorted(prs) == [7, 9]
    pr7, pr9 = prs[7], prs[9]
    assert (pr7.title, pr7.body, pr7.base_sha, pr7.merge_commit_sha) == (
        "Cache the manifest",
        "Parsing twice was slow.",
        base7,
        queued,
    )
    assert [c.sha for c in pr7.commits] == [work]
    assert (pr9.title, pr9.body, pr9.base_sha) == (
        "Handle an empty manifest",
        "Follows #7: it panicked.",
        queued,
    )
    assert (pr9.merge_commit_sha, [c.sha for c in pr9.commits]) == (merged, [fix])
    assert pr9.patch is not None and "manifest.rs" in pr9.patch
    assert source.found_by_kind() == {"merge": 2}


def test_another_projects_history_merged_in_whole_is_not_read_as_ours(tmp_path: Path) -> None:
    """dask #11623 merges dask-expr's whole history (940 commits from its own first commit): their
    "(#6)" subjects and "Merge pull request #31" are dask-expr's numbers, not PRs of dask or
    references to them, and the PR was opened when it was, not when dask-expr began."""
    repo = _new_repo(tmp_path, "absorber", date="2023-01-01T10:00:00")
    for number in range(1, 41, 13):
        _squash(repo, f"Our work {number} (#{number})", name="ours.py", date="2023-02-01T10:00:00")
    git(repo, "checkout", "-q", "--orphan", "expr")
    git(repo, "rm", "-q", "-r", "-f", ".")
    _squash(repo, "Start the expression project", name="expr.py", date="2021-05-01T10:00:00")
    _squash(repo, "Add lowering (#6)\n\nFollows #3.", name="expr.py", date="2021-06-01T10:00:00")
    git(repo, "checkout", "-q", "-b", "optimizer")
    _squash(repo, "Optimizer work, see #2", name="opt.py", date="2021-07-01T10:00:00")
    git(repo, "checkout", "-q", "expr")
    _no_ff(repo, "optimizer", "Merge pull request #31 from them/optimizer", "2021-07-02T10:00:00")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "--allow-unrelated-histories", "-m",
        "Merge the expression project into ours (#45)\n\nIts history comes along.", "expr",
        date="2024-03-01T10:00:00")  # fmt: skip
    merged = git(repo, "rev-parse", "HEAD")
    source = GitSource(str(repo), full_name="acme/absorber")
    prs = {pr.number: pr for pr in source.pull_requests(None)}
    assert sorted(prs) == [1, 14, 27, 40, 45]
    absorbed = prs[45]
    assert (absorbed.merge_commit_sha, absorbed.commits) == (merged, [])
    assert absorbed.created_at == absorbed.merged_at  # its own commit, not dask-expr's first
    assert absorbed.patch is not None and "expr.py" in absorbed.patch
    assert not {ref.target_number for ref in pr_refs(absorbed, "acme/absorber")}
    assert source.found_by_kind() == {
        "squash": 4,
        "merge": 1,
        "merges of another history: its commits left out": 1,
        "skipped: PR merges inside another history": 1,
    }


def test_a_merge_scripts_commits_are_prs(tmp_path: Path) -> None:
    """Apache Spark's merge script lands a PR as one commit that ends `Closes #N from
    owner/branch.` (Kyuubi landed 3,796 PRs so, and the git source found 162 of its PRs before).
    A backport cherry-picked to a release branch carries the same line and is no PR of its own;
    GitHub's bare "Closes #N" names an issue."""
    repo = make_chain_repo(tmp_path / "spark").path
    script = (
        "[SPARK-41][SQL] Push limits through unions\n\n### Why are the changes needed?\n"
        "Follow up to #4.\n\nCloses #7 from ada/limit-union.\n\nCloses #6\n\n"
        "1a2b3c4 [ada] Merge branch 'master' into limit-union (#5)\n\n"
        "Authored-by: Ada <ada@example.org>"
    )
    landed = _squash(repo, script, name="limits.py")
    _squash(repo, "Fix the docs\n\nCloses #8", name="docs.txt")
    # An older copy of the script lists the branch's commits after its line (apache/zeppelin).
    older_script = (
        "[ZEPPELIN-9] Quote the note names\n\nCloses #9 from bo/quote and squashes the following "
        "commits:\n\n1a2b3c4 [bo] Merge branch 'master' into quote (#5)"
    )
    _squash(repo, older_script, name="quote.py")
    git(repo, "checkout", "-q", "-b", "branch-1.0", f"{landed}~1")
    git(repo, "cherry-pick", landed)
    git(repo, "checkout", "-q", "main")
    _no_ff(repo, "branch-1.0", "Merge branch 'branch-1.0'")
    source = GitSource(str(repo), full_name="acme/spark")
    prs = {pr.number: pr for pr in source.pull_requests(None)}
    assert sorted(prs) == [1, 2, 3, 4, 7, 9]
    assert (prs[9].title, prs[9].body, prs[9].head_ref) == (
        "[ZEPPELIN-9] Quote the note names",
        "",
        "quote",
    )
    pr7 = prs[7]
    assert (pr7.title, pr7.merge_commit_sha, pr7.head_ref) == (
        "[SPARK-41][SQL] Push limits through unions",
        landed,
        "limit-union",
    )
    # The body is the PR's own and the issue it closes: the commit list below the script's line
    # names others' numbers.
    assert pr7.body == "### Why are the changes needed?\nFollow up to #4.\n\nCloses #6"
    assert pr7.patch is not None and "limits.py" in pr7.patch
    assert source.found_by_kind() == {"squash": 3, "merge": 1, "merge script": 2}
