"""`prchain tests verify` stopped while a stage's test command runs in its sandbox (issue 50): Ctrl-C
ends it within seconds, not after the stage's remaining runs, and SIGTERM removes the sandbox."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import docker
import pytest
import yaml
from click.testing import CliRunner

from prchain.cli import main
from prchain.dev.repos import ChainRepo
from prchain.environments.cleanup import process_start
from tests.verdicts.conftest import GEO_REPO

pytestmark = [pytest.mark.docker, pytest.mark.slow]

LONG = "sleep 300"  # the stage's test command: far longer than the test waits
# A user's process: Ctrl-C reaches it through Python's default SIGINT handler, even when this
# suite was started with SIGINT ignored (which a child inherits).
VERIFY = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from prchain.cli import main; main()"
)


def _store(tmp_path: Path, geo_repo: ChainRepo, db: str) -> list[str]:
    """A store with the geo chain, whose test command runs LONG; the `--config/--db` options."""
    config = tmp_path / "prchain.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "verdicts": {"repos": {GEO_REPO: {"test": LONG}}},
                "environment": {"log_dir": str(tmp_path / "logs")},
                "chains": {"min_chain_code_lines": 0},
            }
        )
    )
    common = ["--config", str(config), "--db", db]
    mine = ["mine", "--source", "git", "--name", GEO_REPO, str(geo_repo.path)]
    for args in (mine, ["chains", "build"]):
        result = CliRunner().invoke(main, [*args, *common], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return common


def _running_long(
    docker_client: Any, owner: dict[str, str], proc: subprocess.Popen[bytes]
) -> dict[str, Any]:
    """The sandbox the process labelled `owner` started, once LONG runs in it. A container
    listed a moment before may have stopped or gone by the time its processes are asked for
    (the run's earlier sandboxes): that one is not it."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        for box in docker_client.containers(owner):
            try:
                top = docker_client.api.top(box["id"]).get("Processes") or []
            except docker.errors.APIError as gone:
                if gone.status_code in (404, 409):
                    continue
                raise
            if any(row[-1] == LONG for row in top):
                return box
        time.sleep(0.5)
    pytest.fail(f"no sandbox ran {LONG!r} (verify exited {proc.poll()})")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_verify_at_once_and_removes_its_sandbox(
    tmp_path: Path,
    geo_repo: ChainRepo,
    sqlite_url: str,
    base_image: str,
    docker_client: Any,
    signum: int,
) -> None:
    common = _store(tmp_path, geo_repo, sqlite_url)
    said = tmp_path / "verify.out"
    with said.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", VERIFY, "tests", "verify", *common],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
    # The labels of whatever this run's process starts (pids are reused; their start times differ).
    mine = {"prchain.owner_pid": str(proc.pid), "prchain.owner_start": process_start(proc.pid)}
    try:
        box = _running_long(docker_client, mine, proc)
        assert box["labels"].get("prchain.verify")  # the verify sandbox, not some other container
        sent = time.monotonic()
        proc.send_signal(signum)
        # Before the fix Ctrl-C waited for the worker thread's whole stage (here 5 runs of 300 s).
        code = proc.wait(timeout=60)
        assert time.monotonic() - sent < 30, said.read_text()
        assert code != 0, said.read_text()
        assert docker_client.containers(mine) == []  # SIGTERM too: nothing left for `env gc`
    finally:
        proc.kill()
        proc.wait()
        for left in docker_client.containers(mine):
            docker_client.remove_container(left["id"])  # only this test's own, should it fail
