"""Attacks on entry by replay, where root applies the agent's own Δ in its private store and
resolves conflicts against B_t (carry.STAGE_BASE, `replay`): root must never follow a path the
agent made, to read or to write."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.environments.test_carry_forward import README_HUNK, _write_gold

pytestmark = pytest.mark.docker


def test_a_symlink_in_a_busy_file_reads_and_writes_nothing_of_root(
    docker_client, calc_image, calc_chain
) -> None:
    """The agent turns README.md, whose lines PR #4 rewrote before B_3, into a symlink to a file
    only root may read, then into one to a file root would write: entering the replayed stage 3,
    root reads neither through it and writes nothing through it; the link stays the agent's own
    change, and the conflict is recorded."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    stage_1, stage_2, stage_3 = calc_chain.stages[:3]
    gold_2 = stage_2.gold_patch.rstrip("\n") + "\n" + README_HUNK
    stages = [stage_1, replace(stage_2, gold_patch=gold_2), replace(stage_3, entry="replay")]
    for target in ("/etc/shadow", "/etc/hostname"):
        env = DockerEnvironment(
            EnvironmentConfig(), repo="acme/calc", clone_path=str(calc_chain.path),
            stages=stages, client=docker_client,
        ).start()  # fmt: skip
        try:
            before = env._root(f"cat {target}").output
            env.enter_stage(1)
            _write_gold(env, calc_chain, 1)
            env.enter_stage(2)
            _write_gold(env, calc_chain, 2)
            env.write_file("README.md", "# calc\n\nMine.\n")
            assert env.execute(f"rm README.md && ln -s {target} README.md").exit_code == 0
            transition = env.enter_stage(3)
            assert before and before not in transition.revert_rejected_hunks
            assert before not in transition.rejected_hunks
            assert env._root(f"cat {target}").output == before
            # The deviation does not apply three ways (a text file became a link): applied hunk
            # by hunk, B_3's text is not removed and the agent's link is its own change, carried.
            assert transition.outcome == "partial"
            assert "removal patch leaves file contents" in transition.revert_errors
            assert env.execute("readlink README.md").output.strip() == target
        finally:
            env.close()
