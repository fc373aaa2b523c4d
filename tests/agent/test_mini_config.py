"""agent.scaffold: mini-swe-agent without a sandbox: a wrong config name is one line before any
work, and the rollout row's provenance names mini-swe-agent's prompts and tool."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from prchain.agent.config import AgentConfig
from prchain.agent.mini import tool_schemas
from prchain.agent.provenance import tool_schema_hash
from prchain.app.config import Config
from prchain.app.rollout import rollout_fields
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer


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
