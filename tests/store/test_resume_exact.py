"""Finding 5 of issue 23: after a kill during stage 2 the sandbox was rebuilt from the stored text
Δ with non-UTF-8 bytes replaced and a secret-shaped string replaced by [REDACTED], silently, and
the killed run's container stayed. The carried Δ is now stored byte for byte and re-applied
exactly, and the resume removes the dead runner's container of that rollout."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.app.rollout import store_label
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.environments.docker_client import DockerClient
from prchain.llm.config import LLMConfig
from prchain.store.models import RolloutStage
from prchain.store.opener import make_engine
from tests.agent.conftest import bash, seed_chain, submit, verdict
from tests.agent.test_resume import PRCHAIN, _config_file, _wait

pytestmark = [pytest.mark.docker, pytest.mark.slow]
# Stage 1 leaves bytes no text round trip keeps: Latin-1, a lone 0xff, a NUL, a binary file, a
# CRLF line, and a token-shaped string the redactor would replace.
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"
WORK = (
    "printf 'caf\\xe9 \\xff\\r\\n' > notes.txt && "
    "printf '\\x00\\x01\\x02\\xfe\\xff' > blob.bin && "
    f"printf 'FIXTURE_TOKEN = \"{TOKEN}\"\\n' >> calc/ops.py"
)
LOOK = "sha256sum notes.txt blob.bin calc/ops.py"


def _looks(server: ScriptedLLMServer) -> list[str]:
    """What `sha256sum` printed in each attempt at stage 2, as the policy was sent it (the killed
    attempt's steps are rewound on resume, but its requests reached the server)."""
    seen = []
    for body in server.requests_for("policy"):
        last = body["messages"][-1]
        if last.get("role") == "tool" and "notes.txt" in str(last.get("content")):
            seen.append(str(last["content"]))
    return seen


def _containers(url: str) -> set[str]:
    labels = {"prchain.store": store_label(url), "prchain.rollout": "1"}
    return {c["id"] for c in DockerClient().containers(labels)}


def test_resume_restores_the_agents_bytes_and_removes_the_orphan(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, sqlite_url: str, tmp_path: Path
) -> None:
    seed_chain(sqlite_url, tmp_path)
    config = _config_file(tmp_path, llm_config)
    reached, release = threading.Event(), threading.Event()

    def stall(_body: dict[str, Any]) -> dict[str, Any]:
        reached.set()
        release.wait(60)
        return {"tool_calls": bash("echo too late")}

    fake_llm.push(model="policy", tool_calls=bash(WORK))
    fake_llm.push(model="policy", tool_calls=submit())
    fake_llm.push(model="judge", content=verdict(0.9, "Done."))
    fake_llm.push(model="policy", contains="Task 2 of 2", tool_calls=bash(LOOK))
    fake_llm.push(model="policy", responder=stall)
    command = [*PRCHAIN, "rollout", "--config", str(config), "--db", sqlite_url]
    proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait(reached, proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
    orphans = _containers(sqlite_url)
    assert len(orphans) == 1  # the killed runner's sandbox is still there

    fake_llm.push(model="policy", contains="Task 2 of 2", tool_calls=bash(LOOK))
    fake_llm.push(model="policy", tool_calls=submit())
    fake_llm.push(model="judge", content=verdict(0.9, "Done."))
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "resumed" not in done.stderr  # exact: nothing to warn about

    before, after = _looks(fake_llm)
    assert before == after, "the resumed sandbox is not the tree the agent left"
    assert not orphans & _containers(sqlite_url), "the dead runner's container stayed"
    engine = make_engine(sqlite_url)
    with Session(engine) as session:
        stage = session.scalars(select(RolloutStage).where(RolloutStage.stage_idx == 1)).one()
        assert stage.carried_patch is not None and TOKEN.encode() in stage.carried_patch
        assert b"GIT binary patch" in stage.carried_patch and TOKEN not in stage.cumulative_diff
    engine.dispose()
