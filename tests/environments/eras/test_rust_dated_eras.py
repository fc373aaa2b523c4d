"""Acceptance: a Rust crate of 2019 with no Cargo.lock gets the dependencies of its date.

`stamp` asks for `itoa = "*"` and calls `itoa::fmt`, which itoa 0.4 has and 1.0 (December 2021)
dropped for `itoa::Buffer`. The newest itoa that fits the toolchain is a 1.0 release, so a resolve
to the newest fails to compile (error[E0425]); the era's build resolves against crates.io's index
as of B_t's date (rust/dated.py served in the build container), takes itoa 0.4.4 (May 2019), and
verifies. One era on bookworm's rustc 1.63, the toolchain layer test_rust_eras builds too.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.repos import git
from tests.support.era_runs import invoke, recipes_by_pr, remove_repo_images, write_config
from tests.support.eras_repo import commit_files

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = f"rust-dated-test-{uuid.uuid4().hex[:8]}/stamp"
MANIFEST = (
    '[package]\nname = "stamp"\nversion = "0.1.0"\nedition = "2018"\n\n[dependencies]\nitoa = "*"\n'
)
RENDER = (
    "pub fn render(n: u64) -> String {\n    let mut s = String::new();\n"
    "    itoa::fmt(&mut s, n).unwrap();\n    s\n}\n"
    "\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn renders() {\n"
    '        assert_eq!(super::render(42), "42");\n    }\n}\n'
)
STAMPED = '\npub fn stamped(n: u64) -> String {\n    format!("#{}", render(n))\n}\n'
STAMPED_TEST = (
    'use stamp::stamped;\n\n#[test]\nfn stamps() {\n    assert_eq!(stamped(42), "#42");\n}\n'
)


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built and its build-cache volume."""
    yield
    remove_repo_images(docker_client, REPO, ("repo", "era", "sandbox"))


def _make_stamp(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    files = {"Cargo.toml": MANIFEST, ".gitignore": "/target\nCargo.lock\n", "src/lib.rs": RENDER}
    commit_files(path, files, "Start stamp", "2019-06-10T12:00:00Z")
    commit_files(
        path,
        {"src/lib.rs": RENDER + STAMPED, "tests/stamped.rs": STAMPED_TEST},
        "Stamp numbers (#1)\n\nA hash before each.",
        "2019-06-12T12:00:00Z",
    )
    return path


def test_a_crate_without_a_lock_gets_the_releases_of_its_date_and_verifies(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    clone = _make_stamp(tmp_path / "stamp")
    config = write_config(tmp_path, {"suites": {"bookworm": "3.11"}, "extra_base_packages": []})
    common = ["--config", str(config), "--db", sqlite_url]
    assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = invoke(
        "chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common
    )
    assert built.exit_code == 0, built.output

    setup = invoke("env", "setup", *common)
    assert "1 eras for 1 stages: 1 verified (1 by planner), 0 not" in setup.output, setup.output
    recipe = recipes_by_pr(sqlite_url)[1]
    assert recipe.status == "verified" and "rustc 1.63" in recipe.notes[0]
    assert recipe.notes[1] == (
        "no Cargo.lock: dependencies as of 2019-06-10T12:00:00Z (crates.io's index without the "
        "releases published after it)"
    ), recipe.notes
    assert "Compiling itoa v0.4.4" in recipe.log, recipe.log[-3000:]
