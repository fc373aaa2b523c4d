"""Patches from real git repositories: text, binary, renames, huge diffs and missing objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.dev.repos import ChainRepo, git, make_chain_repo
from prchain.miner.gitdiff import iter_patches, parse_files, patch_between


@pytest.fixture
def chain(tmp_path: Path) -> ChainRepo:
    return make_chain_repo(tmp_path / "calc")


def _commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def _drop_object(repo: Path, sha: str) -> None:
    """Delete one loose object, the way real snapshots sometimes lack one."""
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).unlink()


def test_patch_equals_git_diff_for_each_pr(chain: ChainRepo) -> None:
    for info in chain.prs.values():
        result = patch_between(str(chain.path), info.base_sha, info.merge_sha, 1_000_000)
        assert result.status == "ok"
        assert result.patch == info.gold_patch + "\n"
        assert [f.path for f in result.files] == [
            line.split(" b/")[-1]
            for line in info.gold_patch.splitlines()
            if line.startswith("diff --git")
        ]


def test_file_counts_match_numstat(chain: ChainRepo) -> None:
    info = chain.prs[1]
    result = patch_between(str(chain.path), info.base_sha, info.merge_sha, 1_000_000)
    numstat = git(chain.path, "diff", "--numstat", info.base_sha, info.merge_sha).splitlines()
    expected = {
        line.split("\t")[2]: (int(line.split("\t")[0]), int(line.split("\t")[1]))
        for line in numstat
    }
    assert {f.path: (f.additions, f.deletions) for f in result.files} == expected


def test_binary_added_renamed_and_removed_files(chain: ChainRepo) -> None:
    repo = chain.path
    base = git(repo, "rev-parse", "HEAD")
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary\x00" * 50)
    git(repo, "mv", "README.md", "README.rst")
    git(repo, "rm", "-q", "tests/test_ops.py")
    (repo / "calc" / "new.py").write_text("x = 1\n")
    head = _commit(repo, "mixed")
    result = patch_between(str(repo), base, head, 1_000_000)
    files = {f.path: f for f in result.files}
    assert files["logo.png"].is_binary and files["logo.png"].status == "added"
    assert "PNG" not in (result.patch or "")  # flagged, never inlined
    assert (
        files["README.rst"].status == "renamed" and files["README.rst"].previous_path == "README.md"
    )
    removed = len((git(repo, "show", f"{base}:tests/test_ops.py") + "\n").splitlines())
    assert (
        files["tests/test_ops.py"].status == "removed"
        and files["tests/test_ops.py"].deletions == removed
    )
    assert files["calc/new.py"].status == "added" and files["calc/new.py"].additions == 1


def test_huge_patch_is_too_large_but_keeps_its_file_list(chain: ChainRepo) -> None:
    repo = chain.path
    base = git(repo, "rev-parse", "HEAD")
    (repo / "big.txt").write_text("".join(f"line {i}\n" for i in range(50_000)))
    head = _commit(repo, "big")
    result = patch_between(str(repo), base, head, 100_000)
    assert result.status == "too_large" and result.patch is None
    assert [(f.path, f.additions) for f in result.files] == [("big.txt", 50_000)]


def test_non_utf8_content_is_decoded_with_replacement(chain: ChainRepo) -> None:
    repo = chain.path
    base = git(repo, "rev-parse", "HEAD")
    (repo / "latin.txt").write_bytes("café crème\n".encode("latin-1"))
    head = _commit(repo, "latin-1 text")
    result = patch_between(str(repo), base, head, 1_000_000)
    assert result.status == "ok" and "caf\ufffd cr\ufffdme" in (result.patch or "")


def test_unknown_sha_is_unavailable_not_an_error(chain: ChainRepo) -> None:
    result = patch_between(str(chain.path), "0" * 40, chain.prs[1].merge_sha, 1_000_000)
    assert (result.status, result.patch, result.files) == ("unavailable", None, [])


def test_missing_blob_marks_only_that_patch_unavailable(chain: ChainRepo) -> None:
    repo = chain.path
    pairs = [(info.merge_sha, info.base_sha) for info in chain.prs.values()]
    blob = git(repo, "rev-parse", f"{chain.prs[2].merge_sha}:calc/ops.py")
    _drop_object(repo, blob)
    assert (
        patch_between(str(repo), chain.prs[2].base_sha, chain.prs[2].merge_sha, 10**6).status
        == "unavailable"
    )
    results = dict(iter_patches(str(repo), pairs, 1_000_000))
    assert list(results) == [sha for sha, _ in pairs]
    statuses = {number: results[info.merge_sha].status for number, info in chain.prs.items()}
    # #2 added that blob, #3 started from it: both need it; #1 and #4 do not.
    assert statuses == {1: "ok", 2: "unavailable", 4: "ok", 3: "unavailable"}
    assert results[chain.prs[4].merge_sha].patch == chain.prs[4].gold_patch + "\n"


def test_iter_patches_matches_one_by_one_and_handles_a_root_commit(chain: ChainRepo) -> None:
    repo = str(chain.path)
    root = git(chain.path, "rev-list", "--max-parents=0", "HEAD")
    pairs: list[tuple[str, str | None]] = [(root, None)] + [
        (i.merge_sha, i.base_sha) for i in chain.prs.values()
    ]
    batch = list(iter_patches(repo, pairs, 1_000_000))
    assert [sha for sha, _ in batch] == [sha for sha, _ in pairs]
    assert {f.path for f in batch[0][1].files} == {
        "calc/__init__.py",
        "calc/ops.py",
        "tests/test_ops.py",
        "README.md",
    }
    for (head, base), (_, result) in zip(pairs[1:], batch[1:], strict=True):
        assert result == patch_between(repo, str(base), head, 1_000_000)


def test_empty_diff_yields_an_ok_empty_patch(chain: ChainRepo) -> None:
    git(chain.path, "commit", "-q", "--allow-empty", "-m", "nothing (#9)")
    head = git(chain.path, "rev-parse", "HEAD")
    ((sha, result),) = list(iter_patches(str(chain.path), [(head, head + "~1")], 1000))
    assert (sha, result.status, result.patch, result.files) == (head, "ok", "", [])


def test_parse_files_reads_quoted_and_mode_only_headers() -> None:
    patch = (
        'diff --git "a/d\\303\\251j\\303\\240 vu.txt" "b/d\\303\\251j\\303\\240 vu.txt"\n'
        "new file mode 100644\nindex 0000000..e69de29\n"
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    )
    files = parse_files(patch)
    assert [(f.path, f.status) for f in files] == [("déjà vu.txt", "added"), ("run.sh", "modified")]
