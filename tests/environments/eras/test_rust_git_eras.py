"""Acceptance: Rust eras whose Cargo.lock pins git dependencies on GitHub, which builds cannot reach.

The `counts` crate (tests/support/rust_git_repo.py) locks itoa from a GitHub fork in its first era
and adds `prchain-tally`, on no registry, in its second, whose commit a local mirror holds
(`eras.git_mirrors`). `prchain env setup` gives the first era crates.io's itoa in place of the
fork (said in its notes) and the second the mirror's exact commit; both verify, and `prchain tests
verify` finds each PR's integration test FAIL_TO_PASS. In a stage's sandbox the agent's `cargo
test` runs offline and leaves Cargo.lock as the tree has it: nothing of the substitution is in the
agent's diff. Without the mirror, the second era stays unverified, and says why.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_env import DockerEnvironment
from prchain.environments.protocol import StageSpec
from prchain.store.models import EnvRecipe
from tests.support.era_runs import (
    invoke,
    recipes_by_pr,
    remove_repo_images,
    verdicts_by_pr,
    write_config,
)
from tests.support.rust_git_repo import TALLY_URL, make_counts, make_tally_mirror

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = f"rust-git-eras-test-{uuid.uuid4().hex[:8]}/counts"
NO_MIRROR = f"rust-git-eras-test-{uuid.uuid4().hex[:8]}/counts"


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built and its repositories' caches."""
    yield
    for repo in (REPO, NO_MIRROR):
        remove_repo_images(docker_client, repo, ("repo", "era", "sandbox"))


def _setup(tmp_path: Path, clone: Path, repo: str, url: str, mirrors: dict[str, str]) -> str:
    eras = {"suites": {"bookworm": "3.11"}, "extra_base_packages": [], "git_mirrors": mirrors}
    common = ["--config", str(write_config(tmp_path, eras)), "--db", url]
    assert invoke("mine", "--source", "git", "--name", repo, str(clone), *common).exit_code == 0
    built = invoke(
        "chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common
    )
    assert built.exit_code == 0, built.output
    return invoke("env", "setup", *common).output


def test_git_dependencies_stand_in_from_crates_io_or_come_from_a_mirror(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    mirror = tmp_path / "tally"
    commit = make_tally_mirror(mirror)
    clone = make_counts(tmp_path / "counts", commit)
    setup = _setup(tmp_path, clone, REPO, sqlite_url, {TALLY_URL: str(mirror)})
    assert "2 eras for 2 stages: 2 verified (2 by planner), 0 not" in setup, setup
    recipes = recipes_by_pr(sqlite_url)
    first, second = recipes[1], recipes[2]
    assert any(
        "git dependency itoa 1.0.3 from https://github.com/prchain-test/itoa" in n
        and "stands in" in n
        for n in first.notes
    ), first.notes
    assert "crates.io itoa 1.0.3" in first.log and "Compiling itoa v1.0.3" in first.log
    assert any(f"from the mirror {mirror}" in n for n in second.notes), second.notes
    assert f"Compiling prchain-tally v0.1.0 ({TALLY_URL}?rev={commit[:7]}" in second.log

    common = ["--config", str(tmp_path / "prchain.yaml"), "--db", sqlite_url]
    verify = invoke("tests", "verify", "--gold-runs", "1", *common)
    verdicts = verdicts_by_pr(sqlite_url)
    assert "counts/pair::pairs" in verdicts[1].fail_to_pass, verify.output
    assert "counts/total::totals" in verdicts[2].fail_to_pass, verify.output

    _the_agents_cargo_leaves_the_lock_alone(clone, second, tmp_path)


def _the_agents_cargo_leaves_the_lock_alone(clone: Path, recipe: EnvRecipe, tmp: Path) -> None:
    head = invoke_git(clone, "rev-parse", "HEAD")
    stage = StageSpec(1, head, "", recipe.image, recipe.test_command, recipe.setup_command)
    config = EnvironmentConfig(log_dir=str(tmp / "logs"))  # no network: the default
    with DockerEnvironment(config, repo=REPO, clone_path=str(clone), stages=[stage]) as env:
        env.enter_stage(1)
        ran = env.execute("cargo test --no-fail-fast 2>&1", timeout=600)
        assert ran.exit_code == 0, ran.output
        assert "test totals ... ok" in ran.output and "Compiling itoa" not in ran.output
        # tally's build script is never fresh: cargo runs it again, writing its run directory
        # and OUT_DIR, which the image's read-only target could not take (ruff 2023's era
        # failed so on unicode_names2).
        assert "Compiling prchain-tally" in ran.output, ran.output
        assert env.diff() == "", env.diff()


def invoke_git(clone: Path, *args: str) -> str:
    from prchain.dev.repos import git

    return git(clone, *args)


def test_a_git_dependency_no_registry_has_leaves_its_era_unverified_and_says_why(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    clone = make_counts(tmp_path / "counts", make_tally_mirror(tmp_path / "tally"))
    setup = _setup(tmp_path, clone, NO_MIRROR, sqlite_url, {})
    assert "2 eras for 2 stages: 1 verified (1 by planner), 1 not" in setup, setup
    second = recipes_by_pr(sqlite_url)[2]
    assert second.status != "verified"
    assert any("prchain-tally 0.1.0 from " + TALLY_URL in n for n in second.notes), second.notes
    assert "error: git dependency prchain-tally 0.1.0" in (second.root_error or ""), (
        second.root_error
    )
    assert "has no crates.io release" in (second.root_error or "")
