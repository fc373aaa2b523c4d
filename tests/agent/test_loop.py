"""The loop alone in a real container: text action format, budgets, context window, the editor."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.agent.config import AgentConfig
from prchain.agent.loop import PROMPTS, AgentLoop
from prchain.agent.persist import Recorder, new_rollout
from prchain.agent.textformat import FormatError, parse_action, to_wire
from prchain.agent.tools import ToolBox, truncate
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_env import DockerEnvironment
from prchain.environments.protocol import StageSpec
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig
from prchain.llm.prompts import render
from prchain.store.models import Chain, Step
from tests.agent.conftest import bash, seed_chain

TASK = "Add subtraction to calc/ops.py."


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DockerEnvironment]:
    from prchain.dev.repos import make_chain_repo

    repo = make_chain_repo(tmp_path_factory.mktemp("loop") / "calc")
    pr = repo.prs[1]
    with DockerEnvironment(
        EnvironmentConfig(),
        repo="acme/calc",
        clone_path=str(repo.path),
        stages=[StageSpec(1, pr.base_sha, pr.gold_patch)],
    ) as env:
        env.enter_stage(1)
        yield env


def _loop(
    llm_config: LLMConfig, engine: Engine, env: DockerEnvironment, tmp_path: Path, **agent: Any
) -> AgentLoop:
    with Session(engine) as session:
        chain_id = (
            session.scalar(select(Chain.id)) or seed_chain(str(engine.url), tmp_path).chain_id
        )
    rollout_id = new_rollout(engine, chain_id, conflict_policy="strict")
    return AgentLoop(
        LLMClient(llm_config, engine),
        env,
        AgentConfig(**agent),
        sink=Recorder(engine, rollout_id),
        rollout_id=rollout_id,
    )


def _open(task: str = TASK, action_format: str = "tools") -> list[tuple[str, dict[str, Any]]]:
    system = render(PROMPTS, "system.j2", action_format=action_format)
    return [
        ("system", {"role": "system", "content": system}),
        ("query", {"role": "user", "content": task}),
    ]


# -- pure parsing --------------------------------------------------------------------------------------


def test_text_actions_parse_strictly() -> None:
    action = parse_action("Let me look.\n```bash\nls -la calc\n```")
    assert (action.thought, action.name, json.loads(action.arguments)) == (
        "Let me look.",
        "bash",
        {"command": "ls -la calc"},
    )
    edit = parse_action('```str_replace_editor\n{"command": "view", "path": "calc/ops.py"}\n```')
    assert json.loads(edit.arguments)["path"] == "calc/ops.py"
    assert parse_action("Done.\n```submit\n```").name == "submit"
    for bad in [
        "no block at all",
        "```python\nprint(1)\n```",
        "```str_replace_editor\nview calc\n```",
        '```str_replace_editor\n{"command": "view"}\n```',
        "```bash\n```",
    ]:
        with pytest.raises(FormatError):
            parse_action(bad)


def test_the_wire_form_replays_tool_calls_as_text() -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
    }
    wire = to_wire(
        [
            {"role": "assistant", "content": "Look.", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": "calc"},
        ]
    )
    assert wire == [
        {"role": "assistant", "content": "Look.\n\n```bash\nls\n```"},
        {"role": "user", "content": "Observation:\ncalc"},
    ]


def test_truncation_keeps_head_and_tail_with_a_marker() -> None:
    text = "HEAD" + "x" * 5000 + "TAIL"
    cut = truncate(text, 600)
    assert (
        cut.startswith("HEAD")
        and cut.endswith("TAIL")
        and "characters of output omitted" in cut
        and len(cut) < 700
    )


# -- in a container ------------------------------------------------------------------------------------


@pytest.mark.docker
def test_text_format_round_trip_with_a_format_error(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_engine: Engine,
    sandbox: DockerEnvironment,
    tmp_path: Path,
) -> None:
    fake_llm.push(model="policy", content="First I read the file.\n```bash\ncat calc/ops.py\n```")
    fake_llm.push(model="policy", content="I think I am done.")
    fake_llm.push(
        model="policy",
        contains="one fenced action block",
        content='Submitting.\n```submit\n{"summary": "read it"}\n```',
    )
    loop = _loop(llm_config, sqlite_engine, sandbox, tmp_path, action_format="text")
    assert loop.run_stage(1, TASK, opening=_open(action_format="text")).submitted

    requests = fake_llm.requests_for("policy")
    assert all("tools" not in r for r in requests)
    assert (
        "```bash" in requests[0]["messages"][0]["content"]
    )  # the system prompt teaches the format
    second = requests[1]["messages"]
    assert second[-1]["role"] == "user" and second[-1]["content"].startswith("Observation:\n")
    assert "def add(a, b):" in second[-1]["content"]
    with Session(sqlite_engine) as session:
        steps = list(session.scalars(select(Step).order_by(Step.idx)))
    assert [s.kind for s in steps] == [
        "system",
        "query",
        "assistant",
        "tool",
        "format_error",
        "format_error",
        "assistant",
        "tool",
    ]
    stored = steps[2].message
    assert (
        stored["content"] == "First I read the file."
        and stored["tool_calls"][0]["function"]["name"] == "bash"
    )
    assert steps[3].message["tool_call_id"] == stored["tool_calls"][0]["id"]


@pytest.mark.docker
def test_budgets_and_the_context_window_end_a_stage_with_a_reason(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_engine: Engine,
    sandbox: DockerEnvironment,
    tmp_path: Path,
) -> None:
    fake_llm.push(model="policy", tool_calls=bash("ls"), times=None)
    run = _loop(llm_config, sqlite_engine, sandbox, tmp_path, max_steps_per_stage=3).run_stage(
        1, TASK, opening=_open()
    )
    assert (run.submitted, run.reason) == (False, "stage step budget spent (3 steps)")

    fake_llm.reset()
    fake_llm.push(model="policy", tool_calls=bash("seq 1 3000"), times=None)
    loop = _loop(
        llm_config,
        sqlite_engine,
        sandbox,
        tmp_path,
        context_window=4096,
        max_observation_chars=8000,
    )
    run = loop.run_stage(1, TASK, opening=_open())
    assert (
        not run.submitted
        and run.reason is not None
        and run.reason.startswith("context window exceeded")
    )
    assert loop.chain.steps < 10
    assert (
        "characters of output omitted" in loop.messages[-1]["content"]
    )  # the observation was truncated


@pytest.mark.docker
def test_the_editor_in_a_container(sandbox: DockerEnvironment) -> None:
    tools = ToolBox(sandbox, command_timeout=30, max_chars=10_000)

    def edit(**args: Any) -> str:
        return tools.run("str_replace_editor", json.dumps(args)).observation

    assert "calc/ops.py" in edit(command="view", path="calc")
    assert "1\tdef add(a, b):" in edit(command="view", path="calc/ops.py")
    assert edit(command="create", path="pkg/new/mod.py", file_text="A = 1\nB = 2\n").startswith(
        "File created"
    )
    assert "did not appear" in edit(
        command="str_replace", path="pkg/new/mod.py", old_str="C = 3", new_str=""
    )
    assert "appears 2 times" in edit(
        command="str_replace", path="pkg/new/mod.py", old_str=" = ", new_str="="
    )
    assert "A = 10" in edit(
        command="str_replace", path="pkg/new/mod.py", old_str="A = 1\n", new_str="A = 10\n"
    )
    assert "     2\tZ = 0" in edit(
        command="insert", path="pkg/new/mod.py", insert_line=1, new_str="Z = 0"
    )
    assert "A = 10" in edit(
        command="undo_edit", path="pkg/new/mod.py"
    ) and "Z = 0" not in sandbox.read_file("pkg/new/mod.py")
    assert (
        edit(command="view", path="pkg/new/mod.py", view_range=[2, -1]).strip()
        == "2\tB = 2\n     3"
    )
    edit(command="undo_edit", path="pkg/new/mod.py")
    assert "removed" in edit(command="undo_edit", path="pkg/new/mod.py")
    assert "does not exist" in edit(command="view", path="pkg/new/mod.py")
    assert edit(command="delete", path="x").startswith("Error: unknown command")
    assert tools.run("bash", "{not json").observation.startswith("Error:")
    assert "[exit code 3]" in tools.run("bash", json.dumps({"command": "exit 3"})).observation
    assert tools.run("submit", "{}").submitted
