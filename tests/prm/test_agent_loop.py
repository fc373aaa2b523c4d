"""The PRM inside the real agent loop: real container, real openai client, scripted server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.agent.config import AgentConfig
from prchain.agent.loop import AgentLoop
from prchain.agent.persist import Recorder
from prchain.app.config import Config
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import make_chain_repo
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_env import DockerEnvironment
from prchain.environments.protocol import StageSpec
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig
from prchain.prm.config import PRMConfig
from prchain.prm.guidance import PRM_MARKER, is_prm_message
from prchain.prm.hook import build_prm_hook
from prchain.store.models import PRMCall, Step
from tests.support.prm import verdict_json

pytestmark = pytest.mark.docker
TASK = "Add a subtract(a, b) function to calc/ops.py."


@pytest.fixture
def engine(sqlite_engine: Engine) -> Engine:
    """SQLite only: the store is not what these tests are about, and each run starts a container."""
    return sqlite_engine


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[DockerEnvironment]:
    repo = make_chain_repo(tmp_path / "calc")
    pr = repo.prs[1]
    env = DockerEnvironment(
        EnvironmentConfig(),
        repo="acme/calc",
        clone_path=str(repo.path),
        stages=[StageSpec(1, pr.base_sha, pr.gold_patch)],
    )
    with env:
        env.enter_stage(1)
        yield env


def _run_stage(
    llm_config: LLMConfig, engine: Engine, rollout_id: int, env: DockerEnvironment, **prm: Any
) -> AgentLoop:
    config = Config(llm=llm_config, prm=PRMConfig(variant="D", **prm))
    llm = LLMClient(config.llm, engine)
    hook = build_prm_hook(config.prm, llm, engine, rollout_id)
    loop = AgentLoop(
        llm,
        env,
        AgentConfig(max_steps_per_stage=20),
        sink=Recorder(engine, rollout_id),
        hook=hook,
        rollout_id=rollout_id,
    )
    opening = [
        ("system", {"role": "system", "content": "You are a coding agent."}),
        ("query", {"role": "user", "content": TASK}),
    ]
    assert loop.run_stage(1, TASK, opening=opening).submitted
    return loop


def _assistant_turns(body: dict[str, Any]) -> int:
    return sum(1 for m in body["messages"] if m["role"] == "assistant")


def _echo_step(body: dict[str, Any]) -> dict[str, Any]:
    n = _assistant_turns(body) + 1
    if n == 12:
        return {"tool_calls": [{"name": "submit", "arguments": {"summary": "done"}}]}
    return {"tool_calls": [{"name": "bash", "arguments": {"command": f"echo marker-$((40+{n}))"}}]}


def test_the_loop_invokes_the_prm_every_n_steps_with_the_last_k(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    engine: Engine,
    make_rollout,
    sandbox: DockerEnvironment,
) -> None:
    rollout_id = make_rollout("D")
    fake_llm.push(model="policy", responder=_echo_step, times=None)
    fake_llm.push(
        model="prm", content=verdict_json(status="on_track", detected={}, guidance=""), times=None
    )
    loop = _run_stage(llm_config, engine, rollout_id, sandbox, every=5, window=3)

    assert loop.chain.steps == 12  # 11 echo steps, then submit
    windows = []
    for request in fake_llm.requests_for("prm"):
        prompt = request["messages"][-1]["content"]
        windows.append([int(i) for i in re.findall(r"--- Step (\d+) \(stage 1\) ---", prompt)])
        assert TASK in prompt
    assert windows == [[3, 4, 5], [8, 9, 10]]
    last = fake_llm.requests_for("prm")[-1]["messages"][-1]["content"]
    assert "marker-$((40+10))" in last and "marker-50" in last  # the command and its real output
    with Session(engine) as session:
        rows = list(session.scalars(select(PRMCall).order_by(PRMCall.step_idx)))
    assert [(r.step_idx, r.task_status, r.injected) for r in rows] == [
        (5, "on_track", False),
        (10, "on_track", False),
    ]
    assert not any(is_prm_message(m) for m in loop.messages)  # clean windows stay silent


def _repetition_prm(body: dict[str, Any]) -> dict[str, Any]:
    """A PRM that flags a command repeated in its window, quoting how often."""
    prompt = body["messages"][-1]["content"]
    commands = re.findall(r"Action: bash (\{.*\})", prompt)
    repeated = {c: commands.count(c) for c in commands if commands.count(c) > 1}
    if not repeated:
        return {"content": verdict_json(status="on_track", detected={}, guidance="")}
    command, times = max(repeated.items(), key=lambda kv: kv[1])
    shown = json.loads(command)["command"]
    evidence = f"`{shown}` was run {times} times with identical output"
    guidance = f"Stop re-running `{shown}`: you already know calc/ops.py exists. Open it and add subtract()."
    return {
        "content": verdict_json(
            detected={"step_repetition": (evidence, "Move on to editing calc/ops.py.")},
            guidance=guidance,
        )
    }


def test_repeating_a_command_brings_step_repetition_guidance_into_the_next_policy_request(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    engine: Engine,
    make_rollout,
    sandbox: DockerEnvironment,
) -> None:
    rollout_id = make_rollout("D")
    # The policy submits only once it has read the supervisor's guidance (rules are tried in order).
    fake_llm.push(
        model="policy", contains=PRM_MARKER, tool_calls=[{"name": "submit", "arguments": {}}]
    )
    fake_llm.push(
        model="policy",
        tool_calls=[{"name": "bash", "arguments": {"command": "ls calc"}}],
        times=None,
    )
    fake_llm.push(model="prm", responder=_repetition_prm, times=None)
    loop = _run_stage(llm_config, engine, rollout_id, sandbox, every=5, window=8)

    policy = fake_llm.requests_for("policy")
    assert len(policy) == 6 and loop.chain.steps == 6
    guidance = policy[5]["messages"][-1]
    assert guidance["role"] == "user" and guidance["content"].startswith(PRM_MARKER)
    assert "Step repetition: `ls calc` was run 5 times with identical output" in guidance["content"]
    assert "Stop re-running `ls calc`" in guidance["content"]
    assert not any(PRM_MARKER in str(m.get("content")) for r in policy[:5] for m in r["messages"])
    # The observation the PRM judged came from the container.
    assert "ops.py" in fake_llm.requests_for("prm")[0]["messages"][-1]["content"]
    with Session(engine) as session:
        kinds = [
            s.kind
            for s in session.scalars(
                select(Step).where(Step.rollout_id == rollout_id).order_by(Step.idx)
            )
        ]
        (row,) = session.scalars(select(PRMCall))
    assert kinds[-3:] == ["prm", "assistant", "tool"]
    assert (row.step_idx, row.task_status, row.injected, row.status) == (
        5,
        "needs_correction",
        True,
        "ok",
    )
