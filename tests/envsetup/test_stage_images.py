"""A stage whose StageSpec names an era image (dependencies only, as `env setup` stores it) runs in
the sandbox layer built on that image: agent user, seed and mirror are there, the stage base too."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_env import DockerEnvironment

pytestmark = pytest.mark.docker


def test_an_era_image_gets_the_sandbox_layer(
    docker_client, base_image, calc_chain, tmp_path
) -> None:
    era = f"prchain-test-era/{uuid.uuid4().hex[:8]}:py"  # an era image: a plain tag of the base
    docker_client.tag(base_image, era)
    repo = f"acme/era-layer-{uuid.uuid4().hex[:8]}"  # so the layer built is this test's own
    stages = [dataclasses.replace(s, image=era) for s in calc_chain.stages]
    env = DockerEnvironment(
        EnvironmentConfig(log_dir=str(tmp_path)),
        repo=repo,
        clone_path=str(calc_chain.path),
        stages=stages,
        client=docker_client,
    )
    try:
        with env:
            env.enter_stage(1)
            assert env.running_image != era
            assert docker_client.image_labels(env.running_image)["prchain.kind"] == "repo"
            assert "calc" in env.execute("ls").output and env.execute("whoami").output == "agent\n"
            env.enter_stage(2)  # same era image: the same layer, no new build
            assert env.running_image == next(iter(env._layers.values()))
    finally:
        for layer in env._layers.values():
            docker_client.remove_image(layer)
        docker_client.remove_image(era)
