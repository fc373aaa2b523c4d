"""Rollouts through Ray with real containers and a PostgreSQL store: the same rows as a local run,
and every chain exactly once when a worker is killed or a node is removed in the middle of a stage.

Kept to two tests: each starts Ray (a local instance, then a simulated two-node cluster).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from environments import cleanup
from environments.docker_client import DockerClient
from prchain.app.rollout import rollout_from_config, store_label
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import ChainRepo
from prchain.llm.config import LLMConfig
from prchain.scale.ray_backend import node_label
from tests.scale.conftest import (
    Gate,
    assert_each_chain_once,
    chain_containers,
    demo_config,
    differences,
    script_demo,
    seed_demo_chains,
    snapshot,
)

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.docker, pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # a throwaway local cluster needs no token


def _patiently(start: Callable[[], Any], attempts: int = 3) -> Any:
    """Ray gives a starting node 30 s to register (fixed in its code). On a machine whose two cores
    are shared with other test runs that is sometimes too short, so try again after a clean stop."""
    for attempt in range(1, attempts + 1):
        try:
            return start()
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception on this timeout
            ray.shutdown()
            if attempt == attempts or "timed out during startup" not in str(exc):
                raise


@pytest.fixture
def local_ray() -> Iterator[None]:
    _patiently(
        lambda: ray.init(
            num_cpus=2, include_dashboard=False, log_to_driver=False, resources={"docker_slots": 2}
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
    _orphans_cleaned(ray_url, {str(killed[0])})


def _orphans_cleaned(url: str, dead_owners: set[str]) -> None:
    """What a lost worker leaves behind is only its own sandbox, and `prchain env gc` removes it.
    (Another run's unscoped `prchain env gc` on this shared engine may have removed it first.)"""
    left = chain_containers(url)
    assert {c["labels"]["prchain.owner_pid"] for c in left} <= dead_owners, left
    for container in left:
        assert not cleanup.owner_alive(container["labels"]), container
    cleanup.gc(DockerClient(), labels={"prchain.store": store_label(url)})
    assert chain_containers(url) == []


def test_two_node_cluster_losing_a_node_still_rolls_out_every_chain_once(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    calc_image: Any,
    calc_repo: ChainRepo,
    make_store: Callable[[], str],
) -> None:
    from ray.cluster_utils import Cluster

    cluster = _patiently(
        lambda: Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 1, "resources": {"docker_slots": 1}},
        )
    )
    worker = _patiently(lambda: cluster.add_node(num_cpus=1, resources={"docker_slots": 1}))
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    try:
        cluster.wait_for_nodes()
        gate = Gate({"alpha", "beta"})  # one slot per node: one chain held on each
        script_demo(fake_llm, gate)
        url = make_store()
        seed_demo_chains(url, calc_repo)

        lost_owners: set[str] = set()

        def remove_worker_node() -> None:
            gate.wait_all()
            held = {c["labels"]["prchain.owner_pid"] for c in chain_containers(url)}
            cluster.remove_node(worker, allow_graceful=False)
            lost_owners.update(held)  # whichever of the two held workers died with its node
            gate.release()

        remover = threading.Thread(target=remove_worker_node, daemon=True)
        remover.start()
        results = rollout_from_config(demo_config(url, llm_config, backend="ray"))
        remover.join(timeout=5)
        head = node_label(ray.get_runtime_context().get_node_id())
    finally:
        ray.shutdown()
        cluster.shutdown()

    assert [r.status for r in results] == ["kept", "kept"]
    assert {r.node for r in results} == {head}  # the lost node's chain was rerun on the head
    assert_each_chain_once(snapshot(url))
    _orphans_cleaned(url, lost_owners)
