"""Acceptance: Rust era environments on a made-up history spanning two dependency eras.

The `digits` crate (tests/support/rust_repo.py) pins itoa 0.4.8 in its first era and 1.0.3 in its
second, whose code no longer compiles against 0.4. `prchain env setup` builds bookworm's rustc 1.63
once (its toolchain layer shared by both eras), vendors each era's crates from crates.io and
prebuilds them, the second era in a thin layer on the first's verified image; both eras verify. `prchain tests verify` then runs `cargo test`, offline, as the
agent in each stage's sandbox and finds each PR's integration test FAIL_TO_PASS. Last, an agent
on a chain crossing the eras (PR #1's stage, then PR #2's) writes a module in the first, runs cargo
there and, its change carried into the second era's container, again there: offline, and only the
crate itself compiles (its dependency was built into the image).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_env import DockerEnvironment
from prchain.store.models import EnvRecipe
from tests.support.era_runs import (
    invoke,
    recipes_by_pr,
    remove_repo_images,
    stage_specs,
    verdicts_by_pr,
    write_config,
)
from tests.support.rust_repo import make_digits

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = f"rust-eras-test-{uuid.uuid4().hex[:8]}/digits"
# The agent's own solution of PR #1's task (render_pair), in a module of its own, and more.
TWICE = (
    'pub fn render_pair(a: u64, b: u64) -> String {\n    format!("{}:{}", crate::render(a), '
    'crate::render(b))\n}\n\npub fn twice(n: u64) -> String {\n    format!("{0}{0}", crate::render(n))\n}\n'
)
TWICE_TEST = '#[test]\nfn twice() {\n    assert_eq!(digits::twice::twice(4), "44");\n}\n'


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built (labelled with its made-up repo)
    and its repository's build-cache volume."""
    yield
    remove_repo_images(docker_client, REPO, ("repo", "era", "sandbox"))


def _config(tmp_path: Path) -> Path:
    return write_config(tmp_path, {"suites": {"bookworm": "3.11"}, "extra_base_packages": []})


def test_each_rust_era_builds_verifies_and_finds_its_fail_to_pass(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str, docker_client: Any
) -> None:
    clone = make_digits(tmp_path / "digits")
    common = ["--config", str(_config(tmp_path)), "--db", sqlite_url]
    assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = invoke(
        "chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common
    )
    assert built.exit_code == 0, built.output

    setup = invoke("env", "setup", *common)
    assert "2 eras for 2 stages: 2 verified (2 by planner), 0 not" in setup.output, setup.output
    recipes = recipes_by_pr(sqlite_url)
    assert [recipes[n].status for n in (1, 2)] == ["verified", "verified"]
    assert "Compiling itoa v0.4.8" in recipes[1].log and "Compiling itoa v1.0.3" in recipes[2].log
    assert recipes[1].ecosystem == "rust" and "rustc 1.63" in recipes[1].notes[0]
    # The second era could grow on the first's verified image, but its one locked crate changed,
    # so a thin layer would build everything again: it is built from the toolchain layer, and its
    # recipe says why (growth.py; the thin build itself: tests/environments/eras/test_rust_grown_layer.py)
    assert "grew_from" not in recipes[2].verification, recipes[2].notes
    assert (
        f"not grown on era {recipes[1].era_key} (2022-08-15): 1 of its 1 locked packages would "
        "build again (100%; a thin layer pays up to 50%)" in " ".join(recipes[2].notes)
    ), recipes[2].notes
    full = docker_client.image_info(recipes[2].image)
    assert full.parent != docker_client.image_id(recipes[1].image)

    verify = invoke("tests", "verify", "--gold-runs", "1", *common)
    verdicts = verdicts_by_pr(sqlite_url)
    assert "digits/pair::pairs" in verdicts[1].fail_to_pass, verify.output
    assert "digits/padded::pads" in verdicts[2].fail_to_pass, verify.output

    _an_agent_carries_its_change_across_the_eras(clone, recipes, sqlite_url, tmp_path)


def _an_agent_carries_its_change_across_the_eras(
    clone: Path, recipes: dict[int, EnvRecipe], url: str, tmp_path: Path
) -> None:
    stages = stage_specs(url, recipes)
    assert stages[0].image != stages[1].image
    config = EnvironmentConfig(log_dir=str(tmp_path / "logs"))  # no network: the default
    with DockerEnvironment(config, repo=REPO, clone_path=str(clone), stages=stages) as env:
        env.enter_stage(1)
        lib = env.read_file("src/lib.rs")
        env.write_file("src/lib.rs", lib + "\npub mod twice;\npub use twice::render_pair;\n")
        env.write_file("src/twice.rs", TWICE)
        env.write_file("tests/twice.rs", TWICE_TEST)
        first = env.execute("cargo test --no-fail-fast 2>&1", timeout=600)
        assert first.exit_code == 0, first.output
        assert "test twice ... ok" in first.output and "Compiling itoa" not in first.output

        moved = env.enter_stage(2)
        # PR #1's gold code is reverted, the agent's change applied in its place.
        assert moved.applied and moved.reverted == [1] and moved.setup_error == "", moved
        again = env.execute("cargo test --no-fail-fast 2>&1", timeout=600)
        assert again.exit_code == 0, again.output
        assert "test twice ... ok" in again.output and "test pairs ... ok" in again.output
        assert "Compiling digits" in again.output and "Compiling itoa" not in again.output
        # A dependency cargo finds stale (ruff's image lacked serde's .rmeta) is rebuilt in the
        # live target, under its own name, not refused for the image's files behind the links.
        stale = env.execute("rm /tmp/cargo-target/debug/deps/libitoa-*.rmeta && cargo test 2>&1")
        assert stale.exit_code == 0 and "Compiling itoa" in stale.output, stale.output
