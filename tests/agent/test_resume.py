"""Kill `prchain rollout` with SIGKILL in the middle of stage 2, run it again: it resumes at the stage start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from prchain.app.rollout import store_label
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.environments import cleanup
from prchain.environments.docker_client import DockerClient
from prchain.llm.config import LLMConfig
from prchain.store.models import EnvTransition, Judgement, Rollout, RolloutStage, Step
from prchain.store.opener import make_engine
from tests.agent.conftest import bash, edit, seed_chain, submit, verdict

pytestmark = [pytest.mark.docker, pytest.mark.slow]
PRCHAIN = [str(Path(sys.executable).with_name("prchain"))]
SUBTRACT = "    return a + b\n\n\ndef subtract(x, y):\n    return x - y  # carried\n"


def _config_file(tmp_path: Path, llm_config: LLMConfig) -> Path:
    path = tmp_path / "prchain.yaml"
    path.write_text(
        yaml.safe_dump(
            {"llm": llm_config.model_dump(mode="json"), "agent": {"max_steps_per_stage": 20}}
        )
    )
    return path


def _script_stage_one(fake_llm: ScriptedLLMServer) -> None:
    fake_llm.push(
        model="policy",
        tool_calls=edit(
            command="str_replace",
            path="calc/ops.py",
            old_str="    return a + b\n",
            new_str=SUBTRACT,
        ),
    )
    fake_llm.push(model="policy", tool_calls=submit())
    fake_llm.push(model="judge", content=verdict(0.9, "Subtraction works."))


def _script_stage_two(fake_llm: ScriptedLLMServer) -> None:
    fake_llm.push(model="policy", contains="Task 2 of 2", tool_calls=bash("cat calc/ops.py"))
    fake_llm.push(
        model="policy",
        tool_calls=edit(
            command="create", path="calc/mul.py", file_text="def times(x, y):\n    return x * y\n"
        ),
    )
    fake_llm.push(model="policy", tool_calls=submit())
    fake_llm.push(model="judge", content=verdict(0.95, "Multiplication works."))


def _wait(event: threading.Event, proc: subprocess.Popen[bytes], seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while not event.wait(0.2):
        if proc.poll() is not None:
            raise AssertionError(
                f"rollout exited early ({proc.returncode}): {proc.stderr.read().decode()[-2000:]}"
            )  # type: ignore[union-attr]
        if time.monotonic() > deadline:
            raise AssertionError("the rollout never reached stage 2")


def _rows(url: str) -> dict[str, Any]:
    engine = make_engine(url)
    with Session(engine) as session:
        data = {
            "rollouts": [(r.id, r.status) for r in session.scalars(select(Rollout))],
            "steps": [
                (s.id, s.idx, s.stage_idx, s.kind)
                for s in session.scalars(select(Step).order_by(Step.idx))
            ],
            "stages": [
                (s.stage_idx, s.status)
                for s in session.scalars(select(RolloutStage).order_by(RolloutStage.stage_idx))
            ],
            "judgements": session.scalar(select(func.count()).select_from(Judgement)),
            "transitions": [
                t.stage_idx
                for t in session.scalars(select(EnvTransition).order_by(EnvTransition.stage_idx))
            ],
            "stage2_look": [
                s.observation
                for s in session.scalars(
                    select(Step).where(Step.stage_idx == 2, Step.kind == "tool")
                )
            ],
        }
    engine.dispose()
    return data


def _rollout_stalled_in_stage_two(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, url: str, tmp_path: Path
) -> tuple[list[str], subprocess.Popen[bytes], threading.Event, threading.Event]:
    """(its command, the running `prchain rollout`, set once its policy call of stage 2 arrived,
    set to let that call answer): stage 1 scripted to pass, stage 2's first call held."""
    config = _config_file(tmp_path, llm_config)
    reached, release = threading.Event(), threading.Event()

    def stall(_body: dict[str, Any]) -> dict[str, Any]:
        reached.set()
        release.wait(60)
        return {"tool_calls": bash("echo too late")}

    _script_stage_one(fake_llm)
    fake_llm.push(model="policy", contains="Task 2 of 2", responder=stall)
    command = [*PRCHAIN, "rollout", "--config", str(config), "--db", url]
    proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return command, proc, reached, release


