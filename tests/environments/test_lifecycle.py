"""No container outlives its owner: normal exit, Ctrl-C and SIGTERM clean up; `prchain env gc` after SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from prchain.cli import main
from prchain.environments.cleanup import process_start
from tests.support import foreign_docker

pytestmark = pytest.mark.docker

# This module's containers carry this label and its `env gc` runs are narrowed to it, so the suite
# never removes an orphan container someone else left on a shared engine.
RUN = f"lifecycle-{os.getpid()}-{uuid.uuid4().hex[:8]}"
GC = ["env", "gc", "--label", f"prchain.test_run={RUN}"]

# The owner is a user's process: Ctrl-C reaches it through Python's default SIGINT handler. A child
# inherits an ignored SIGINT (a suite started in the background by a shell without job control, or a
# test before this one that ignored it), and Python then keeps ignoring it: restore the default.
OWNER = textwrap.dedent("""
    import signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.factory import open_environment
    from prchain.environments.protocol import StageSpec

    stages = [StageSpec(1, sys.argv[2], "")]
    with open_environment(EnvironmentConfig(), repo="acme/calc", clone_path=sys.argv[1], stages=stages,
                          labels={"prchain.chain": "test", "prchain.test_run": sys.argv[4]}) as env:
        env.enter_stage(1)
        print(env.container_id, flush=True)
        if sys.argv[3] == "wait":
            time.sleep(300)
    print("closed", flush=True)
""")


def start_owner(
    tmp_path: Path, calc_chain, mode: str, run: str = RUN
) -> tuple[subprocess.Popen[str], str]:
    script = tmp_path / "owner.py"
    script.write_text(OWNER)
    proc = subprocess.Popen(
        [
            sys.executable,
            str(script),
            str(calc_chain.path),
            calc_chain.stages[0].base_sha,
            mode,
            run,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    container = proc.stdout.readline().strip()
    assert container, "the owner process did not start a container"
    return proc, container


def exists(docker_client, container: str) -> bool:
    return any(c["id"] == container for c in docker_client.containers({"prchain.managed": "1"}))


def test_normal_exit_removes_the_container(tmp_path, calc_chain, calc_image, docker_client) -> None:
    proc, container = start_owner(tmp_path, calc_chain, "exit")
    assert proc.wait(timeout=60) == 0
    assert not exists(docker_client, container)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_and_sigterm_remove_the_container(
    tmp_path, calc_chain, calc_image, docker_client, signum
) -> None:
    proc, container = start_owner(tmp_path, calc_chain, "wait")
    assert exists(docker_client, container)
    proc.send_signal(signum)
    _, said = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert not exists(docker_client, container)
    # said before the engine's removal is waited for, so the user knows the signal was heard
    assert f"prchain: {signum.name}: removing 1 container(s) this process started" in said


def test_sigkill_leaves_a_container_that_env_gc_removes(
    tmp_path, calc_chain, calc_image, docker_client, foreign_docker_objects
) -> None:
    proc, container = start_owner(tmp_path, calc_chain, "wait")
    labels = next(
        c["labels"]
        for c in docker_client.containers({"prchain.managed": "1"})
        if c["id"] == container
    )
    assert labels["prchain.chain"] == "test" and labels["prchain.owner_pid"] == str(proc.pid)
    proc.kill()
    proc.wait(timeout=30)
    assert exists(docker_client, container)  # nobody could clean up after SIGKILL…
    result = CliRunner().invoke(main, GC)
    assert result.exit_code == 0, result.output
    assert not exists(docker_client, container)  # …until gc, which saw the owner was gone
    assert "container(s) removed" in result.output
    # Another store's orphan (the session's sentinel, owner gone too) is outside the label.
    assert foreign_docker_objects is not None
    assert not foreign_docker.missing(docker_client, foreign_docker_objects)


def test_gc_keeps_containers_of_live_owners(make_env, docker_client) -> None:
    env = make_env(labels={"prchain.test_run": RUN})
    result = CliRunner().invoke(main, GC)
    assert result.exit_code == 0
    assert exists(docker_client, env.container_id)


def test_gc_leaves_image_builds_alone(docker_client, base_image) -> None:
    """A build's step containers inherit the base image's managed label but are no sandbox."""
    from prchain.environments.docker_client import ContainerSpec

    step = docker_client.run(
        ContainerSpec(
            image=base_image,
            name=f"prchain-build-step-{os.getpid()}",
            labels={"prchain.test_run": RUN},
            environment={},
        )
    )
    try:
        labels = next(c["labels"] for c in docker_client.containers({}) if c["id"] == step)
        assert labels.get("prchain.managed") == "1" and "prchain.owner_pid" not in labels
        result = CliRunner().invoke(main, GC)
        assert result.exit_code == 0 and exists(docker_client, step)
    finally:
        docker_client.remove_container(step)


# SIGTERM between the engine starting a container and the owner registering it: `env setup`
# killed while it opened a verification sandbox left one running. The owner starts one on an
# engine it watches and never registers it.
UNREGISTERED = textwrap.dedent("""
    import sys, time
    from prchain.environments import cleanup
    from prchain.environments.docker_client import ContainerSpec, DockerClient

    client = DockerClient()
    cleanup.watch(client)
    labels = {**cleanup.owner_labels(), "prchain.kind": "sandbox", "prchain.test_run": sys.argv[3]}
    spec = ContainerSpec(image=sys.argv[1], name=sys.argv[2], labels=labels, environment={})
    print(client.run(spec), flush=True)
    time.sleep(300)
