"""Carry-forward on a real 3-PR chain in real containers: W_t = (B_t − g_1 … − g_(t−1)) + Δ_(t−1)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from prchain.dev.repos import OPS_V0, TEST_V0, git

pytestmark = pytest.mark.docker

AGENT_OPS = OPS_V0 + "\n\ndef subtract(a, b):\n    return -(b - a)\n"  # not the gold solution
README_MINE = "# calc\n\nMy own calculator notes.\n"  # clashes with PR #4's README, which B_3 holds


def replica(chain_path: Path, tmp: Path, base: str, reverts: list[str], patches: list[str]) -> Path:
    """A host-side worktree at `base` with `reverts` reverted and `patches` applied: the expected state."""
    work = tmp / f"replica-{len(list(tmp.iterdir()))}"
    subprocess.run(["git", "clone", "-q", str(chain_path), str(work)], check=True)
    git(work, "checkout", "-q", "--detach", base)
    for patch, reverse in [(p, True) for p in reverts] + [(p, False) for p in patches]:
        args = ["git", "-C", str(work), "apply", "--index", *(["-R"] if reverse else []), "-"]
        text = patch if patch.endswith("\n") else patch + "\n"
        subprocess.run(args, input=text, text=True, check=True)
    return work


def tree_of(work: Path) -> str:
    git(work, "add", "-A")
    return git(work, "write-tree")


def sandbox_tree(env) -> str:
    return env.execute("git add -A && git write-tree && git reset -q").output.strip()


def test_stage_one_starts_at_b1_unchanged(make_env, calc_chain) -> None:
    env = make_env()
    transition = env.enter_stage(1)
    assert (transition.outcome, transition.reverted, transition.applied) == ("clean", [], False)
    # B_1's tree, committed without parents: B_1's history is not in the agent's repository.
    b1 = calc_chain.stages[0].base_sha
    assert env.execute("git rev-parse HEAD^{tree}").output.strip() == git(
        calc_chain.path, "rev-parse", f"{b1}^{{tree}}"
    )
    assert env.execute("git rev-list --count HEAD").output.strip() == "1"
    assert env.execute(f"git cat-file -e {b1}").exit_code != 0
    assert env.execute("git status --porcelain --ignored").output == ""
    assert env.diff() == "" and env.cumulative_diff() == ""


def test_stage_two_is_b2_minus_g1_plus_the_agents_stage_one_patch(
    make_env, calc_chain, tmp_path
) -> None:
    env = make_env()
    env.enter_stage(1)
    env.write_file("calc/ops.py", AGENT_OPS)
    env.write_file("calc/extra.py", "X = 1\n")
    delta1 = env.cumulative_diff()
    assert delta1 == env.diff()

    transition = env.enter_stage(2)
    b2, g1 = calc_chain.stages[1].base_sha, calc_chain.stages[0].gold_patch
    assert (transition.outcome, transition.reverted, transition.applied) == ("clean", [1], True)
    assert transition.base_sha == b2 and transition.carried_bytes == len(delta1.encode())
    assert env.execute("git rev-list --count HEAD").output.strip() == "2"  # C_2, the carried Δ
    assert (
        env.read_file("calc/ops.py") == AGENT_OPS
    )  # the gold subtract is gone, the agent's is back
    assert env.read_file("tests/test_ops.py") == TEST_V0  # g_1's test is reverted too
    assert env.read_file("calc/extra.py") == "X = 1\n"
    expected = replica(calc_chain.path, tmp_path, b2, [g1], [delta1])
    assert sandbox_tree(env) == tree_of(expected)
    assert env.diff() == "" and env.cumulative_diff() == delta1
    assert env.execute("git status --porcelain").output == ""


def test_stage_three_reverts_newest_gold_first_and_keeps_unrelated_history(
    make_env, calc_chain, tmp_path
) -> None:
    env = make_env()
    env.enter_stage(1)
    env.write_file("calc/ops.py", AGENT_OPS)
    env.enter_stage(2)
    env.write_file("calc/ops.py", AGENT_OPS + "\n\ndef multiply(a, b):\n    return a * b\n")
    delta2 = env.cumulative_diff()
    transition = env.enter_stage(3)
    assert (transition.outcome, transition.reverted, transition.applied) == ("clean", [2, 1], True)
    assert (
        env.read_file("README.md") == "# calc\n\nA tiny calculator.\n"
    )  # PR #4 is not in the chain
    stages = calc_chain.stages
    expected = replica(
        calc_chain.path,
        tmp_path,
        stages[2].base_sha,
        [stages[1].gold_patch, stages[0].gold_patch],
        [delta2],
    )
    assert sandbox_tree(env) == tree_of(expected)
    # The chain's future (PR #3's own commit) is not in the sandbox at all, not even unreferenced.
    future = calc_chain.repo.prs[3].merge_sha
    assert env.execute(f"git cat-file -e {future}").exit_code != 0


def _conflicting_run(make_env, policy: str):
    env = make_env(conflict_policy=policy)
    env.enter_stage(1)
    env.write_file("calc/ops.py", AGENT_OPS)
    env.write_file("README.md", README_MINE)
    assert env.enter_stage(2).outcome == "clean"  # B_2 − g_1 = B_1: nothing to clash with yet
    return env, env.enter_stage(3)


def test_conflict_strict_stops_the_chain(make_env) -> None:
    env, transition = _conflicting_run(make_env, "strict")
    assert (
        transition.outcome == "conflict_stopped" and transition.stopped and not transition.applied
    )
    assert env.read_file("calc/ops.py") == OPS_V0  # the stage base, untouched
    assert env.cumulative_diff() == "" and env.diff() == ""


def test_conflict_oracle_starts_from_the_reverted_base(make_env) -> None:
    env, transition = _conflicting_run(make_env, "oracle")
    assert (
        transition.outcome == "oracle_reset" and not transition.stopped and not transition.applied
    )
    assert transition.reverted == [2, 1]
    assert env.read_file("calc/ops.py") == OPS_V0
    assert env.read_file("README.md") == "# calc\n\nA tiny calculator.\n"
    assert env.cumulative_diff() == "" and env.execute("git status --porcelain").output == ""


def test_conflict_partial_applies_what_applies_and_records_the_rest(make_env) -> None:
    env, transition = _conflicting_run(make_env, "partial")
    assert transition.outcome == "partial" and transition.applied and not transition.stopped
    assert env.read_file("calc/ops.py") == AGENT_OPS
    assert env.read_file("README.md") == "# calc\n\nA tiny calculator.\n"
    assert "=== README.md.rej ===" in transition.rejected_hunks
    assert "+My own calculator notes." in transition.rejected_hunks
    assert env.execute("git status --porcelain --ignored").output == ""  # no .rej left behind
    carried = env.cumulative_diff()
    assert "calc/ops.py" in carried and "README" not in carried and env.diff() == ""


def _write_gold(env, calc_chain, number: int) -> None:
    """The gold agent: each file PR `number` changes, as its merge commit has it."""
    from prchain.environments.stage_entry import patch_paths

    pr = calc_chain.repo.prs[number]
    for path in sorted(patch_paths(pr.gold_patch)):
        listed = git(calc_chain.path, "ls-tree", "--name-only", pr.merge_sha, "--", path)
        if listed.strip():
            shown = subprocess.run(
                ["git", "-C", str(calc_chain.path), "show", f"{pr.merge_sha}:{path}"],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            env.write_file(path, shown.stdout)
        else:
            env.execute(f"rm -f -- {path}")


def test_a_propagated_stage_carries_the_agents_files_onto_b_t_and_the_gold_resolves(
    docker_client, calc_image, calc_chain
) -> None:
    """Stage 3 entered by the fallback: B_3 with the files g_1 and g_2 touch as C_2 has them, the
    agent's change carried onto it. The gold agent ends at PR #3's merge commit exactly (PR #4's
    README, outside the carried files, stays as B_3 has it); a clean room, a new container, makes
    C_2 first and the same C_3."""
    from dataclasses import replace

    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    stages = [*calc_chain.stages[:2], replace(calc_chain.stages[2], entry="propagate")]
    env = DockerEnvironment(
        EnvironmentConfig(), repo="acme/calc", clone_path=str(calc_chain.path), stages=stages,
        client=docker_client,
    ).start()  # fmt: skip
    try:
        env.enter_stage(1)
        _write_gold(env, calc_chain, 1)
        env.enter_stage(2)
        _write_gold(env, calc_chain, 2)
        transition = env.enter_stage(3)
        assert (transition.entry, transition.reverted, transition.outcome) == (
            "propagate",
            [],
            "clean",
        )
        assert env.read_file("README.md") == "# calc\n\nA tiny calculator.\n"  # B_3's, PR #4
        _write_gold(env, calc_chain, 3)
        merge_3 = calc_chain.repo.prs[3].merge_sha
        assert sandbox_tree(env) == git(calc_chain.path, "rev-parse", f"{merge_3}^{{tree}}")
        # Nothing of g_1 or g_2 is in C_3 itself: the stage base holds no gold code.
        ops = env.base_file("calc/ops.py")
        assert ops is not None and ops.decode() == OPS_V0
        with env.clean_room() as room:
            assert room.execute("cat calc/ops.py").output == OPS_V0
            assert "A tiny calculator" in room.execute("cat README.md").output
        # The future is not in the sandbox.
        assert env.execute(f"git cat-file -e {merge_3}").exit_code != 0
    finally:
        env.close()


# Stage 2's gold as the hunks test gives it: #2's own patch and a README hunk whose lines PR #4
# rewrote before B_3, so at B_3 that hunk does not revert and the others do.
README_HUNK = (
    "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n"
    "@@ -1 +1,3 @@\n # calc\n+\n+A calculator.\n"
)


def busy_readme_chain(docker_client, calc_chain, entry: str, policy: str = "strict"):
    """A sandbox on the calc chain whose stage 2 gold also adds README_HUNK (lines PR #4 rewrote
    before B_3) and whose stage 3 is entered by `entry`, at the end of stage 2 worked by the gold
    agent."""
    from dataclasses import replace

    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    stage_1, stage_2, stage_3 = calc_chain.stages[:3]
    gold_2 = stage_2.gold_patch.rstrip("\n") + "\n" + README_HUNK
    stages = [stage_1, replace(stage_2, gold_patch=gold_2), replace(stage_3, entry=entry)]
    env = DockerEnvironment(
        EnvironmentConfig(conflict_policy=policy), repo="acme/calc",
        clone_path=str(calc_chain.path), stages=stages, client=docker_client,
    ).start()  # fmt: skip
    try:
        env.enter_stage(1)
        _write_gold(env, calc_chain, 1)
        env.enter_stage(2)
        _write_gold(env, calc_chain, 2)
    except BaseException:
        env.close()
        raise
    return env


def test_a_stage_entered_by_hunks_keeps_what_does_not_revert_and_the_gold_resolves(
    docker_client, calc_image, calc_chain
) -> None:
    """Stage 3 entered by hunks: g_2's ops hunks and g_1 revert, g_2's README hunk stays as B_3
    has it (KEPT_HUNKS, not a revert failure). The agent's README change meets it: B_3's lines
    are taken and the agent's recorded (partial, under the strict policy too), while its ops
    change is carried; the gold agent ends at PR #3's merge commit exactly."""
    env = busy_readme_chain(docker_client, calc_chain, "hunks")
    try:
        env.write_file("README.md", README_MINE)
        transition = env.enter_stage(3)
        assert (transition.entry, transition.reverted, transition.outcome) == (
            "hunks",
            [1],
            "partial",
        )
        assert not transition.revert_failed and not transition.stopped
        assert "+A calculator." in transition.revert_rejected_hunks
        assert "=== README.md (kept as the stage base has it) ===" in transition.rejected_hunks
        assert "My own calculator notes." in transition.rejected_hunks
        assert env.read_file("README.md") == "# calc\n\nA tiny calculator.\n"  # B_3's, PR #4
        ops = env.base_file("calc/ops.py")
        assert ops is not None and ops.decode() == OPS_V0  # C_3 holds no gold code
        _write_gold(env, calc_chain, 3)
        merge_3 = calc_chain.repo.prs[3].merge_sha
        assert sandbox_tree(env) == git(calc_chain.path, "rev-parse", f"{merge_3}^{{tree}}")
    finally:
        env.close()


