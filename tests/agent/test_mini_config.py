"""agent.scaffold: mini-swe-agent without a sandbox: a wrong config name is one line before any
work, the rollout row's provenance names mini-swe-agent's prompts and tool, and a rollout is never
resumed under another scaffold than the one it started with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from prchain.agent.config import AgentConfig
from prchain.agent.mini import tool_schemas
from prchain.agent.persist import new_rollout
from prchain.agent.provenance import tool_schema_hash
from prchain.app.config import Config
from prchain.app.rollout import make_chain_runner, rollout_fields
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.client import LLMClient
from prchain.store.config import StoreConfig
from prchain.store.models import Rollout
from tests.agent.conftest import seed_chain


def test_an_unknown_mini_config_is_one_line_listing_its_own_configs(
    fake_llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    args = ["rollout", "--scaffold", "mini-swe-agent", "--set", "agent.mini_config=nope.yaml"]
    result = CliRunner().invoke(main, [*args, "--db", db])
    assert result.exit_code != 0
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "'nope.yaml'" in errors[0], result.output
    assert "mini.yaml" in errors[0] and "benchmarks/swebench.yaml" in errors[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize("spec", ["mini.yaml", "benchmarks/swebench.yaml"])
def test_a_mini_rollout_records_mini_swe_agent_s_prompts_and_tool(spec: str) -> None:
    builtin = rollout_fields(Config())
    mini = rollout_fields(Config(agent=AgentConfig(scaffold="mini-swe-agent", mini_config=spec)))
    assert (
        mini["tool_schema_hash"] == tool_schema_hash(tool_schemas()) != builtin["tool_schema_hash"]
    )
    assert mini["prompt_hash"] != builtin["prompt_hash"]
    assert mini["config"]["agent"]["scaffold"] == "mini-swe-agent"
    assert [t["function"]["name"] for t in tool_schemas()] == ["bash"]


def test_a_rollout_is_not_resumed_under_another_scaffold(
    fake_llm: ScriptedLLMServer, sqlite_url: str, sqlite_engine: Engine, tmp_path: Path
) -> None:
    """A builtin rollout left running is refused by a mini-swe-agent runner in one reason, before
    any sandbox opens; its rows stay as they were for a builtin rerun to resume."""
    seeded = seed_chain(sqlite_url, tmp_path)
    started = new_rollout(
        sqlite_engine, seeded.chain_id, conflict_policy="strict", config={"agent": {}}
    )
    config = Config(store=StoreConfig(url=sqlite_url), agent=AgentConfig(scaffold="mini-swe-agent"))

    def no_sandbox(task: object, rollout_id: int) -> Any:
        raise AssertionError("a sandbox was opened")

    runner = make_chain_runner(
        config, sqlite_engine, LLMClient(config.llm, sqlite_engine), no_sandbox
    )
    result = runner.run(seeded.chain_id)
    assert (result.status, result.rollout_id) == ("failed", started)
    assert f"--scaffold builtin, or roll the chain out anew with --redo {seeded.chain_id}" in str(
        result.reason
    )
    with Session(sqlite_engine) as session:
        rollout = session.get(Rollout, started)
        assert rollout is not None and (rollout.status, rollout.reason) == ("running", None)
    assert fake_llm.requests_for("policy") == []
