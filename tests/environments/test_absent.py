"""B_t from a clone that lacks blobs of B_t's own tree (a snapshot without its largest files):
a stand-in without them, the same one every time, that `git archive` exports and a pack carries
into a repository that has nothing of the clone."""

from __future__ import annotations

import tarfile
from io import BytesIO
from pathlib import Path

import pytest

from prchain.core import git as runner
from prchain.core.errors import GitError
from prchain.dev.repos import git
from prchain.environments.absent import _whole_base, absent_paths, pack, whole_base
from prchain.environments.eras.build import _export_tree
from tests.support.eras_repo import commit_files

BIG = "benchmarks/snapshot.txt"


def snapshot_clone(tmp_path: Path) -> tuple[Path, str, str]:
    """(a bare clone without B_t's big blob, B_t, the full repository's B_t tree)."""
    full = tmp_path / "full"
    full.mkdir()
    git(full, "init", "-q", "-b", "main")
    files = {"calc.py": "def add(a, b):\n    return a + b\n", "tests/test_calc.py": "x = 1\n"}
    commit_files(full, {**files, BIG: "x" * 40_000}, "Calc", "2025-12-01T12:00:00")
    base = git(full, "rev-parse", "HEAD")
    git(full, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone.git"
    git(tmp_path, "clone", "-q", "--bare", "--filter=blob:limit=1k", "--no-local",
        f"file://{full}", str(clone))  # fmt: skip
    git(clone, "config", "--remove-section", "remote.origin")  # a snapshot: no remote to ask
    return clone, base, git(full, "rev-parse", "HEAD^{tree}")


def test_a_base_whose_blobs_are_all_there_is_itself(tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.mkdir()
    git(full, "init", "-q", "-b", "main")
    commit_files(full, {"a.py": "a = 1\n"}, "A", "2025-12-01T12:00:00")
    base = git(full, "rev-parse", "HEAD")
    whole = whole_base(full, base)
    assert (whole.sha, whole.absent, whole.stands_in, whole.note()) == (base, (), False, "")


def test_a_base_missing_a_blob_gets_a_stand_in_without_that_file(tmp_path: Path) -> None:
    clone, base, full_tree = snapshot_clone(tmp_path)
    assert absent_paths(clone, base) == (BIG,)
    with pytest.raises(GitError):
        _export_tree(clone, base, tmp_path / "as-before")  # what every such era did

    whole = whole_base(clone, base)
    assert whole.stands_in and whole.absent == (BIG,)
    assert BIG in whole.note() and base[:12] in whole.note()
    listed = git(clone, "ls-tree", "-r", "--name-only", whole.sha).split("\n")
    assert listed == ["calc.py", "tests/test_calc.py"]
    assert git(clone, "rev-list", "--parents", "-n", "1", whole.sha) == whole.sha  # no history
    for field in ("%an %ae %ad", "%cn %ce %cd"):  # B_t's own people and dates
        shown = git(clone, "show", "-s", f"--format={field}", whole.sha)
        assert shown == git(clone, "show", "-s", f"--format={field}", base)
    assert git(clone, "rev-parse", f"{whole.sha}^{{tree}}") != full_tree

    _export_tree(clone, whole.sha, tmp_path / "src")
    exported = sorted(str(p.relative_to(tmp_path / "src")) for p in (tmp_path / "src").rglob("*"))
    assert exported == ["calc.py", "tests", "tests/test_calc.py"]


def test_the_stand_in_is_the_same_commit_every_time(tmp_path: Path) -> None:
    clone, base, _ = snapshot_clone(tmp_path)
    first = whole_base(clone, base).sha
    _whole_base.cache_clear()
    assert whole_base(clone, "HEAD").sha == first  # by any name, built again: the same sha


def test_the_pack_carries_the_stand_in_into_an_empty_repository(tmp_path: Path) -> None:
    clone, base, _ = snapshot_clone(tmp_path)
    whole = whole_base(clone, base)
    data = pack(clone, whole.sha)
    empty = tmp_path / "store.git"
    git(tmp_path, "init", "-q", "--bare", str(empty))
    runner.run(empty, "index-pack", "--stdin", input=data)
    archived = runner.run(empty, "archive", whole.sha).stdout
    with tarfile.open(fileobj=BytesIO(archived)) as tar:
        names = sorted(m.name for m in tar.getmembers() if m.isfile())
        text = tar.extractfile("calc.py").read().decode()  # type: ignore[union-attr]
    assert names == ["calc.py", "tests/test_calc.py"]
    assert text.startswith("def add")


def test_an_exported_task_checks_out_the_base_without_the_absent_files(tmp_path: Path) -> None:
    """`tasks eval` and other harnesses check B_t out from the image's mirror, which lacks the
    same blobs as the clone: the task's install commands leave those files out (sparse), so the
    harness's tree is the stage's tree, and reading the missing blobs is never tried."""
    import subprocess

    from prchain.environments.carry import ORIGIN_DIR, WORKDIR
    from prchain.verdicts.runnable import checkout

    clone, base, _ = snapshot_clone(tmp_path)
    work = tmp_path / "work" / "repo"
    work.parent.mkdir()

    def run(commands: list[str]) -> subprocess.CompletedProcess[str]:
        script = " && ".join(commands).replace(ORIGIN_DIR, str(clone)).replace(WORKDIR, str(work))
        return subprocess.run(["bash", "-c", script], capture_output=True, text=True)

    # As before: git cannot write the absent file, says so and exits 0; the tree then shows it
    # deleted, and a harness's `git diff` of the agent's work dies on the blob.
    assert "unable to read" in run(checkout(base)).stderr
    assert git(work, "status", "--porcelain") == f"D {BIG}"
    assert runner.run(work, "diff", check=False).returncode != 0
    done = run(checkout(base, absent_paths(clone, base)))
    assert done.returncode == 0, done.stderr
    files = sorted(str(p.relative_to(work)) for p in work.rglob("*") if ".git" not in p.parts)
    assert files == ["calc.py", "tests", "tests/test_calc.py"]
    assert git(work, "status", "--porcelain") == ""  # nothing shows as deleted
    assert git(work, "rev-parse", "HEAD") == base
    (work / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    assert "+    return b + a" in git(work, "diff")
