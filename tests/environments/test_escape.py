"""A misbehaving agent in a real container: its hooks, its background readers and its reads of the
privileged places never reach the chain's future or the gold patches (docs/sandbox.md)."""

from __future__ import annotations

import pytest

from prchain.dev.repos import git
from prchain.environments.carry import ORIGIN_DIR, PUBLIC_DIR, ROOT_DIR
from prchain.environments.protocol import StageSpec

pytestmark = pytest.mark.docker

# Every hook git runs around a fetch, checkout, commit or apply: each one, were it ever run, records
# its uid and copies the mirror's whole history (the chain's future) into the worktree.
HOOKS = (
    "reference-transaction",
    "post-checkout",
    "post-commit",
    "pre-commit",
    "post-merge",
    "post-rewrite",
    "pre-auto-gc",
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "post-index-change",
)
PAYLOAD = f"""#!/bin/sh
id -u >> /work/repo/.hook-ran
git --git-dir={ORIGIN_DIR} log --all -p >> /work/repo/.loot 2>&1
cat {ROOT_DIR}/gold-*.patch >> /work/repo/.loot 2>&1
exit 0
"""
# A reader that leaves the command's process group and loops over everything it can open.
# It writes its pid once it runs in its own session; the command waits for that, so the command's
# end (which kills its process group) cannot race the reader's escape.
READER = (
    "setsid nohup bash -c 'echo $$ > /tmp/reader.pid; while true; do "
    f"cat {ROOT_DIR}/gold-*.patch {ORIGIN_DIR}/packed-refs >> /tmp/loot 2>/dev/null; "
    'find / -xdev -type f -readable -name "*.patch" -exec cat {} + >> /tmp/loot 2>/dev/null; '
    "sleep 0.05; done' >/dev/null 2>&1 < /dev/null & "
    "for i in $(seq 100); do [ -s /tmp/reader.pid ] && break; sleep 0.1; done"
)
SLEEPER = (
    "setsid nohup sh -c 'echo $$ > /tmp/sleeper.pid; exec sleep 1000' >/dev/null 2>&1 < /dev/null & "
    "for i in $(seq 100); do [ -s /tmp/sleeper.pid ] && break; sleep 0.1; done"
)


def gold_lines(stages: list[StageSpec], base_files: str) -> list[str]:
    """Lines the gold patches add that appear nowhere at B_1: seeing one means seeing a gold patch."""
    lines = set()
    for stage in stages:
        for line in stage.gold_patch.splitlines():
            body = line[1:].strip()
            if line.startswith("+") and not line.startswith("+++") and len(body) >= 8:
                lines.add(body)
    return sorted(line for line in lines if line not in base_files)


def plant_hooks(env) -> None:
    for hook in HOOKS:
        env.write_file(f".git/hooks/{hook}", PAYLOAD)
    env.execute("chmod +x .git/hooks/*")
    # Config that would run a command as whoever runs git here, and a home config root might read.
    env.execute(
        "git config core.fsmonitor .git/hooks/post-checkout && "
        "git config core.hooksPath .git/hooks && "
        "git config --global core.fsmonitor /work/repo/.git/hooks/post-checkout && "
        "git config --global include.path /work/repo/.git/evil.cfg && "
        "printf '[core]\\n\\tfsmonitor = /work/repo/.git/hooks/post-checkout\\n' > .git/evil.cfg"
    )


def test_hooks_and_config_the_agent_plants_never_run_for_the_bookkeeping(
    make_env, calc_chain
) -> None:
    env = make_env()
    env.enter_stage(1)
    plant_hooks(env)
    env.write_file("calc/mine.py", "X = 1\n")
    for t in (2, 3):
        env.enter_stage(t)
        env.diff(), env.cumulative_diff(), env.snapshot()
    seen = env.execute("cat .hook-ran .loot 2>&1; ls -a").output
    assert "0\n" not in seen.replace("No such file", "")
    base_files = git(calc_chain.path, "show", f"{calc_chain.stages[0].base_sha}:calc/ops.py")
    future = calc_chain.repo.prs[3].merge_sha
    assert future not in seen
    assert [line for line in gold_lines(calc_chain.stages, base_files) if line in seen] == []
    # The future is not in the agent's repository, nor in the public store it borrows from.
    assert env.execute(f"git cat-file -e {future}").exit_code != 0
    assert env.execute(f"git --git-dir={PUBLIC_DIR} cat-file -e {future}").exit_code != 0


