"""Through a local Ray instance: rollouts with real containers and a PostgreSQL store give the same
rows as a local run even when a worker is killed mid-stage; mining and queries run one task each.

Kept lean (one Ray instance for the module): the machine has two cores shared with other runs.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import func, select

from prchain.app.rollout import rollout_from_config
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import ChainRepo, make_chain_repo
from prchain.llm.config import LLMConfig
from prchain.scale.ray_backend import node_label
from prchain.store.db import session_scope
from prchain.store.models import Chain, ChainStage, Repo
from prchain.store.opener import make_engine
from tests.scale.conftest import (
    Gate,
    assert_each_chain_once,
    chain_containers,
    demo_config,
    differences,
    orphans_cleaned,
    patiently,
    script_demo,
    seed_demo_chains,
    snapshot,
)

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.docker, pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One local Ray instance for this module's tests (starting one costs tens of seconds here)."""
    patiently(
        lambda: ray.init(
            address="local",  # never another instance running on this machine
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            resources={"docker_slots": 2},
        )
    )
    yield
    ray.shutdown()


def _kill_owner_when_held(gate: Gate, url: str, tag_chain: int, killed: list[int]) -> None:
    """Once the chain is held in stage 2: SIGKILL the Ray worker that owns its sandbox."""
    gate.wait_all()
    owners = {
        int(c["labels"]["prchain.owner_pid"])
        for c in chain_containers(url)
        if c["labels"].get("prchain.chain") == str(tag_chain)
    }
    assert len(owners) == 1, owners
    killed.append(owners.pop())
    os.kill(killed[-1], signal.SIGKILL)
    gate.release()


def test_ray_rollout_equals_a_local_run_even_when_a_worker_is_killed(
    local_ray: None,
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    calc_image: Any,
    calc_repo: ChainRepo,
    make_store: Callable[[], str],
) -> None:
    script_demo(fake_llm)
    local_url = make_store()
    seed_demo_chains(local_url, calc_repo)
    local = rollout_from_config(demo_config(local_url, llm_config))

    fake_llm.reset()
    gate = Gate({"alpha"})
    script_demo(fake_llm, gate)
    ray_url = make_store()
    ids = seed_demo_chains(ray_url, calc_repo)
    killed: list[int] = []
    killer = threading.Thread(
        target=_kill_owner_when_held, args=(gate, ray_url, ids["alpha"], killed), daemon=True
    )
    killer.start()
    spread = rollout_from_config(demo_config(ray_url, llm_config, backend="ray"))
    killer.join(timeout=5)

    assert killed, "the worker holding chain alpha was never killed"
    assert [r.status for r in spread] == [r.status for r in local] == ["kept", "kept"]
    here = node_label(ray.get_runtime_context().get_node_id())
    assert {r.node for r in spread} == {here}
    shot = snapshot(ray_url)
    assert_each_chain_once(shot)
    # the resumed chain's rows match an uninterrupted run's
    assert differences(shot, snapshot(local_url)) == []
    orphans_cleaned(ray_url, {str(killed[0])})


def test_mine_and_queries_run_one_ray_task_each_on_a_local_sqlite_store(
    local_ray: None, fake_llm: ScriptedLLMServer, llm_config: LLMConfig, tmp_path: Path
) -> None:
    repos = []
    for name in ("calc", "abacus"):
        repo = make_chain_repo(tmp_path / name, remote=f"https://github.com/acme/{name}.git")
        repos.append(str(repo.path))
    (tmp_path / "repos.txt").write_text("\n".join(repos) + "\n")
    config = tmp_path / "prchain.yaml"
    # The demo chains change a few lines each: below the substance rule made for real histories.
    settings = {"llm": llm_config.model_dump(mode="json"), "chains": {"min_chain_code_lines": 0}}
    config.write_text(yaml.safe_dump(settings))
    fake_llm.push(
        model="query_constructor", content="Extend the calculator's operations.", times=None
    )
    fake_llm.push(model="overview", content="The calculator grows.", times=None)
    common = ["--config", str(config), "--db", f"sqlite:///{tmp_path / 'p.db'}", "--backend", "ray"]
    cli = CliRunner()

    mined = cli.invoke(
        main, ["mine", "--source", "git", "--repos-file", str(tmp_path / "repos.txt"), *common]
    )
    assert mined.exit_code == 0, mined.output
    assert "allowed because every ray node runs on this machine" in mined.output
    assert "acme/calc" in mined.output and "acme/abacus" in mined.output
    assert cli.invoke(main, ["chains", "build", *common[:-2]]).exit_code == 0
    built = cli.invoke(main, ["queries", "build", *common])
    assert built.exit_code == 0, built.output
    engine = make_engine(f"sqlite:///{tmp_path / 'p.db'}")
    with session_scope(engine) as session:
        chains = session.scalar(select(func.count()).select_from(Chain))
        missing = session.scalar(select(func.count()).where(ChainStage.query.is_(None)))
        repos_mined = session.scalar(select(func.count()).select_from(Repo))
    engine.dispose()
    assert repos_mined == 2 and chains and missing == 0
    calls = len(fake_llm.requests)
    again = cli.invoke(main, ["queries", "build", *common])  # nothing pending: no task, no call
    assert again.exit_code == 0, again.output
    assert len(fake_llm.requests) == calls
