"""The sandbox holds: no network, bounded processes and memory, no host secrets, a non-root agent."""

from __future__ import annotations

import pytest

from prchain.core.errors import ContainerDied
from prchain.environments.sandbox_spec import MEMORY_ENV, memory_env

pytestmark = pytest.mark.docker

SECRET = "ghp_prchainTestSecret0123456789"


def test_commands_run_as_a_non_root_user_in_the_repo(make_env) -> None:
    env = make_env()
    env.enter_stage(1)
    result = env.execute("id -u; pwd; touch /etc/owned 2>&1; cat /opt/prchain/origin.git/HEAD 2>&1")
    uid, cwd, *rest = result.output.splitlines()
    assert uid != "0" and cwd == "/work/repo"
    assert any(word in rest[0] for word in ("Permission denied", "Read-only file system"))
    assert "Permission denied" in rest[1]


def test_network_is_unreachable(make_env) -> None:
    env = make_env()
    probe = "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), timeout=5)\""
    result = env.execute(probe, timeout=30)
    assert result.exit_code != 0 and "unreachable" in result.output.lower()
    assert env.execute("getent hosts deb.debian.org", timeout=30).exit_code != 0


def test_host_secrets_are_not_visible_inside(make_env, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    env = make_env()
    env.enter_stage(1)
    seen = env.execute("env; cat /proc/self/environ; cat /proc/1/environ 2>/dev/null").output
    assert SECRET not in seen and "GITHUB_TOKEN" not in seen and "OPENAI_API_KEY" not in seen
    assert "HOME=/home/agent" in seen


def test_fork_bomb_is_contained_by_the_pids_limit(make_env) -> None:
    env = make_env(pids_limit=64)
    bomb = env.execute(":(){ :|:& };:", timeout=20)
    assert not bomb.timed_out
    after = env.execute("echo alive; ls /proc | grep -c '^[0-9]'")
    lines = after.output.split()
    assert (
        after.exit_code == 0 and lines[0] == "alive" and int(lines[1]) < 10
    )  # nothing of the bomb left


def test_ten_gigabyte_allocation_is_killed_by_the_memory_limit(make_env) -> None:
    env = make_env(memory="512m")
    result = env.execute("python3 -c \"b = b'x' * (10 * 1024**3)\"", timeout=120)
    assert result.exit_code != 0 and not result.timed_out
    assert "memory" in result.output.lower()
    assert env.execute("echo alive").output == "alive\n"


def test_suites_that_ask_for_free_memory_are_told_the_sandbox_s_limit(make_env) -> None:
    """/proc/meminfo shows the host's memory; numpy's and scipy's memory checks read these first
    (numpy's test_huge_vectordot took the host's 20 GB as free and was killed at 6g)."""
    env = make_env(memory="512m")
    said = env.execute("echo $NPY_AVAILABLE_MEM/$SCIPY_AVAILABLE_MEM").output.strip()
    assert said == "512 MiB/512 MiB"
    assert memory_env("1.5g") == dict.fromkeys(MEMORY_ENV, "1.5 GiB") and memory_env("lots") == {}


def test_timeout_kills_the_command_and_its_children(make_env) -> None:
    env = make_env()
    result = env.execute("sleep 60 & sleep 60; echo never", timeout=1)
    # SIGINT first (the foreground sleep dies of it), then the group is killed: the background one
    assert result.timed_out and result.exit_code == 124 and "never" not in result.output
    assert "timeout" in result.output
    processes = env.execute("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '").output
    assert "sleep" in processes and "sleep 60" not in processes  # `sleep infinity` (pid 1's) only


def test_long_output_is_truncated_with_a_marker(make_env) -> None:
    env = make_env(max_output_bytes=1000)
    result = env.execute("seq 1 100000")
    assert result.truncated and "bytes of output truncated" in result.output
    assert result.output.startswith("1\n2\n") and result.output.endswith("99999\n100000\n")
    assert len(result.output) < 1200
    small = env.execute("echo hi")
    assert not small.truncated and small.output == "hi\n"


def test_a_command_longer_than_one_argument_can_be_is_refused_and_the_sandbox_goes_on(
    make_env,
) -> None:
    """A heredoc past 128 KiB (a gold patch the agent pastes, a file written in one go) does not
    start: the agent reads why, as a shell would say it, and its next command runs. It had ended
    the rollout with ExecOutputLost (the engine's E2BIG line in place of the wrapper's trailer)."""
    env = make_env()
    body = "x" * 79 + "\n"
    command = f"cat > big.txt <<'END'\n{body * 1700}END\n"  # 136,000 bytes of heredoc
    refused = env.execute(command)
    assert refused.exit_code == 126 and "argument list too long" in refused.output
    assert f"{len(command.encode()):,} bytes" in refused.output and "nothing ran" in refused.output
    assert env.execute("test -e big.txt").exit_code == 1
    fits = env.execute(f"cat > big.txt <<'END'\n{body * 1500}END\nwc -c < big.txt")
    assert (fits.exit_code, fits.output.strip()) == (0, "120000")


def test_files_round_trip_and_errors_are_typed(make_env) -> None:
    env = make_env()
    env.enter_stage(1)
    env.write_file("new/dir/file.txt", "naïve\ntext\n")
    assert env.read_file("new/dir/file.txt") == "naïve\ntext\n"
    assert env.execute("stat -c %U new/dir/file.txt").output.strip() == "agent"
    with pytest.raises(FileNotFoundError):
        env.read_file("missing.txt")
    with pytest.raises(IsADirectoryError):
        env.read_file("calc")
    with pytest.raises(PermissionError):
        env.write_file("/etc/passwd", "root::0:0::/:/bin/sh\n")


def test_a_container_that_dies_mid_stage_raises_container_died(make_env) -> None:
    env = make_env()
    env.enter_stage(1)
    env.client.remove_container(env.container_id)
    with pytest.raises(ContainerDied):
        env.execute("echo hi")
