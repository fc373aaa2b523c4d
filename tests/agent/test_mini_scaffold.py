"""mini-swe-agent as the rollout's scaffold (agent.scaffold: mini-swe-agent): a three-stage chain in
one real sandbox, mini-swe-agent's step asking the scripted server through prchain's client and
running the commands in prchain's sandbox; the judge's feedback round, the PRM hook, carry-forward from
stage to stage, and the export of what it made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.agent.config import AgentConfig
from prchain.agent.export import export_trajectories
from prchain.agent.formats.sharegpt import to_sharegpt
from prchain.app.config import Config
from prchain.app.rollout import make_chain_runner
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig
from prchain.prm.config import PRMConfig
from prchain.prm.guidance import PRM_MARKER
from prchain.store.config import StoreConfig
from prchain.store.models import EnvTransition, LLMCall, Rollout, RolloutStage, Step
from tests.agent.conftest import bash, seed_chain, verdict
from tests.support.llm_fixtures import FAKE_API_KEY
from tests.support.prm import verdict_json

pytestmark = pytest.mark.docker

SUBMIT = bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
SUBTRACT = 'def subtract(x, y):\n    """x minus y."""\n    return y - x\n'
MULTIPLY = 'def multiply(x, y):\n    """x times y."""\n    return x * y\n'
DIVIDE = 'def divide(x, y):\n    """x over y."""\n    return x / y\n'
COMMENT = "subtract takes x away from y; the task asks for y taken away from x."


def append(code: str) -> list[dict[str, object]]:
    return bash(f"printf '\\n\\n%s' '{code}' >> calc/ops.py && tail -4 calc/ops.py")


def script(fake_llm: ScriptedLLMServer) -> None:
    """Stage 1: a wrong subtract, judged 0.5, fixed after the comment (the PRM speaks once, after
    the fix), judged 0.9. Stages 2 and 3: multiply and divide beside the carried subtract."""
    fake_llm.push(model="policy", contains="Please solve this issue", tool_calls=bash("env"))
    fake_llm.push(model="policy", tool_calls=append(SUBTRACT))
    fake_llm.push(model="policy", tool_calls=SUBMIT)
    fake_llm.push(
        model="policy",
        contains=COMMENT,
        tool_calls=bash("sed -i 's/return y - x/return x - y/' calc/ops.py"),
    )
    fake_llm.push(model="policy", contains=PRM_MARKER, tool_calls=SUBMIT)
    for idx, code in ((2, MULTIPLY), (3, DIVIDE)):
        fake_llm.push(
            model="policy", contains=f"Task {idx} of 3", tool_calls=bash("cat calc/ops.py")
        )
        fake_llm.push(model="policy", tool_calls=append(code))
        fake_llm.push(model="policy", tool_calls=SUBMIT)
    fake_llm.push(model="judge", content=verdict(0.5, COMMENT))
    for _ in range(3):
        fake_llm.push(model="judge", content=verdict(0.9, "Equivalent to the reference."))
    fake_llm.push(model="prm", content=verdict_json())


def test_a_three_stage_chain_rolled_out_by_mini_swe_agent_carries_forward_and_exports(
    fake_llm: ScriptedLLMServer,
    sqlite_url: str,
    sqlite_engine: Engine,
    llm_config: LLMConfig,
    tmp_path: Path,
) -> None:
    seeded = seed_chain(sqlite_url, tmp_path, prs=(1, 2, 3))
    config = Config(
        store=StoreConfig(url=sqlite_url),
        llm=llm_config,
        agent=AgentConfig(scaffold="mini-swe-agent", max_steps_per_stage=10),
        prm=PRMConfig(variant="D", every=4, window=2),
    )
    script(fake_llm)
    runner = make_chain_runner(config, sqlite_engine, LLMClient(config.llm, sqlite_engine))
    result = runner.run(seeded.chain_id)

    assert (result.status, result.kept_stages, result.scores) == ("kept", 3, [0.9, 0.9, 0.9]), (
        result.reason
    )
    assert fake_llm.pending() == []
    policy = fake_llm.requests_for("policy")
    # mini-swe-agent's own prompt and its one bash tool, through prchain's client.
    assert {t["function"]["name"] for t in policy[0]["tools"]} == {"bash"}
    assert "Recommended Workflow" in policy[0]["messages"][1]["content"]
    # mini.yaml's observations are JSON: {"returncode": ..., "output": ...}.
    output = {i: json.loads(policy[i]["messages"][-1]["content"])["output"] for i in (1, 6, 9)}
    # The key stays on the host: `env` in the sandbox shows neither it nor its variable.
    assert "PATH=" in output[1] and FAKE_API_KEY not in output[1]
    assert "OPENAI_API_KEY" not in output[1]
    # Stage 2 sees the agent's own subtract carried over B_2 (g_1 reverted); stage 3 both.
    assert output[6].endswith(SUBTRACT.replace("y - x", "x - y")), output[6]
    assert output[9].endswith(MULTIPLY) and '"""x minus y."""' in output[9]
    assert "return a - b" not in output[9]  # the gold subtract is not there

    with Session(sqlite_engine) as session:
        steps = list(session.scalars(select(Step).filter_by(rollout_id=result.rollout_id)))
        stages = list(session.scalars(select(RolloutStage).order_by(RolloutStage.stage_idx)))
        transitions = list(session.scalars(select(EnvTransition).order_by(EnvTransition.stage_idx)))
        rollout = session.get(Rollout, result.rollout_id)
        assert rollout is not None
        assert rollout.config["agent"]["scaffold"] == "mini-swe-agent"
        assert rollout.agent_steps == 11 and rollout.tool_calls == 11
        # Each policy request is the rollout's llm_calls row (priced and budgeted from there).
        calls = select(LLMCall).filter_by(role="policy", rollout_id=result.rollout_id)
        policy_calls = list(session.scalars(calls))
        assert len(policy_calls) == len(policy) == 11
        assert all(c.status == "ok" and c.prompt_tokens > 0 for c in policy_calls)
    kinds = [s.kind for s in sorted(steps, key=lambda s: s.idx)]
    assert kinds.count("feedback") == 1 and kinds.count("prm") == 1 and kinds.count("query") == 3
    assert [t.reverted for t in transitions] == [[], [1], [2, 1]]  # newest first
    assert all(t.applied for t in transitions[1:])
    assert "+def divide" in stages[2].stage_diff and "+def multiply" not in stages[2].stage_diff
    assert all(f"+def {n}" in stages[2].cumulative_diff for n in ("subtract", "multiply", "divide"))
    assert "return x - y" in stages[2].cumulative_diff

    out = tmp_path / "trajectories.jsonl"
    summary = export_trajectories(sqlite_engine, out)
    assert summary.written == 1, summary.skipped
    record = json.loads(out.read_text())
    assert record["metadata"]["scaffold"] == "mini-swe-agent"
    assert [t["function"]["name"] for t in record["tools"]] == ["bash"]
    calls = [m for m in record["messages"] if m["role"] == "assistant"]
    answered = {m["tool_call_id"] for m in record["messages"] if m["role"] == "tool"}
    assert {c["id"] for m in calls for c in m["tool_calls"]} == answered  # submits answered too
    assert FAKE_API_KEY not in out.read_text()
    row = to_sharegpt(record)
    assert json.loads(row["tools"])[0]["name"] == "bash"