def test_privileged_places_are_unreadable_by_the_agent(make_env) -> None:
    env = make_env()
    env.enter_stage(1)
    env.enter_stage(3)  # gold patches 1 and 2 were in root's directory for this transition
    for probe in (
        f"ls {ROOT_DIR}",
        f"cat {ROOT_DIR}/index",
        f"git --git-dir={ORIGIN_DIR} log --all",
        f"ls {ORIGIN_DIR}",
        f"touch {PUBLIC_DIR}/objects/x",
        f"git --git-dir={PUBLIC_DIR} update-ref refs/x HEAD",
    ):
        result = env.execute(probe)
        assert result.exit_code != 0, (probe, result.output)
    found = env.execute("find / -xdev -name 'gold-*.patch' -readable 2>/dev/null").output
    assert found == ""


def test_stage_entry_ends_every_agent_process_setsid_readers_included(make_env, calc_chain) -> None:
    env = make_env()
    env.enter_stage(1)
    env.execute(READER)
    env.execute(SLEEPER)
    listing = "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '"
    listed = env.execute(listing).output
    assert "sleep 1000" in listed and "while true" in listed  # both outlived their command
    env.enter_stage(2)
    env.enter_stage(3)
    listed = env.execute(listing).output
    assert "sleep 1000" not in listed and "while true" not in listed
    loot = env.execute("cat /tmp/loot 2>/dev/null").output
    base_files = git(calc_chain.path, "show", f"{calc_chain.stages[0].base_sha}:calc/ops.py")
    assert [line for line in gold_lines(calc_chain.stages, base_files) if line in loot] == []


def test_a_gold_patch_that_will_not_revert_is_reported_as_such(
    make_env, calc_chain, docker_client
) -> None:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    binary = (
        "\ndiff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\n"
        "Binary files /dev/null and b/logo.png differ\n"
    )
    first, second = calc_chain.stages[:2]
    stages = [StageSpec(1, first.base_sha, first.gold_patch + binary), second]
    with DockerEnvironment(
        EnvironmentConfig(),
        repo="acme/calc",
        clone_path=str(calc_chain.path),
        stages=stages,
        client=docker_client,
    ) as env:
        env.enter_stage(1)
        transition = env.enter_stage(2)
    assert transition.stopped and transition.revert_failed == [1]
    reason = transition.stop_reason()
    assert "gold patch of stage 1 could not be reverted" in reason
    assert "logo.png" in reason and "carried patch" not in reason


def test_the_disk_cap_stops_writes(make_env) -> None:
    env = make_env(disk_limit="64m", scratch_limit="16m")
    env.enter_stage(1)
    assert env.disk_mode in ("storage-opt", "tmpfs")
    for place in ("/work/repo/big.bin", "/tmp/big.bin", "/home/agent/big.bin"):
        result = env.execute(f"head -c 200000000 /dev/zero > {place}; echo rc=$?", timeout=60)
        assert "No space left on device" in result.output and "rc=1" in result.output, place
    if env.disk_mode == "tmpfs":  # everything else is read-only
        assert "Read-only" in env.execute("touch /var/tmp/x /opt/x 2>&1").output
    env.execute("rm -f /work/repo/big.bin /tmp/big.bin /home/agent/big.bin")
    assert env.execute("echo fine > ok.txt && cat ok.txt").output == "fine\n"


def test_a_hundred_megabyte_file_gives_a_bounded_diff_summary(make_env) -> None:
    from prchain.environments.protocol import diff_cap_hit

    env = make_env(max_diff_bytes=100_000)
    env.enter_stage(1)
    env.execute("head -c 100000000 /dev/urandom > big.bin", timeout=120)
    env.write_file("calc/small.py", "Y = 2\n")
    for diff in (env.diff(), env.cumulative_diff()):
        hit = diff_cap_hit(diff)
        assert hit is not None and hit[0] > 100_000_000 and hit[1] == 100_000
        assert len(diff) < 100_000 + 500 and "big.bin" in diff and "calc/small.py" in diff
    env.execute("rm big.bin")
    assert diff_cap_hit(env.diff()) is None and "Y = 2" in env.diff()
