"""Every export format, in both containers, loads with `datasets` and matches the shape its trainer
documents; reasoning appears only when asked for; card, manifest and provenance travel with it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import datasets
import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.agent.formats.dataset import ExportOptions, check_row, export_dataset
from prchain.agent.provenance import AGENT_PROMPTS, prompts_hash, tool_schema_hash
from prchain.agent.runner import ChainRunner
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.store.db import session_scope
from prchain.store.models import Rollout, Step
from tests.agent.test_rollout import run_happy_chain
from tests.support.harbor import harbor_validates

pytestmark = pytest.mark.docker
THOUGHT = "The ops module is small; reading it whole is cheapest."


@pytest.fixture
def rollout_id(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> int:
    rid = run_happy_chain(fake_llm, str(sqlite_engine.url), tmp_path, make_runner, sqlite_engine)
    with session_scope(sqlite_engine) as session:  # as a reasoning model's first step stores it
        step = session.scalars(select(Step).filter_by(kind="assistant").order_by(Step.idx)).first()
        assert step is not None
        step.message = {**step.message, "reasoning_content": THOUGHT}
    return rid


def _load(path: Path) -> datasets.Dataset:
    kind = "parquet" if path.suffix == ".parquet" else "json"
    return datasets.load_dataset(kind, data_files=str(path), split="train")


@pytest.mark.parametrize("format_", ["openai", "sharegpt", "atif"])
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_each_format_loads_with_datasets_and_matches_its_documented_shape(
    rollout_id: int, sqlite_engine: Engine, tmp_path: Path, format_: str, suffix: str
) -> None:
    out = tmp_path / f"{format_}{suffix}" / f"train{suffix}"
    result = export_dataset(sqlite_engine, out, ExportOptions(format=format_), {"k": "v"})  # type: ignore[arg-type]
    assert result.written == 1
    loaded = _load(out)
    assert loaded.num_rows == 1
    for row in loaded:
        check_row(format_, row)  # type: ignore[arg-type]
    assert THOUGHT not in json.dumps(loaded[0])  # reasoning only when asked for

    card = (out.parent / "README.md").read_text()
    header = yaml.safe_load(card.split("---")[1])
    facts = header["prchain"]
    assert facts["count"] == 1 and facts["repos"] == {"acme/calc": 1}
    assert facts["models"]["policy"] == ["policy"] and facts["config"] == {"k": "v"}
    assert facts["prompt_hashes"] == [prompts_hash(AGENT_PROMPTS)]
    assert facts["tool_schema_hashes"] == [tool_schema_hash()]
    assert header["configs"][0]["data_files"] == out.name
    manifest = json.loads((out.parent / "train.manifest.json").read_text())
    assert manifest["rollout_ids"] == [rollout_id] and manifest["format"] == format_


def test_sharegpt_rows_follow_llama_factory_roles(
    rollout_id: int, sqlite_engine: Engine, tmp_path: Path
) -> None:
    out = tmp_path / "sharegpt" / "train.jsonl"
    export_dataset(sqlite_engine, out, ExportOptions(format="sharegpt"), {})
    row = json.loads(out.read_text())
    turns = row["conversations"]
    assert turns[0]["from"] == "human" and turns[-1]["from"] == "function_call"
    assert {t["from"] for t in turns} == {"human", "function_call", "observation"}
    first_call = json.loads(turns[1]["value"])
    assert first_call["name"] == "bash" and isinstance(first_call["arguments"], dict)
    assert [t["name"] for t in json.loads(row["tools"])] == ["bash", "str_replace_editor", "submit"]
    assert row["system"].startswith("You are an experienced software engineer")


def test_keep_reasoning_puts_it_where_each_format_expects_it(
    rollout_id: int, sqlite_engine: Engine, tmp_path: Path
) -> None:
    openai_out, sharegpt_out = tmp_path / "o" / "t.jsonl", tmp_path / "s" / "t.parquet"
    export_dataset(sqlite_engine, openai_out, ExportOptions(keep_reasoning=True), {})
    export_dataset(
        sqlite_engine, sharegpt_out, ExportOptions(format="sharegpt", keep_reasoning=True), {}
    )
    record = json.loads(openai_out.read_text())
    [with_thought] = [m for m in record["messages"] if m.get("reasoning_content")]
    assert with_thought["reasoning_content"] == THOUGHT and with_thought["tool_calls"]
    check_row("openai", record)
    row = _load(sharegpt_out)[0]
    check_row("sharegpt", row)
    assert row["conversations"][1]["value"].startswith(f"<think>\n{THOUGHT}\n</think>")


def test_a_manifest_reproduces_the_exported_subset_through_the_cli(
    rollout_id: int, sqlite_engine: Engine, tmp_path: Path
) -> None:
    url = str(sqlite_engine.url)
    first = tmp_path / "first" / "t.jsonl"
    ran = CliRunner().invoke(main, ["export", str(first), "--db", url, "--format", "sharegpt"])
    assert ran.exit_code == 0, ran.output
    again = tmp_path / "again" / "t.jsonl"
    args = ["export", str(again), "--db", url, "--format", "sharegpt"]
    ran = CliRunner().invoke(main, [*args, "--manifest", str(first.parent / "t.manifest.json")])
    assert ran.exit_code == 0, ran.output
    assert again.read_text() == first.read_text()
    with Session(sqlite_engine) as session:
        stored = session.get_one(Rollout, rollout_id)
    assert (stored.prompt_hash, stored.tool_schema_hash) == (
        prompts_hash(AGENT_PROMPTS),
        tool_schema_hash(),
    )


def test_atif_rows_are_valid_to_harbor_s_own_trajectory_model(
    rollout_id: int, sqlite_engine: Engine, tmp_path: Path
) -> None:
    out = tmp_path / "atif" / "t.jsonl"
    export_dataset(sqlite_engine, out, ExportOptions(format="atif", keep_reasoning=True), {})
    row = json.loads(out.read_text())
    check_row("atif", row)
    assert harbor_validates("harbor.models.trajectories.Trajectory", [row]) == []
    agent_steps = [s for s in row["steps"] if s["source"] == "agent"]
    assert agent_steps[0]["reasoning_content"] == THOUGHT
    calls = [c for s in agent_steps for c in s.get("tool_calls", [])]
    results = [r for s in agent_steps for r in s.get("observation", {}).get("results", [])]
    assert calls and {r["source_call_id"] for r in results} <= {c["tool_call_id"] for c in calls}
    extra = row["extra"]
    assert extra["format_version"] == "prchain.trajectory/2" and extra["rollout_id"] == rollout_id
    assert (extra["success"], extra["truncated"]) == (True, False)
    broken = {**row, "steps": [{**row["steps"][0], "step_id": 2}, *row["steps"][1:]]}
    assert harbor_validates("harbor.models.trajectories.Trajectory", [broken]) != []
