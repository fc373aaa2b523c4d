"""Acceptance: Rust era environments on a made-up history spanning two dependency eras.

The `digits` crate (tests/support/rust_repo.py) pins itoa 0.4.8 in its first era and 1.0.3 in its
second, whose code no longer compiles against 0.4. `prchain env setup` builds bookworm's rustc 1.63
once (its toolchain layer shared by both eras), vendors each era's crates from crates.io and
prebuilds them; both eras verify. `prchain tests verify` then runs `cargo test`, offline, as the
agent in each stage's sandbox and finds each PR's integration test FAIL_TO_PASS.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from sqlalchemy import select

from prchain.cli import main
from sql.db import make_engine, session_scope
from sql.models import ChainStage, EnvRecipe, PullRequest, StageEra, StageVerification
from tests.support.rust_repo import make_digits

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = f"rust-eras-test-{uuid.uuid4().hex[:8]}/digits"


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built (labelled with its made-up repo)."""
    yield
    for kind in ("repo", "era"):
        for image in docker_client.images({"prchain.repo": REPO, "prchain.kind": kind}):
            for tag in image["tags"]:
                docker_client.remove_image(tag)


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "prchain.yaml"
    settings = {
        "eras": {"suites": {"bookworm": "3.11"}, "extra_base_packages": []},
        "environment": {"log_dir": str(tmp_path / "logs")},
        "chains": {"min_chain_code_lines": 0},
    }
    config.write_text(yaml.safe_dump(settings))
    return config


def _rows(url: str) -> tuple[dict[int, EnvRecipe], dict[int, StageVerification]]:
    with session_scope(make_engine(url)) as session:
        recipes = session.execute(
            select(PullRequest.number, EnvRecipe)
            .join(ChainStage, ChainStage.pr_id == PullRequest.id)
            .join(StageEra, StageEra.chain_stage_id == ChainStage.id)
            .join(EnvRecipe, EnvRecipe.era_key == StageEra.era_key)
        ).all()
        verdicts = session.execute(
            select(PullRequest.number, StageVerification)
            .join(ChainStage, ChainStage.id == StageVerification.chain_stage_id)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
        ).all()
        session.expunge_all()
    return dict(recipes), dict(verdicts)


def test_each_rust_era_builds_verifies_and_finds_its_fail_to_pass(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    clone = make_digits(tmp_path / "digits")
    common = ["--config", str(_config(tmp_path)), "--db", sqlite_url]
    assert _invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = _invoke(
        "chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common
    )
    assert built.exit_code == 0, built.output

    setup = _invoke("env", "setup", *common)
    assert "2 eras for 2 stages: 2 verified (2 by planner), 0 not" in setup.output, setup.output
    recipes, _ = _rows(sqlite_url)
    assert [recipes[n].status for n in (1, 2)] == ["verified", "verified"]
    assert "Compiling itoa v0.4.8" in recipes[1].log and "Compiling itoa v1.0.3" in recipes[2].log
    assert recipes[1].ecosystem == "rust" and "rustc 1.63" in recipes[1].notes[0]

    verify = _invoke("tests", "verify", "--gold-runs", "1", *common)
    _, verdicts = _rows(sqlite_url)
    assert "digits/pair::pairs" in verdicts[1].fail_to_pass, verify.output
    assert "digits/padded::pads" in verdicts[2].fail_to_pass, verify.output
