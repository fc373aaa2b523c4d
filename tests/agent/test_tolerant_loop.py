"""The replies a small model gave through llama.cpp's server (issue 14), replayed against the loop
in a real container: each is repaired or answered with firmer feedback, and the stage proceeds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.environments.docker_env import DockerEnvironment
from prchain.llm.config import LLMConfig
from prchain.store.models import LLMRepair, Step
from tests.agent.test_loop import TASK, _loop, _open, sandbox  # noqa: F401 (module fixture)

pytestmark = pytest.mark.docker


def _steps(engine: Engine) -> list[Step]:
    with Session(engine) as session:
        return list(session.scalars(select(Step).order_by(Step.idx)))


def _repairs(engine: Engine) -> list[tuple[str, str]]:
    with Session(engine) as session:
        return sorted(
            (r.role, r.kind) for r in session.execute(select(LLMRepair.role, LLMRepair.kind))
        )


THREE_BLOCKS = """I need to see the file, then change it, then I am done.

```bash
cat calc/ops.py
```

```str_replace_editor
{"command": "view", "path": "calc/ops.py"}
```

```submit
{"summary": "all at once"}
```"""


def test_three_action_blocks_run_the_first_and_say_the_rest_were_ignored(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_engine: Engine,
    sandbox: DockerEnvironment,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_llm.push(model="policy", content=THREE_BLOCKS)
    fake_llm.push(model="policy", contains="ignored", content="```submit\n```")
    loop = _loop(llm_config, sqlite_engine, sandbox, tmp_path, action_format="text")
    assert loop.run_stage(1, TASK, opening=_open(action_format="text")).submitted
    steps = _steps(sqlite_engine)
    assert [s.kind for s in steps] == ["system", "query", "assistant", "tool", "assistant", "tool"]
    [call] = steps[2].message["tool_calls"]
    assert call["function"]["name"] == "bash"
    assert steps[2].message["content"] == "I need to see the file, then change it, then I am done."
    observation = steps[3].message["content"]
    assert "def add(a, b):" in observation and "the other 2 blocks were ignored" in observation
    assert _repairs(sqlite_engine) == [("policy", "extra_blocks_ignored")]


def _echo(body: dict[str, Any]) -> dict[str, Any]:
    """What the model did after its first format error: it sent the error message back."""
    return {"content": body["messages"][-1]["content"]}


def test_prose_then_an_echoed_error_gets_firmer_warmer_feedback_and_proceeds(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_engine: Engine,
    sandbox: DockerEnvironment,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_llm.push(model="policy", content="I will start by looking at the repository layout.")
    fake_llm.push(model="policy", responder=_echo)
    # Only a changed instruction gets a tool call: an identical retry would buy the echo again.
    fake_llm.push(
        model="policy",
        contains="repeated this feedback",
        tool_calls=[{"name": "submit", "arguments": {"summary": "done"}}],
    )
    loop = _loop(llm_config, sqlite_engine, sandbox, tmp_path, max_format_errors=3)
    assert loop.run_stage(1, TASK, opening=_open()).submitted
    requests = fake_llm.requests_for("policy")
    assert [r.get("temperature") for r in requests] == [None, 0.9, 1.0]
    assert len({json.dumps(r["messages"][-1]) for r in requests}) == 3
    feedback = requests[2]["messages"][-1]["content"]
    assert "reply 2 in a row" in feedback and "repeated this feedback" in feedback


TEXT_CALL = (
    "I'll submit now.\n<tool_call>\n"
    '{"name": "submit", "arguments": {"summary": "nothing to change"}}\n</tool_call>'
)


def test_a_tool_call_written_as_text_is_that_call(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_engine: Engine,
    sandbox: DockerEnvironment,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_llm.push(model="policy", content=TEXT_CALL)
    loop = _loop(llm_config, sqlite_engine, sandbox, tmp_path)
    assert loop.run_stage(1, TASK, opening=_open()).submitted
    assistant = _steps(sqlite_engine)[2].message
    assert assistant["content"] == "I'll submit now."
    assert assistant["tool_calls"][0]["function"]["name"] == "submit"
    assert assistant["tool_calls"][0]["id"]  # an id was made up so the result can point at it
    assert _repairs(sqlite_engine) == [("policy", "tool_call_in_text")]


def test_reasoning_content_is_stored_but_never_sent_back(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_engine: Engine,
    sandbox: DockerEnvironment,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_llm.push(
        model="policy",
        reasoning_content="The task is small; list the package first.",
        tool_calls=[{"name": "bash", "arguments": {"command": "ls calc"}}],
    )
    fake_llm.push(model="policy", tool_calls=[{"name": "submit", "arguments": {}}])
    loop = _loop(llm_config, sqlite_engine, sandbox, tmp_path)
    assert loop.run_stage(1, TASK, opening=_open()).submitted
    stored = _steps(sqlite_engine)[2].message
    assert stored["reasoning_content"] == "The task is small; list the package first."
    second = fake_llm.requests_for("policy")[1]["messages"]
    assert all("reasoning_content" not in m for m in second)


THINK_REPLY = """<think>
Should I run this?
```bash
rm -rf calc
```
No. The task is already done.
</think>
Everything is in place.
```submit
{"summary": "checked"}
```"""


def test_a_think_block_is_kept_out_of_action_parsing(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_engine: Engine,
    sandbox: DockerEnvironment,  # noqa: F811
    tmp_path: Path,
) -> None:
    fake_llm.push(model="policy", content=THINK_REPLY)
    loop = _loop(llm_config, sqlite_engine, sandbox, tmp_path, action_format="text")
    assert loop.run_stage(1, TASK, opening=_open(action_format="text")).submitted
    assistant = _steps(sqlite_engine)[2].message
    assert assistant["tool_calls"][0]["function"]["name"] == "submit"
    assert assistant["content"] == "Everything is in place."
    assert "rm -rf calc" in assistant["reasoning_content"]
    assert _repairs(sqlite_engine) == []
