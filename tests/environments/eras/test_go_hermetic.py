"""Acceptance: Go era environments on a made-up history spanning two dependency eras.

A Go proxy on 127.0.0.1 serves `example.com/tinylib` v0.1.0 (`Greet`) and v0.2.0 (`Hello` instead);
Go's toolchain module (go1.22.0, both eras' go line) comes from the real proxy behind it. The
greeter's era 1 (June 2023) requires v0.1.0, its era 2 (July 2023) v0.2.0; PR #2 follows up on PR #1, so
one chain crosses the eras. `prchain env setup` and
`prchain tests verify` run as a user runs them; then the chain is walked in its offline sandbox
the way a rollout does: the agent's change made in era 1 is there in era 2, and `go test` runs
in both from the image's module and build caches.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from prchain.agent.tasks import ChainTask, StageTask
from prchain.app.envsetup import era_stages
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_env import DockerEnvironment
from prchain.llm.config import LLMConfig
from prchain.store.db import session_scope
from prchain.store.models import ChainStage, EnvRecipe, PullRequest, StageEra, StageVerification
from prchain.store.opener import make_engine
from tests.support.era_runs import (
    gold_resolves_in_tasks_eval,
    gold_rollout,
    invoke,
    remove_repo_images,
    write_config,
)
from tests.support.go_proxy import GoProxy, make_go_greeter, tinylib_proxy

# Two Go era builds, a verify, a sandbox walk, an eval and a rollout: minutes on a loaded machine.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]
REPO = f"go-eras-test-{uuid.uuid4().hex[:8]}/greeter"  # per session: its images are its own
GREETER = "example.com/greeter"
# The agent's stage-1 work: Farewell in a file of its own, and a test that holds in both eras.
FAREWELL = 'package greeter\n\n// Farewell says goodbye.\nfunc Farewell(n string) string { return Welcome(n) + ", bye" }\n'
AGENT_TEST = (
    'package greeter\n\nimport (\n\t"strings"\n\t"testing"\n)\n\n'
    'func TestBye(t *testing.T) {\n\tif !strings.HasSuffix(Farewell("a"), ", bye") {\n'
    '\t\tt.Fatal("no")\n\t}\n}\n'
)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GoProxy, dict[str, str]]]:
    root = tmp_path_factory.mktemp("goproxy")
    sums = tinylib_proxy(root)
    with GoProxy(root) as served:
        yield served, sums


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built (labelled with its made-up repo);
    the toolchain layer is shared by design and stays."""
    yield
    remove_repo_images(docker_client, REPO)


def _config(tmp_path: Path, proxy: GoProxy) -> Path:
    return write_config(
        tmp_path,
        {
            "go_proxy": f"{proxy.url},https://proxy.golang.org",
            "network_mode": "host",  # the build reaches the proxy on 127.0.0.1
            "suites": {"bookworm": "3.11"},  # the suite base CI already has
            "extra_base_packages": [],
        },
    )


def _stages(url: str) -> list[tuple[ChainStage, int, EnvRecipe, StageVerification | None]]:
    with session_scope(make_engine(url)) as session:
        rows = session.execute(
            select(ChainStage, PullRequest.number, EnvRecipe, StageVerification)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .join(StageEra, StageEra.chain_stage_id == ChainStage.id)
            .join(EnvRecipe, EnvRecipe.era_key == StageEra.era_key)
            .outerjoin(StageVerification, StageVerification.chain_stage_id == ChainStage.id)
            .order_by(ChainStage.idx)
        ).all()
        session.expunge_all()
    return [tuple(row) for row in rows]  # type: ignore[misc]


@dataclass
class Greeter:
    """The chain #1 → #2 mined, built, its two eras set up and its tests verified (once)."""

    clone: Path
    work: Path
    common: list[str]
    url: str
    setup: str
    verify: str


@pytest.fixture(scope="module")
def greeter(
    tmp_path_factory: pytest.TempPathFactory,
    proxy: tuple[GoProxy, dict[str, str]],
    own_images: None,
    base_image: str,
) -> Greeter:
    served, sums = proxy
    work = tmp_path_factory.mktemp("go-eras")
    clone = make_go_greeter(work / "greeter", sums)
    url = f"sqlite:///{work / 'prchain.db'}"
    common = ["--config", str(_config(work, served)), "--db", url]
    assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = invoke("chains", "build", "--min-len", "2", *common)
    assert built.exit_code == 0, built.output
    setup = invoke("env", "setup", *common)
    verify = invoke("tests", "verify", "--gold-runs", "1", *common)
    assert verify.exit_code == 0, verify.output
    return Greeter(clone, work, common, url, setup.output, verify.output)


