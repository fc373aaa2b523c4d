"""StageSpec.image / setup_command / test_command: a stage of another era moves to a container of
its image and carries Δ over byte for byte; a setup command's artefacts never enter a diff."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from prchain.dev.repos import OPS_V0

pytestmark = pytest.mark.docker

ERA_REPO = f"acme-{uuid.uuid4().hex[:8]}/calc-sandbox-era"  # this run's own image
SETUP = "mkdir -p build && echo artefact > build/out.txt && echo egg > calc.egg-info && echo set-up"


@pytest.fixture(scope="module")
def era_image(docker_client: Any, base_image: str, calc_chain: Any) -> Iterator[str]:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.images import ensure_repo_image

    image = ensure_repo_image(
        docker_client,
        EnvironmentConfig(),
        ERA_REPO,
        calc_chain.path,
        commands=["echo two > /etc/prchain-era"],
    )
    yield image.tag
    if image.built:
        docker_client.remove_image(image.tag)


def test_a_stage_of_another_image_moves_container_and_carries_the_patch(
    docker_client: Any, calc_chain: Any, era_image: str
) -> None:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    one, two, three = calc_chain.stages
    stages = [
        one,
        replace(two, image=era_image, setup_command=SETUP, test_command="echo era-tests $PWD"),
        replace(three, image=era_image),
    ]
    with DockerEnvironment(
        EnvironmentConfig(test_command={"acme/calc": "echo default-tests"}),
        repo="acme/calc",
        clone_path=str(calc_chain.path),
        stages=stages,
        client=docker_client,
    ) as env:
        env.enter_stage(1)
        first = env.container_id
        assert env.execute("cat /etc/prchain-era").exit_code != 0
        env.write_file("calc/ops.py", OPS_V0 + "\n\ndef mine(a):\n    return a\n")
        env.execute("printf '\\x00\\xff\\r\\n' > blob.bin")
        carried = env.cumulative_patch()

        moved = env.enter_stage(2)
        assert env.container_id != first and moved.image == era_image and moved.applied
        assert moved.carried_bytes == len(carried) and moved.setup_error == ""
        assert env.execute("cat /etc/prchain-era").output == "two\n"
        assert env.cumulative_patch() == carried  # byte for byte, the binary file included
        assert "def mine" in env.read_file("calc/ops.py")
        # The setup command ran as the agent; what it made is in no diff.
        assert env.read_file("build/out.txt") == "artefact\n"
        assert env.diff() == "" and "egg" not in env.cumulative_diff()
        env.write_file("calc/new.py", "Z = 3\n")
        assert "calc/new.py" in env.diff() and "build/" not in env.diff()
        snap = env.snapshot()
        env.execute("rm -rf build calc/new.py")
        env.restore(snap)
        assert env.read_file("calc/new.py") == "Z = 3\n"
        result = env.run_tests()
        assert result is not None and result.output.strip() == "era-tests /work/repo"

        same = env.container_id
        assert env.enter_stage(3).image == era_image and env.container_id == same
        assert env.execute("test -e build/out.txt").exit_code != 0  # stage 3 has no setup
        result = env.run_tests()
        assert result is not None and result.output.strip() == "default-tests"


def test_a_stage_image_missing_from_the_engine_is_one_clear_error(
    docker_client: Any, calc_chain: Any
) -> None:
    from prchain.core.errors import EnvironmentFailure
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    stages = [replace(calc_chain.stages[0], image="prchain/no-such-era:sandbox")]
    env = DockerEnvironment(
        EnvironmentConfig(),
        repo="acme/calc",
        clone_path=str(calc_chain.path),
        stages=stages,
        client=docker_client,
    )
    with pytest.raises(EnvironmentFailure, match="not in the Docker engine"):
        env.start()
    assert env.container_id is None