""")


def test_sigterm_removes_a_container_it_never_registered(
    tmp_path, base_image, docker_client
) -> None:
    script = tmp_path / "unregistered.py"
    script.write_text(UNREGISTERED)
    name = f"prchain-test-unregistered-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen(
        [sys.executable, str(script), base_image, name, RUN], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        container = proc.stdout.readline().strip()
        assert container and exists(docker_client, container)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) != 0
        assert not exists(docker_client, container)
    finally:
        proc.kill()
        for left in docker_client.containers({"prchain.test_run": RUN}):
            if left["name"] == name:  # only this test's own container, should the product fail
                docker_client.remove_container(left["id"])


# Ctrl-C while a worker thread's sandbox runs a long command (`tests verify`, rollouts): the main
# thread's handler removes the sandbox, and the worker, back from its command, goes on to its next
# step. That step must not start a new sandbox (and run the rest of the stage there before the
# process can exit: `tests verify` did, in a new container, when the signal came between two
# runs). The handlers are set in the main thread, as `backend_for` does.
WORKER = textwrap.dedent("""
    import signal, sys, threading, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from prchain.environments import cleanup
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.factory import open_environment
    from prchain.environments.protocol import StageSpec

    cleanup.install_handlers()
    stages = [StageSpec(1, sys.argv[2], "")]
    env = open_environment(EnvironmentConfig(), repo="acme/calc", clone_path=sys.argv[1],
                           stages=stages, labels={"prchain.test_run": sys.argv[3]})

    done = threading.Event()

    def work():
        env.enter_stage(1)
        print(env.container_id, flush=True)
        for step in ("sleep 300", "true"):
            try:
                print(step, env.execute(step).exit_code, env.container_id, flush=True)
            except Exception as exc:
                print(step, type(exc).__name__, flush=True)
            time.sleep(2)  # host-side work between steps: the handler is done by the next one
        done.set()

    threading.Thread(target=work).start()
    try:
        done.wait()
    except KeyboardInterrupt:
        done.wait()  # as a backend waits for its running calls before it re-raises
        sys.exit(130)
""")


def running(docker_client, container: str, command: str) -> None:
    for _ in range(120):
        if any(row[-1] == command for row in docker_client.api.top(container)["Processes"] or []):
            return
        time.sleep(0.5)
    pytest.fail(f"{command!r} never ran in {container[:12]}")


def test_after_ctrl_c_a_worker_starts_no_new_sandbox(
    tmp_path, calc_chain, calc_image, docker_client
) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(calc_chain.path), calc_chain.stages[0].base_sha, RUN],
        stdout=subprocess.PIPE,
        text=True,
    )
    mine = {"prchain.owner_pid": str(proc.pid), "prchain.owner_start": process_start(proc.pid)}
    try:
        assert proc.stdout is not None
        container = proc.stdout.readline().strip()
        assert container and exists(docker_client, container)
        running(docker_client, container, "sleep 300")
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 130, out
        assert not exists(docker_client, container)
        assert "true ProcessStopping" in out.splitlines(), out
        assert docker_client.containers(mine) == []
    finally:
        proc.kill()
        proc.wait()
        for left in docker_client.containers(mine):
            docker_client.remove_container(left["id"])  # only this test's own, should it fail


def test_a_scratch_tree_is_removed_and_once_stopping_without_waiting(tmp_path, monkeypatch) -> None:
    """An era build's exported tree goes when the build ends; once a signal is stopping the
    process, a detached `rm` takes it, in its own session, and the process does not wait."""
    from prchain.environments import cleanup

    def tree(name: str) -> Path:
        root = tmp_path / name
        (root / "src" / "deep").mkdir(parents=True)
        (root / "src" / "deep" / "file.rs").write_text("fn main() {}\n")
        return root

    quiet = tree("quiet")
    cleanup.discard(quiet)
    assert not quiet.exists()

    stopping = tree("stopping")
    spawned: list[dict[str, object]] = []
    real_popen = subprocess.Popen

    def popen(argv, **kwargs):
        spawned.append({"argv": argv, **kwargs})
        return real_popen(argv, **kwargs)

    monkeypatch.setattr(cleanup, "_stopping", "SIGINT")
    monkeypatch.setattr(cleanup.subprocess, "Popen", popen)
    cleanup.discard(stopping)
    assert spawned and spawned[0]["argv"][-1] == str(stopping)
    assert spawned[0]["start_new_session"] is True  # the next Ctrl-C does not stop the removal
    for _ in range(300):  # the detached rm ends on its own; this only waits for it to finish
        if not stopping.exists():
            break
        time.sleep(0.1)
    assert not stopping.exists()