def test_two_go_eras_verify_and_a_chain_carries_the_agent_across_them(
    greeter: Greeter, docker_client: Any
) -> None:
    clone, tmp_path, sqlite_url, common = greeter.clone, greeter.work, greeter.url, greeter.common
    setup_output, verify_output = greeter.setup, greeter.verify
    assert "2 eras for 2 stages: 2 verified (2 by planner)" in setup_output, setup_output
    stages = _stages(sqlite_url)
    assert [number for _, number, _, _ in stages] == [1, 2]
    recipes = [recipe for _, _, recipe, _ in stages]
    assert recipes[0].era_key != recipes[1].era_key and recipes[0].image != recipes[1].image
    assert all(r.interpreter == "go1.22.0" and r.ecosystem == "go" for r in recipes)
    # Each PR's new test calls a function only its gold code adds, so with the test patch alone
    # the package does not build. Only that new test is FAIL_TO_PASS: the package's other tests
    # passed at the start and the test patch does not touch them (prchain/verdicts/touched.py).
    found = [(sorted(v.fail_to_pass), sorted(v.pass_to_pass)) for *_, v in stages if v]
    assert found == [
        ([f"{GREETER}::TestFarewell"], [f"{GREETER}::TestWelcome"]),
        ([f"{GREETER}::TestShout"], [f"{GREETER}::TestFarewell", f"{GREETER}::TestWelcome"]),
    ], verify_output
    shown = invoke("tests", "show", f"{stages[1][0].chain_id}:2", *common).output
    assert f"{GREETER}::TestShout" in shown and "F2P" in shown, shown
    why = f"{GREETER}::TestWelcome: passed at the start; the test patch does not touch it"
    assert why in shown and f"{GREETER}::TestShout: new" in shown, shown

    task = ChainTask(
        stages[0][0].chain_id,
        REPO,
        str(clone),
        "two stages",
        [StageTask(s.idx, n, s.base_sha or "", s.gold_patch, "", s.id) for s, n, _, _ in stages],
    )
    config, specs = era_stages(
        EnvironmentConfig(log_dir=str(tmp_path / "logs")), make_engine(sqlite_url), task
    )
    assert specs[0].image != specs[1].image and specs[0].test_command == "go test ./..."
    with DockerEnvironment(
        config, repo=REPO, clone_path=str(clone), stages=specs, client=docker_client
    ) as env:
        env.enter_stage(1)
        env.write_file("farewell.go", FAREWELL)
        env.write_file("bye_test.go", AGENT_TEST)
        first = env.execute("go test -v ./... 2>&1")
        assert first.exit_code == 0 and "--- PASS: TestBye" in first.output, first.output
        assert "v0.1.0" in env.execute("go list -m example.com/tinylib").output
        # the build cache is the agent's to add to, whatever the sandbox's disk mode
        env.execute("go test ./...")
        again = env.execute("go test ./... 2>&1")
        assert again.exit_code == 0 and "(cached)" in again.output, again.output
        # offline: the image's caches, nothing fetched (a module not in them cannot be had)
        fetch = env.execute("go mod download golang.org/x/text@v0.3.0 2>&1")
        assert fetch.exit_code != 0 and "GOPROXY=off" in fetch.output, fetch.output
        env.enter_stage(2)
        assert env.read_file("farewell.go") == FAREWELL  # the agent's change crossed into era 2
        second = env.execute("go test -v ./... 2>&1")  # era 2's tests, PR #1's among them
        assert second.exit_code == 0, second.output
        for test in ("TestBye", "TestWelcome", "TestFarewell"):
            assert f"--- PASS: {test}" in second.output, second.output
        assert "v0.2.0" in env.execute("go list -m example.com/tinylib").output


def test_the_gold_patches_resolve_in_tasks_eval_and_in_a_rollouts_clean_room(
    greeter: Greeter, fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    """Gold before attack: the Go room's verdicts (test2json, the witness) are trusted only if
    the real change passes them, on the file alone (`tasks eval`) and in a rollout."""
    out = gold_resolves_in_tasks_eval(greeter.common, greeter.work)
    assert "2 of 2 stages resolved; 1 of 1 chain resolved throughout" in out, out
    stages = gold_rollout(greeter.common, greeter.url, llm_config, fake_llm)
    assert stages == [(1, True, []), (2, True, [])], stages
