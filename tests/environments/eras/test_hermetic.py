"""Acceptance: era environments from a local index, on a made-up history spanning three eras.

The index on 127.0.0.1 serves `tinylib` 1.0 (uploaded mid-2020, `greet`) and 2.0 (mid-2022: `greet`
removed, `hello` added). The repository asks for plain `tinylib` throughout; only the dates differ:
  era 1 (2021): code calls greet → the planner must pick 1.0;   PR #1 adds `farewell` + a test;
  era 2 (2023): code calls hello → the planner must pick 2.0;   PR #2 adds `shout` + a test;
  era 3 (2024): requires tinylib>=3, which no index has → unverified, said in one line.
`prchain env setup` then `prchain tests verify` as a user runs them; FAIL_TO_PASS in eras 1 and 2.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from prchain.store.db import session_scope
from prchain.store.models import ChainStage, PullRequest
from prchain.store.opener import make_engine
from tests.support.era_runs import (
    invoke,
    offline_eras,
    recipes_by_pr,
    remove_repo_images,
    verdicts_by_pr,
    write_config,
)
from tests.support.eras_repo import make_greeter, tinylib_releases
from tests.support.fake_index import FakeIndex

pytestmark = [pytest.mark.docker, pytest.mark.slow]
# Unique per session: the tag of an era image is a hash of its inputs, so two sessions on one engine
# (two helpers, a rerun) would otherwise share, and remove, each other's images.
REPO = f"eras-test-{uuid.uuid4().hex[:8]}/greeter"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeIndex]:
    with FakeIndex(tinylib_releases(tmp_path_factory.mktemp("wheels"))) as served:
        yield served


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built (labelled with its made-up repo)."""
    yield
    remove_repo_images(docker_client, REPO)


def _config(tmp_path: Path, index: FakeIndex) -> Path:
    return write_config(
        tmp_path,
        offline_eras(index.url),
    )


def test_each_era_gets_the_packages_of_its_date(
    tmp_path: Path, index: FakeIndex, own_images: None, base_image: str, sqlite_url: str
) -> None:
    clone = make_greeter(tmp_path / "greeter")
    common = ["--config", str(_config(tmp_path, index)), "--db", sqlite_url]
    assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = invoke(
        "chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common
    )
    assert built.exit_code == 0, built.output

    setup = invoke("env", "setup", *common)
    assert setup.exit_code == 1, setup.output  # era 3 cannot be made: the user must act
    assert "3 eras for 3 stages: 2 verified (2 by planner), 1 not" in setup.output
    recipes = recipes_by_pr(sqlite_url)
    assert [recipes[n].status for n in (1, 2, 3)] == ["verified", "verified", "unverified"]
    assert recipes[1].verification["passed"] == 1 and recipes[2].verification["passed"] == 2
    assert "tinylib==1.0" in recipes[1].log and "tinylib==2.0" in recipes[2].log
    assert (
        recipes[3].root_error.startswith("build failed:") and "tinylib>=3" in recipes[3].root_error
    )
    assert "\n" not in recipes[3].root_error

    again = invoke("env", "setup", *common)  # resumable: nothing is built or run twice
    assert "3 eras for 3 stages: 2 verified (2 by planner), 1 not" in again.output
    assert "building" not in again.output

    verify = invoke("tests", "verify", "--gold-runs", "1", *common)
    verdicts = verdicts_by_pr(sqlite_url)
    assert verdicts[1].fail_to_pass == ["tests/test_farewell.py::test_farewell"], verify.output
    assert verdicts[2].fail_to_pass == ["tests/test_shout.py::test_shout"], verify.output

    with session_scope(make_engine(sqlite_url)) as session:
        chain = session.scalar(
            select(ChainStage.chain_id)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .where(PullRequest.number == 2)
        )
    shown = invoke("tests", "show", f"{chain}:1", *common).output
    assert f"era image: prchain/era-{REPO.replace('/', '-')}:" in shown
    assert "tests/test_shout.py::test_shout" in shown and "F2P" in shown
    assert "gold   1 passed, 0 failed, 0 errors, 0 skipped, 0 collection errors" in shown
