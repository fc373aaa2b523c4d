"""The README path on a repository made here: mine → chains build → queries build → rollout → export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import pytest
import yaml
from click.testing import CliRunner

from prchain.agent.export import validate_record
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import make_chain_repo
from prchain.llm.config import LLMConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow]
QUERY = "Users of the calculator module want one more arithmetic capability; extend the operations file accordingly."
OVERVIEW = (
    "Over a few steps the calculator grows from addition to a fuller set of arithmetic operations."
)


def _policy(body: dict[str, Any]) -> dict[str, Any]:
    """Per stage: look around, change the operations file, submit."""
    turns = 0
    for message in reversed(body["messages"]):
        if message["role"] == "user":
            break
        turns += message["role"] == "assistant"
    stage = sum(
        1 for m in body["messages"] if m["role"] == "user" and "Task " in str(m.get("content"))
    )
    actions = [
        {"name": "bash", "arguments": {"command": "ls calc && tail -n 3 calc/ops.py"}},
        {
            "name": "bash",
            "arguments": {
                "command": f"printf '\\n\\ndef op_{stage}(x, y):\\n    return (x, y)\\n' >> calc/ops.py"
            },
        },
        {"name": "submit", "arguments": {"summary": f"stage {stage} done"}},
    ]
    return {"tool_calls": [actions[min(turns, 2)]]}


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, f"prchain {' '.join(args)} failed:\n{result.output}"
    return result.output


def test_readme_pipeline_on_a_repository_made_here(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, sqlite_url: str, tmp_path: Path
) -> None:
    repo = make_chain_repo(tmp_path / "calc")
    config = tmp_path / "prchain.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "llm": llm_config.model_dump(mode="json"),
                "chains": {"min_chain_code_lines": 0},  # the demo chain is a few lines per PR
            }
        )
    )
    fake_llm.push(model="query_constructor", content=QUERY, times=None)
    fake_llm.push(model="overview", content=OVERVIEW, times=None)
    fake_llm.push(model="policy", responder=_policy, times=None)
    fake_llm.push(
        model="judge", content=json.dumps({"score": 0.9, "comment": "Acceptable."}), times=None
    )
    common = ["--config", str(config), "--db", sqlite_url]

    _invoke("mine", "--source", "git", "--name", "acme/calc", str(repo.path), *common)
    _invoke("chains", "build", *common)
    _invoke("queries", "build", *common)
    rolled = _invoke("rollout", "--workers", "2", *common)
    assert "kept" in rolled
    out = tmp_path / "trajectories.jsonl"
    _invoke("export", str(out), *common)

    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records, "no trajectory was exported"
    for record in records:
        validate_record(record)
        assert (
            record["metadata"]["repo"] == "acme/calc" and len(record["metadata"]["pr_numbers"]) >= 2
        )
    loaded = datasets.load_dataset("json", data_files=str(out), split="train")
    assert loaded.num_rows == len(records)
    stats = json.loads(_invoke("stats", "--json", *common))
    assert stats["trajectories_kept"] == len(records) and stats["trajectories_rejected"] == 0
