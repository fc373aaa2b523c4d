"""Acceptance: a Go monorepo of nested modules (cloudquery's layout: a root module without tests,
plugins that are modules of their own) gets an era per module its stages' tests are in.

`tests/support/go_proxy.py: make_go_monorepo`: PR #1 adds a test to `plugins/a` (which requires
tinylib from the local proxy), PR #2 one to `plugins/b`, in one half-year. Each stage's era is the
module owning its test files: its dependencies in the image, its suite run from the module's own
directory (`prchain-in-modules go test ./plugins/a/...`). Era b is not verified by era a's image
(memory), whose suite is another module's. Then the agent runs the tests both ways in its offline
sandbox and leaves nothing in the tree.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from prchain.agent.tasks import ChainTask, StageTask
from prchain.app.envsetup import era_stages
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_env import DockerEnvironment
from prchain.store.db import session_scope
from prchain.store.models import ChainStage, PullRequest
from prchain.store.opener import make_engine
from tests.support.era_runs import (
    invoke,
    recipes_by_pr,
    remove_repo_images,
    verdicts_by_pr,
    write_config,
)
from tests.support.go_proxy import GoProxy, make_go_monorepo, tinylib_proxy

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = f"go-mono-test-{uuid.uuid4().hex[:8]}/mono"  # per session: its images are its own
MONO = "example.com/mono/plugins"


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GoProxy, dict[str, str]]]:
    root = tmp_path_factory.mktemp("goproxy")
    sums = tinylib_proxy(root)
    with GoProxy(root) as served:
        yield served, sums


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    yield
    remove_repo_images(docker_client, REPO)


def test_each_stage_gets_the_era_of_the_nested_module_its_tests_are_in(
    tmp_path: Path,
    proxy: tuple[GoProxy, dict[str, str]],
    own_images: None,
    base_image: str,
    docker_client: Any,
    sqlite_url: str,
) -> None:
    served, sums = proxy
    clone = make_go_monorepo(tmp_path / "mono", sums)
    config = write_config(
        tmp_path,
        {
            "go_proxy": f"{served.url},https://proxy.golang.org",
            "network_mode": "host",
            "suites": {"bookworm": "3.11"},
            "extra_base_packages": [],
        },
    )
    common = ["--config", str(config), "--db", sqlite_url]
    assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = invoke("chains", "build", "--strategy", "single", "--min-len", "1", *common)
    assert built.exit_code == 0, built.output

    setup = invoke("env", "setup", *common)
    assert "2 eras for 2 stages: 2 verified (2 by planner)" in setup.output, setup.output
    recipes = recipes_by_pr(sqlite_url)
    assert recipes[1].test_command == "prchain-in-modules go test ./plugins/a/..."
    assert recipes[2].test_command == "prchain-in-modules go test ./plugins/b/..."
    assert recipes[1].verification["passed"] == 1 and recipes[2].verification["passed"] == 1

    verify = invoke("tests", "verify", "--gold-runs", "1", *common)
    assert verify.exit_code == 0, verify.output
    found = {
        n: (sorted(v.fail_to_pass), sorted(v.pass_to_pass))
        for n, v in verdicts_by_pr(sqlite_url).items()
    }
    assert found == {
        1: ([f"{MONO}/a::TestFarewell"], [f"{MONO}/a::TestWelcome"]),
        2: ([f"{MONO}/b::TestThrice"], [f"{MONO}/b::TestTwice"]),
    }, verify.output

    with session_scope(make_engine(sqlite_url)) as session:
        row = session.execute(
            select(ChainStage)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .where(PullRequest.number == 1)
        ).scalar_one()
        session.expunge(row)
    stage = StageTask(row.idx, 1, row.base_sha or "", row.gold_patch, "", row.id)
    task = ChainTask(row.chain_id, REPO, str(clone), "one stage", [stage])
    env_config, specs = era_stages(
        EnvironmentConfig(log_dir=str(tmp_path / "logs")), make_engine(sqlite_url), task
    )
    with DockerEnvironment(
        env_config, repo=REPO, clone_path=str(clone), stages=specs, client=docker_client
    ) as env:
        env.enter_stage(1)
        root = env.execute("prchain-in-modules go test -v ./plugins/a/... 2>&1")
        assert root.exit_code == 0 and "--- PASS: TestWelcome" in root.output, root.output
        inside = env.execute("cd plugins/a && go test ./... 2>&1")
        assert inside.exit_code == 0 and f"ok  \t{MONO}/a" in inside.output, inside.output
        assert env.execute("git status --porcelain").output.strip() == ""