def test_a_killed_rollout_resumes_at_the_start_of_its_stage(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, db_url: str, tmp_path: Path
) -> None:
    seeded = seed_chain(db_url, tmp_path)
    command, proc, reached, release = _rollout_stalled_in_stage_two(
        fake_llm, llm_config, db_url, tmp_path
    )
    try:
        _wait(reached, proc)
        before = _rows(db_url)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
    # The killed owner's container, as `prchain env gc` would; narrowed to this test's store so
    # no one else's orphan on a shared engine goes with it.
    cleanup.gc(DockerClient(), labels={"prchain.store": store_label(db_url)})

    assert before["rollouts"] == [(1, "running")] and before["stages"] == [
        (1, "passed"),
        (2, "running"),
    ]
    assert before["steps"][-1][2:] == (2, "query")
    stage_one = [s for s in before["steps"] if s[2] == 1]

    _script_stage_two(fake_llm)
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]

    after = _rows(db_url)
    assert after["rollouts"] == [(1, "kept")]
    assert [s for s in after["steps"] if s[2] == 1] == stage_one  # completed stage kept as it was
    assert [s[1] for s in after["steps"]] == list(range(len(after["steps"])))
    assert [s[3] for s in after["steps"]].count("query") == 2
    assert after["stages"] == [(1, "passed"), (2, "passed")] and after["judgements"] == 2
    assert after["transitions"] == [1, 2]
    # The rebuilt sandbox held the agent's stage-1 work when stage 2 restarted.
    assert "return x - y  # carried" in after["stage2_look"][0]
    resumed = [
        r
        for r in fake_llm.requests_for("policy")
        if "Task 2 of 2" in str(r["messages"][-1]["content"])
    ]
    assert len(resumed) == 2  # the killed attempt and the resumed one, each starting stage 2 afresh
    assert seeded.chain_id == 1


def _status(url: str) -> list[tuple[int, str]]:
    engine = make_engine(url)
    with Session(engine) as session:
        found = [(r.id, r.status) for r in session.scalars(select(Rollout))]
    engine.dispose()
    return found


def test_sigterm_removes_the_rollouts_sandbox_and_the_rollout_resumes_later(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, sqlite_url: str, tmp_path: Path
) -> None:
    """The sandbox opens in a worker thread of the local backend, where no signal handler can be
    set: SIGTERM killed the process at once and left it running (issue 50)."""
    seed_chain(sqlite_url, tmp_path)
    command, proc, reached, release = _rollout_stalled_in_stage_two(
        fake_llm, llm_config, sqlite_url, tmp_path
    )
    mine = {
        "prchain.owner_pid": str(proc.pid),
        "prchain.owner_start": cleanup.process_start(proc.pid),
    }
    client = DockerClient()
    try:
        _wait(reached, proc)
        assert client.containers(mine)  # stage 2's sandbox, its agent waiting for the model
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        while client.containers(mine) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert client.containers(mine) == []  # removed while the worker still waits
        release.set()  # the worker's next command finds its sandbox gone and starts none
        assert proc.wait(60) == 128 + signal.SIGTERM
        assert client.containers(mine) == []
    finally:
        release.set()
        proc.kill()
        proc.wait()
        for left in client.containers(mine):
            client.remove_container(left["id"])  # only this test's own, should it fail
    assert _status(sqlite_url) == [(1, "failed")]  # the next `prchain rollout` resumes it

    _script_stage_two(fake_llm)
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _status(sqlite_url) == [(1, "kept")]