def test_a_replayed_stage_starts_at_b_t_with_the_agents_deviation_and_keeps_no_gold(
    docker_client, calc_image, calc_chain
) -> None:
    """Stage 3 entered by replay: nothing is reverted; C_3 is B_3 with the agent's difference
    from H_2 = B_2 + g_2 applied. The agent's own message in #2's check (a line nobody rewrote
    since) is carried, and #2's wording, which the agent never wrote, is nowhere in its reach;
    its README line meets the one PR #4 rewrote: B_3's stays, the agent's is recorded (partial,
    whatever the policy). A clean room and a new container make the same C_3 without the
    agent's work (the host's copy of C_3's difference from B_3)."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    env = busy_readme_chain(docker_client, calc_chain, "replay")
    stages = list(env.stages.values())
    try:
        ops_2 = env.read_file("calc/ops.py")
        mine = ops_2.replace("calc works on numbers", "numbers only, please")
        assert mine != ops_2
        env.write_file("calc/ops.py", mine)
        env.write_file("README.md", README_MINE)
        delta_2 = env.cumulative_patch()

        transition = env.enter_stage(3)
        assert (transition.entry, transition.reverted, transition.outcome) == (
            "replay",
            [],
            "partial",
        )
        assert not transition.stopped and transition.carried_bytes == len(delta_2)
        assert (
            "=== README.md (kept as B_t has it; yours below) ==="
            in transition.revert_rejected_hunks
        )
        assert "My own calculator notes." in transition.revert_rejected_hunks
        assert env.read_file("README.md") == "# calc\n\nA tiny calculator.\n"  # B_3's, PR #4
        assert env.read_file("calc/ops.py") == mine  # the agent's, on B_3
        base_ops = env.base_file("calc/ops.py")
        assert base_ops is not None and base_ops.decode() == mine  # folded into C_3
        assert env.cumulative_diff() == "" and env.diff() == ""
        reach = env.execute(
            "git cat-file --batch-all-objects --batch | grep -c 'calc works on numbers'"
        )
        assert reach.output.strip() == "0", reach.output  # g_2's wording: not in any object
        made = env.replayed[3]

        with env.clean_room() as room:
            assert room.execute("cat calc/ops.py").output == mine
            assert "A tiny calculator" in room.execute("cat README.md").output
        assert env.replayed[3] == made

        fresh = DockerEnvironment(
            EnvironmentConfig(), repo="acme/calc", clone_path=str(calc_chain.path),
            stages=stages, client=docker_client,
        ).start()  # fmt: skip
        try:
            fresh.replayed = dict(env.replayed)
            fresh.enter_stage(3)  # a new container: from the host's copy, no earlier stage
            assert fresh.read_file("calc/ops.py") == mine
            assert sandbox_tree(fresh) == sandbox_tree(env)
        finally:
            fresh.close()

        _write_gold(env, calc_chain, 3)  # the gold agent ends at PR #3's merge commit exactly
        merge_3 = calc_chain.repo.prs[3].merge_sha
        assert sandbox_tree(env) == git(calc_chain.path, "rev-parse", f"{merge_3}^{{tree}}")
    finally:
        env.close()


def test_a_gold_agent_replayed_starts_at_b_t_exactly(docker_client, calc_image, calc_chain) -> None:
    """An agent that did what history did leaves no deviation: a replayed stage 3 starts at B_3
    itself (clean), the state `tests verify` checks, and a stage after a replayed one is replayed
    the same way."""
    from dataclasses import replace

    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    stages = [calc_chain.stages[0], *(replace(s, entry="replay") for s in calc_chain.stages[1:3])]
    env = DockerEnvironment(
        EnvironmentConfig(conflict_policy="strict"), repo="acme/calc",
        clone_path=str(calc_chain.path), stages=stages, client=docker_client,
    ).start()  # fmt: skip
    try:
        env.enter_stage(1)
        _write_gold(env, calc_chain, 1)
        assert env.enter_stage(2).outcome == "clean"
        _write_gold(env, calc_chain, 2)
        transition = env.enter_stage(3)
        assert (transition.entry, transition.outcome, transition.reverted) == (
            "replay",
            "clean",
            [],
        )
        b_3 = stages[2].base_sha
        assert sandbox_tree(env) == git(calc_chain.path, "rev-parse", f"{b_3}^{{tree}}")
        assert env.replayed[3] == b""
    finally:
        env.close()


def test_a_resumed_rollout_with_replayed_stages_gets_back_the_same_tree(
    docker_client, calc_image, calc_chain
) -> None:
    """A replayed stage's start holds the agent's earlier work, which a fresh sandbox does not
    have: resuming enters every kept stage and applies its stored Δ in turn, and ends on the tree
    the agent left (entering only the last stage would start it as if no work had been done)."""
    from dataclasses import replace
    from datetime import datetime

    from prchain.agent.resume import rebuild
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment
    from prchain.store.rollouts import StageRow

    stages = [calc_chain.stages[0], *(replace(s, entry="replay") for s in calc_chain.stages[1:3])]

    def opened() -> DockerEnvironment:
        return DockerEnvironment(
            EnvironmentConfig(), repo="acme/calc", clone_path=str(calc_chain.path),
            stages=stages, client=docker_client,
        ).start()  # fmt: skip

    def row(idx: int, patch: bytes) -> StageRow:
        return StageRow(idx, 1, idx, "passed", None, 1.0, 1, "", "", patch, None, True, 1,
                        datetime.now(), None)  # fmt: skip

    env, again, last = opened(), opened(), opened()
    try:
        env.enter_stage(1)
        env.write_file("calc/ops.py", AGENT_OPS)
        kept = [row(1, env.cumulative_patch())]
        env.enter_stage(2)
        env.write_file("calc/extra.py", "X = 2\n")
        kept.append(row(2, env.cumulative_patch()))
        assert rebuild(again, kept, replayed=True) == []
        assert sandbox_tree(again) == sandbox_tree(env)
        assert again.read_file("calc/ops.py") == AGENT_OPS
        rebuild(last, kept[-1:], replayed=False)  # the last stage alone: #1's work is not there
        assert last.read_file("calc/ops.py") != AGENT_OPS
    finally:
        for opened_env in (env, again, last):
            opened_env.close()
