"""What a small model behind llama.cpp's server did to the agent (issue 21), replayed against the
strict scripted server: one test per finding, each through the real client, store and container."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.agent.runner import ChainRunner
from prchain.dev.chat_checks import NULL_CONTENT
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.environments.docker_env import DockerEnvironment
from prchain.llm.config import LLMConfig
from prchain.store.models import LLMCacheEntry, LLMCall, LLMRepair, Rollout, RolloutStage, Step
from tests.agent.conftest import seed_chain, submit, verdict
from tests.agent.test_loop import TASK, _loop, _open, sandbox  # noqa: F401 (module fixture)

pytestmark = pytest.mark.docker

TEXT_CALL = '<tool_call>\n{"name": "bash", "arguments": {"command": "ls calc"}}\n</tool_call>'
# A change the gates accept (a stage whose agent changed nothing fails before the judge).
TEXT_EDIT = (
    '<tool_call>\n{"name": "bash", "arguments": {"command": '
    "\"printf '\\\\ndef subtract(a, b):\\\\n    return a - b\\\\n' >> calc/ops.py\"}}\n</tool_call>"
)
TEXT_SUBMIT = '{"name": "submit", "arguments": {"summary": "done"}}'


def _steps(engine: Engine) -> list[Step]:
    with Session(engine) as session:
        return list(session.scalars(select(Step).order_by(Step.idx)))


def _repairs(engine: Engine) -> list[str]:
    with Session(engine) as session:
        return sorted(session.scalars(select(LLMRepair.kind)))


def _observations(engine: Engine) -> list[str]:
    return [s.message["content"] for s in _steps(engine) if s.kind == "tool"]


# -- finding 1: tool mode against a real server; the failure path ---------------------------------


def test_a_repaired_text_call_goes_back_with_string_content_and_the_chain_is_kept(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    assert fake_llm.strict
    seeded = seed_chain(str(sqlite_engine.url), tmp_path, prs=(1,))
    fake_llm.push(model="policy", content=TEXT_EDIT)  # the only shape that server ever sent
    fake_llm.push(model="policy", content=TEXT_SUBMIT)
    fake_llm.push(model="judge", content=verdict(0.9, "Fine."))
    result = make_runner(sqlite_engine).run(seeded.chain_id)
    assert result.status == "kept", result.reason
    assert fake_llm.refused == []
    second = fake_llm.requests_for("policy")[1]["messages"]
    turns = [m for m in second if m["role"] == "assistant"]
    assert turns and all(isinstance(m["content"], str) for m in turns)


def test_a_server_failure_is_one_typed_line_on_both_rows_and_a_rerun_continues(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    seeded = seed_chain(str(sqlite_engine.url), tmp_path, prs=(1,))
    # What llama.cpp answered: a 500 whose message carries a stack frame on its next lines.
    fake_llm.push(
        model="policy",
        responder=lambda body: {"status": 500},
        times=None,
    )
    failed = make_runner(sqlite_engine).run(seeded.chain_id)
    assert failed.status == "failed"
    assert failed.reason is not None and "\n" not in failed.reason
    assert failed.reason.startswith("LLMUnavailable: policy (policy): HTTP 500")
    assert "{" not in failed.reason and "Error code" not in failed.reason
    with Session(sqlite_engine) as session:
        rollout = session.scalars(select(Rollout)).one()
        stages = list(session.scalars(select(RolloutStage)))
    assert (rollout.status, rollout.reason) == ("failed", failed.reason)
    assert [(s.status, s.reason) for s in stages] == [("failed", failed.reason)]

    # The server is fixed: the rerun resumes the same rollout instead of replaying the failure.
    fake_llm.reset()
    fake_llm.push(model="policy", content=TEXT_EDIT)
    fake_llm.push(model="policy", tool_calls=submit())
    fake_llm.push(model="judge", content=verdict(0.9, "Fine."))
    again = make_runner(sqlite_engine).run(seeded.chain_id)
    assert (again.status, again.rollout_id) == ("kept", failed.rollout_id), again.reason
    with Session(sqlite_engine) as session:
        stages = list(session.scalars(select(RolloutStage)))
        rollout = session.scalars(select(Rollout)).one()
    assert [s.status for s in stages] == ["passed"] and rollout.reason is None


def test_the_strict_server_refuses_what_llama_cpp_refuses(fake_llm: ScriptedLLMServer) -> None:
    import openai

    client = openai.OpenAI(base_url=fake_llm.base_url, api_key="x", max_retries=0)
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    cases: list[tuple[list[dict[str, Any]], int, str]] = [
        ([{"role": "assistant", "content": None, "tool_calls": [call]}], 500, NULL_CONTENT),
        ([{"role": "robot", "content": "hi"}], 400, "unknown role"),
        (
            [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "c9", "content": "x"},
            ],
            400,
            "c9",
        ),
        (
            [
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "user", "content": "?"},
            ],
            400,
            "unanswered",
        ),
    ]
    for messages, status, words in cases:
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
        assert caught.value.status_code == status and words in str(caught.value)
    assert len(fake_llm.refused) == len(cases)


# -- finding 2: format errors are never cached -----------------------------------------------------


def test_a_policy_reply_without_an_action_is_not_cached(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_engine: Engine,
    sandbox: DockerEnvironment,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_llm.push(model="policy", content="Let me think about the layout first.")
    fake_llm.push(model="policy", tool_calls=submit())
    loop = _loop(llm_config, sqlite_engine, sandbox, tmp_path)
    assert loop.run_stage(1, TASK, opening=_open()).submitted
    with Session(sqlite_engine) as session:
        entries = {e.response["content"]: e for e in session.scalars(select(LLMCacheEntry))}
        statuses = list(session.scalars(select(LLMCall.status).order_by(LLMCall.id)))
    refused = entries["Let me think about the layout first."]
    assert not refused.valid and "did not call a tool" in (refused.error or "")
    assert statuses == ["format_error", "ok"]


# -- finding 3: the loop guard ---------------------------------------------------------------------


def test_a_copied_placeholder_is_not_run_and_ends_the_stage_after_one_warning(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_engine: Engine,
    sandbox: DockerEnvironment,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_llm.push(model="policy", content="```bash\n<one shell command>\n```", times=None)
    loop = _loop(llm_config, sqlite_engine, sandbox, tmp_path, action_format="text")
    run = loop.run_stage(1, TASK, opening=_open(action_format="text"))
    assert not run.submitted
    assert run.reason == "the same failing action repeated 3 times: bash `<one shell command>`"
    observations = _observations(sqlite_engine)
    assert len(observations) == 3 and all("it was not run" in o for o in observations)
    assert sum("one more identical failure ends the task" in o for o in observations) == 1


def test_the_same_failing_command_ends_the_stage_but_a_different_one_resets_the_count(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_engine: Engine,
    sandbox: DockerEnvironment,  # noqa: F811
    tmp_path: Path,
) -> None:
    missing = [{"name": "bash", "arguments": {"command": "cat calc/missing.py"}}]
    for calls in (missing, missing, [{"name": "bash", "arguments": {"command": "ls"}}]):
        fake_llm.push(model="policy", tool_calls=calls)
    fake_llm.push(model="policy", tool_calls=missing, times=None)
    loop = _loop(llm_config, sqlite_engine, sandbox, tmp_path)
    run = loop.run_stage(1, TASK, opening=_open())
    assert run.reason == "the same failing action repeated 3 times: bash `cat calc/missing.py`"
    observations = _observations(sqlite_engine)
    assert len(observations) == 6  # 2 failures, ls, then 3 more
    assert ["has now failed 2 times in a row" in o for o in observations] == [
        False,
        True,
        False,
        False,
        True,
        False,
    ]


# -- finding 4: nothing of a parsed call stays behind ------------------------------------------------


TWO_CALLS = (
    '{"name": "bash", "arguments": {"command": "ls calc"}}\n'
    '{"name": "bash", "arguments": {"command": "cat calc/ops.py"}}'
)
ECHOED = json.dumps(
    {
        "name": "bash",
        "description": "Run a shell command in the repository.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
)


@pytest.mark.parametrize("action_format", ["tools", "text"])
def test_reply_shapes_leave_no_call_text_behind(
    action_format: str,
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_engine: Engine,
    sandbox: DockerEnvironment,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_llm.push(model="policy", content=TWO_CALLS)
    fake_llm.push(model="policy", content=TEXT_CALL + "\n}")  # a stray brace after the call
    fake_llm.push(model="policy", content=ECHOED)
    fake_llm.push(model="policy", content='{"name": "bash", "arguments": {}}')
    fake_llm.push(model="policy", content='{"name": "python", "arguments": {"code": "1"}}')
    fake_llm.push(model="policy", content=TEXT_SUBMIT)
    loop = _loop(
        llm_config,
        sqlite_engine,
        sandbox,
        tmp_path,
        action_format=action_format,
        max_format_errors=4,
    )
    assert loop.run_stage(1, TASK, opening=_open(action_format=action_format)).submitted
    steps = _steps(sqlite_engine)
    acted = [s.message for s in steps if s.kind == "assistant"]
    assert [m["content"] for m in acted] == ["", "", ""]
    assert [len(m["tool_calls"]) for m in acted] == [1, 1, 1]
    observations = _observations(sqlite_engine)
    assert "ops.py" in observations[0] and "1 call was dropped" in observations[0]
    feedback = [
        s.message["content"]
        for s in steps
        if s.kind == "format_error" and s.message["role"] == "user"
    ]
    assert "repeated the definition of the `bash` tool" in feedback[0]
    assert "missing the required argument `command`" in feedback[1]
    assert "You called `python`" in feedback[2]
    assert _repairs(sqlite_engine).count("extra_calls_dropped") == 1
    assert fake_llm.refused == []
