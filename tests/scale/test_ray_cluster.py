"""A simulated two-node Ray cluster (`ray.cluster_utils.Cluster`) loses a node in the middle of a
stage: the chain it held is rerun on the other node, resumes (or finds it finished), and every chain
is rolled out once, reported with its real final state."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from prchain.app.rollout import rollout_from_config
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import ChainRepo
from prchain.llm.config import LLMConfig
from prchain.scale.ray_backend import node_label
from tests.scale.conftest import (
    Gate,
    assert_each_chain_once,
    chain_containers,
    demo_config,
    orphans_cleaned,
    patiently,
    script_demo,
    seed_demo_chains,
    snapshot,
)

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.docker, pytest.mark.postgres, pytest.mark.slow]


def test_two_node_cluster_losing_a_node_still_rolls_out_every_chain_once(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    calc_image: Any,
    calc_repo: ChainRepo,
    make_store: Callable[[], str],
) -> None:
    from ray.cluster_utils import Cluster

    cluster = patiently(
        lambda: Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 1, "resources": {"docker_slots": 1}},
        )
    )
    worker = patiently(lambda: cluster.add_node(num_cpus=1, resources={"docker_slots": 1}))
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

    # Whether the lost node's worker died mid-stage (the rerun resumes the chain) or finished the
    # chain just before Ray heard of its death (the rerun finds it finished), the rerun reports
    # the chain's real final state and says it was retried; the head's own chain was not.
    assert [r.status for r in results] == ["kept", "kept"], results
    assert sorted(r.retried for r in results) == [False, True], results
    assert {r.node for r in results} == {head}  # the lost node's chain was rerun on the head
    assert_each_chain_once(snapshot(url))
    orphans_cleaned(url, lost_owners)
