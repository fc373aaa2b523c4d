"""A stage enters on a partial clone: a user's clone made with `--filter` (the search tool's
snapshots of big repositories are such clones: numpy's lacks a PDF of 2006) has no copy of some
old blobs, yet every stage base's own tree is complete. The sandbox fetches B_t alone (depth 1)
from its mirror: no object of B_t's history is ever needed, so the stage enters (a full fetch
died in git-pack-objects on the missing blob, exit 91)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.repos import git
from prchain.environments.protocol import StageSpec
from tests.support.era_runs import remove_repo_images
from tests.support.eras_repo import commit_files

pytestmark = pytest.mark.docker

REPO = f"partial-clone-test-{uuid.uuid4().hex[:8]}/calc"


def make_partial_clone(tmp_path: Path) -> tuple[Path, str, str]:
    """(a bare partial clone, its base commit, the old blob it lacks)."""
    full = tmp_path / "full"
    full.mkdir()
    git(full, "init", "-q", "-b", "main")
    commit_files(full, {"paper.txt": "x" * 40_000}, "Add a big paper", "2006-09-16T12:00:00")
    blob = git(full, "rev-parse", "HEAD:paper.txt").strip()
    git(full, "rm", "-q", "paper.txt")
    commit_files(
        full, {"calc.py": "def add(a, b):\n    return a + b\n"}, "Calc", "2024-05-01T12:00:00"
    )
    base = git(full, "rev-parse", "HEAD").strip()
    git(full, "config", "uploadpack.allowFilter", "true")
    partial = tmp_path / "partial.git"
    git(
        tmp_path,
        "clone",
        "-q",
        "--bare",
        "--filter=blob:limit=1k",
        "--no-local",
        f"file://{full}",
        str(partial),
    )
    git(partial, "config", "--remove-section", "remote.origin")  # a snapshot: no remote to ask
    missing = git(partial, "rev-list", "--objects", "--missing=print", base)
    assert f"?{blob}" in missing.split()  # the old blob is not in the clone
    return partial, base, blob


def test_a_stage_enters_on_a_clone_without_its_old_blobs(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    clone, base, _ = make_partial_clone(tmp_path)
    config = EnvironmentConfig(log_dir=str(tmp_path / "logs"))
    try:
        with DockerEnvironment(
            config, repo=REPO, clone_path=str(clone), stages=[StageSpec(1, base, "")]
        ) as env:
            entered = env.enter_stage(1)
            assert entered.outcome == "clean", entered
            assert env.read_file("calc.py").startswith("def add")
            assert env.execute("ls").output.split() == ["calc.py"]
    finally:
        remove_repo_images(docker_client, REPO, ("repo",))


def test_stages_enter_on_a_clone_without_a_blob_of_their_own_bases(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    """ruff's snapshot lacks two benchmark outputs of every commit since 2025-11: B_t's own tree
    names a blob the clone does not hold, so neither the whole fetch nor the depth-1 fetch could
    give B_t (exit 91 at every stage of that year). The stage enters a stand-in without that
    file (`prchain.environments.absent`); the chain's gold patch is reverted and the agent's change
    carried as on any base, and the clean room gets the same tree."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    full = tmp_path / "full"
    full.mkdir()
    git(full, "init", "-q", "-b", "main")
    calc = "def add(a, b):\n    return a + b\n"
    commit_files(
        full, {"calc.py": calc, "bench/out.txt": "x" * 40_000}, "Calc", "2025-12-01T12:00:00"
    )
    first = git(full, "rev-parse", "HEAD").strip()
    commit_files(full, {"calc.py": calc + "\n\ndef sub(a, b):\n    return a - b\n"}, "Sub",
                 "2025-12-02T12:00:00")  # fmt: skip
    second = git(full, "rev-parse", "HEAD").strip()
    gold = git(full, "diff", first, second) + "\n"
    git(full, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "snapshot.git"
    git(tmp_path, "clone", "-q", "--bare", "--filter=blob:limit=1k", "--no-local",
        f"file://{full}", str(clone))  # fmt: skip
    git(clone, "config", "--remove-section", "remote.origin")
    stages = [StageSpec(1, first, gold), StageSpec(2, second, "")]
    config = EnvironmentConfig(log_dir=str(tmp_path / "logs"))
    try:
        with DockerEnvironment(config, repo=REPO, clone_path=str(clone), stages=stages) as env:
            assert env.enter_stage(1).outcome == "clean"
            assert env.execute("git ls-files").output.split() == ["calc.py"]
            env.execute("printf 'def mul(a, b):\\n    return a * b\\n' >> calc.py")
            entered = env.enter_stage(2)
            assert entered.outcome == "clean", entered
            tree = env.read_file("calc.py")
            assert "def mul" in tree and "def sub" not in tree  # carried; the gold one reverted
            assert env.execute("ls -A").output.split() == [".git", "calc.py"]
            with env.clean_room() as room:
                listed = room.execute("ls -A && cat calc.py").output
            assert "bench" not in listed and "def add" in listed and "def mul" not in listed
    finally:
        remove_repo_images(docker_client, REPO, ("repo",))
