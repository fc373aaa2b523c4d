"""PRMHook against the real openai client and the local scripted server (role "prm" → model "prm")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from prchain.agent.hooks import HookContext, StepRecord
from prchain.app.config import Config
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig
from prchain.prm.config import PRMConfig
from prchain.prm.guidance import PRM_MARKER, is_prm_message
from prchain.prm.hook import PRMHook, build_prm_hook
from prchain.prm.taxonomy import load_taxonomy
from prchain.store.models import PRMCall
from tests.support.prm import TABLE1, TOOLS, bash_step, verdict_json

TASK = "Make calc.add handle negative numbers (see issue 12)."


def _hook(
    llm_config: LLMConfig, engine: Engine | None, rollout_id: int | None, **prm: Any
) -> PRMHook:
    config = Config(llm=llm_config, prm=PRMConfig(**{"variant": "D", **prm}))
    hook = build_prm_hook(config.prm, LLMClient(config.llm, engine), engine, rollout_id)
    assert hook is not None
    return hook


def _context(
    steps: list[StepRecord], rollout_id: int | None = None, tools: list[dict[str, Any]] = TOOLS
) -> HookContext:
    return HookContext(rollout_id, steps[-1].stage_idx, steps[-1].index, TASK, steps, tools)


def _steps(n: int) -> list[StepRecord]:
    return [bash_step(i, f"cat file_{i}.py", f"content of file {i}") for i in range(1, n + 1)]


def _prompt(request: dict[str, Any]) -> str:
    return request["messages"][-1]["content"]


def test_no_variant_means_no_hook(llm_config: LLMConfig) -> None:
    llm = LLMClient(llm_config)
    assert build_prm_hook(PRMConfig(), llm, None, 1) is None
    assert build_prm_hook(PRMConfig(variant="none"), llm, None, 1) is None


def test_hook_sees_exactly_the_last_k_steps_and_the_task(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    hook = _hook(llm_config, None, None, every=5, window=8)
    assert (hook.every, hook.window) == (5, 8)
    fake_llm.push(model="prm", content=verdict_json())
    hook(_context(_steps(12)))
    (request,) = fake_llm.requests_for("prm")
    prompt = _prompt(request)
    shown = [i for i in range(1, 13) if f"--- Step {i} (stage 1) ---" in prompt]
    assert shown == list(range(5, 13))
    assert "cat file_12.py" in prompt and "content of file 5" in prompt and "file_4" not in prompt
    assert TASK in prompt


def test_long_observations_are_cut_head_and_tail(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    hook = _hook(llm_config, None, None, max_observation_chars=200)
    fake_llm.push(model="prm", content=verdict_json())
    output = "HEAD-LINE\n" + "x" * 5000 + "\nTraceback: ZeroDivisionError"
    hook(_context([bash_step(1, "python reproduce.py", output)]))
    prompt = _prompt(fake_llm.requests_for("prm")[0])
    assert "HEAD-LINE" in prompt and "ZeroDivisionError" in prompt and "x" * 300 not in prompt
    assert "observation truncated" in prompt


EVIDENCE = "ran `ls calc` in steps 1, 2 and 3 with the same output"
GUIDANCE = "You already know the listing; open calc/ops.py and fix add()."


def _reply_for(name: str) -> str:
    if name == "S":
        return json.dumps({"analysis": f"The agent {EVIDENCE}.", "guidance": GUIDANCE})
    action = (
        {"tool": "bash", "arguments": {"command": "sed -n 1,40p calc/ops.py"}}
        if name == "DR"
        else None
    )
    return verdict_json(
        detected={"step_repetition": (EVIDENCE, "Move on to calc/ops.py.")},
        guidance=GUIDANCE,
        action=action,
    )


@pytest.mark.parametrize("name", list(TABLE1))
def test_each_variant_prompt_and_injection_follow_table1(
    name: str, fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    style, example, reasoning, action = TABLE1[name]
    hook = _hook(llm_config, None, None, variant=name)
    fake_llm.push(model="prm", content=_reply_for(name))
    injected = hook(_context([bash_step(i, "ls calc", "ops.py  __init__.py") for i in range(1, 4)]))

    prompt = _prompt(fake_llm.requests_for("prm")[0])
    keys = load_taxonomy().category_keys()
    assert all(key in prompt for key in keys) == (style != "simple")
    assert any(key in prompt for key in keys) == (style != "simple")
    assert ("How to recover:" in prompt) == (style == "detailed")  # concise lists definitions only
    assert ("An example" in prompt) == example
    assert ('"recommended_action"' in prompt) == action
    assert ("* str_replace_editor" not in prompt) and (
        ("* bash:" in prompt) == action
    )  # DR sees the agent's tools
    assert ('"analysis"' in prompt) == (style == "simple")

    (message,) = injected
    text = message["content"]
    assert message["role"] == "user" and text.startswith(PRM_MARKER) and is_prm_message(message)
    assert GUIDANCE in text
    assert (EVIDENCE in text) == reasoning  # the G variants pass the guidance only
    assert ("Assessment: needs correction" in text) == (reasoning and style != "simple")
    assert ('Recommended next action: bash(command="sed -n 1,40p calc/ops.py")' in text) == action


def test_a_clean_window_injects_nothing_unless_configured(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    quiet = verdict_json(status="on_track", detected={}, guidance="")
    fake_llm.push(model="prm", content=quiet)
    steps = _steps(3)
    assert _hook(llm_config, None, None)(_context(steps)) == []
    talkative = _hook(llm_config, None, None, inject_when_on_track=True)
    fake_llm.push(
        model="prm",
        content=verdict_json(status="on_track", detected={}, guidance="Good: now run the tests."),
    )
    (message,) = talkative(_context(_steps(4)))
    assert "Good: now run the tests." in message["content"]


def _rows(engine: Engine) -> list[PRMCall]:
    with Session(engine) as session:
        return list(session.scalars(select(PRMCall).order_by(PRMCall.id)))


def test_malformed_reply_is_reasked_then_used_and_stored(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine, make_rollout
) -> None:
    rollout_id = make_rollout("D")
    hook = _hook(llm_config, engine, rollout_id)
    fake_llm.push(model="prm", content="The agent looks like it is looping, I would say.")
    fake_llm.push(model="prm", content=verdict_json(), contains="could not be used")
    injected = hook(_context(_steps(5)))
    assert len(injected) == 1 and GUIDANCE not in injected[0]["content"]
    first, second = fake_llm.requests_for("prm")
    assert "expected a JSON object" in _prompt(second)
    assert second["messages"][-2] == {
        "role": "assistant",
        "content": "The agent looks like it is looping, I would say.",
    }

    (row,) = _rows(engine)
    assert (row.status, row.attempts, row.injected, row.task_status, row.variant) == (
        "ok",
        2,
        True,
        "needs_correction",
        "D",
    )
    assert (row.rollout_id, row.stage_idx, row.step_idx, row.model) == (rollout_id, 1, 5, "prm")
    assert [s["index"] for s in row.window] == [1, 2, 3, 4, 5]
    assert (
        row.verdict["findings"][2]["category"] == "step_repetition"
        and row.verdict["findings"][2]["detected"]
    )
    outcome = hook.outcomes[0]
    assert row.prompt_tokens == outcome.prompt_tokens > 0 and row.completion_tokens > 0
    # The test price is $1 / $2 per million prompt / completion tokens.
    assert row.cost_usd == pytest.approx((row.prompt_tokens + 2 * row.completion_tokens) / 1e6)


def test_a_prm_that_never_answers_properly_does_not_break_the_rollout(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine, make_rollout
) -> None:
    rollout_id = make_rollout("DR")
    hook = _hook(llm_config, engine, rollout_id, variant="DR", max_parse_retries=2)
    # A verdict recommending a tool the agent does not have is malformed too.
    fake_llm.push(
        model="prm", content=verdict_json(action={"tool": "python", "arguments": {}}), times=3
    )
    assert hook(_context(_steps(5))) == []
    assert len(fake_llm.requests_for("prm")) == 3
    (row,) = _rows(engine)
    assert (row.status, row.attempts, row.injected, row.verdict, row.task_status) == (
        "invalid_output",
        3,
        False,
        None,
        None,
    )
    assert "not one of the agent's tools" in row.error

    fake_llm.push(model="prm", status=500, times=None)  # the PRM's server is down: still no crash
    assert hook(_context(_steps(10))) == []
    assert _rows(engine)[-1].status == "llm_error"


def test_rerunning_the_same_step_overwrites_its_row(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine, make_rollout
) -> None:
    rollout_id = make_rollout("CG")
    fake_llm.push(model="prm", content=verdict_json(), times=None)
    for _ in range(2):
        _hook(llm_config, engine, rollout_id, variant="CG")(
            _context(_steps(5), rollout_id=rollout_id)
        )
    with Session(engine) as session:
        assert session.scalar(select(func.count()).select_from(PRMCall)) == 1
