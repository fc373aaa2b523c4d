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

from environments.protocol import StageSpec
from prchain.dev.repos import git
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
    from environments.config import EnvironmentConfig
    from environments.docker_env import DockerEnvironment

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
