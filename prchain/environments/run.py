"""One shell command in a container, bounded in time and output: what the agent's commands and the
hidden tests in a clean room both go through."""

from __future__ import annotations

from prchain.environments.docker_client import DockerClient, RawExec
from prchain.environments.protocol import ExecResult

INTERNAL_LIMIT = 1 << 30  # bookkeeping output (diffs, files) is never truncated below this
# At the timeout the command's process group gets SIGINT first, as Ctrl-C would: a test runner
# stops and still writes what it ran (pytest's junit report; a whole suite past its time limit
# then counts the tests it finished), and SIGKILL GRACE seconds later if anything is left.
GRACE = 15
# `timeout` leads a process group of its own; once the command ends (or is killed) the whole group
# goes too, so nothing it left in the background (a fork bomb, a stray server) outlives it.
# A process that wants to outlive its command has to leave the group (`setsid`).
RUN_COMMAND = f"""
timeout -s INT -k {GRACE} "$1" bash -c "$2" </dev/null & pid=$!
wait "$pid" 2>/dev/null; rc=$?
kill -KILL -- "-$pid" 2>/dev/null
exit "$rc"
"""


def run_command(
    client: DockerClient,
    container: str,
    command: str,
    *,
    user: str,
    workdir: str,
    env: dict[str, str],
    timeout: float,
    max_output: int,
    wrapper: str = RUN_COMMAND,
) -> ExecResult:
    """Run `command` with bash as `user`; stopped (with its children) at the timeout. `wrapper`
    takes the timeout and the command as $1 and $2 (the clean room's drops to the tester, and
    kills at once: a report the agent's code wrote after the interrupt is not to be read)."""
    argv = ["bash", "-c", wrapper, "prchain", f"{timeout:g}s", command]
    raw = client.exec(
        container,
        argv,
        user=user,
        workdir=workdir,
        env=env,
        limit=max_output,
        deadline=timeout + GRACE + 10,
    )
    timed_out = raw.exit_code in (124, 137) and raw.seconds >= timeout - 0.05
    return ExecResult(
        render(raw, timeout if timed_out else None), raw.exit_code, timed_out, raw.dropped > 0
    )


def render(raw: RawExec, killed_after: float | None) -> str:
    """Decode output; mark dropped bytes between head and tail, and a kill by timeout at the end."""
    text = raw.output[: raw.head].decode("utf-8", "replace")
    if raw.dropped:
        text += f"\n[... {raw.dropped} bytes of output truncated ...]\n"
    text += raw.output[raw.head :].decode("utf-8", "replace")
    if killed_after is not None:
        text += f"\n[command interrupted at its {killed_after:g} s timeout]"
    elif raw.exit_code == 137:
        text += "\n[command killed (SIGKILL), e.g. for exceeding the sandbox's memory limit]"
    return text
