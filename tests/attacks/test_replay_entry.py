"""Attacks on entry by replay, where root applies the agent's own Δ in its private store and
resolves conflicts against B_t (carry.STAGE_BASE, `replay`): root must never follow a path the
agent made, to read or to write."""

from __future__ import annotations

import pytest

from tests.environments.test_carry_forward import busy_readme_chain

pytestmark = pytest.mark.docker


def test_a_symlink_in_a_busy_file_reads_and_writes_nothing_of_root(
    docker_client, calc_image, calc_chain
) -> None:
    """The agent turns README.md, whose lines PR #4 rewrote before B_3, into a symlink to a file
    only root may read, then into one to a file root would write: entering the replayed stage 3,
    root reads neither through it and writes nothing through it; the link stays the agent's own
    change, and the conflict is recorded."""
    for target in ("/etc/shadow", "/etc/hostname"):
        env = busy_readme_chain(docker_client, calc_chain, "replay", policy="partial")
        try:
            before = env._root(f"cat {target}").output
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
