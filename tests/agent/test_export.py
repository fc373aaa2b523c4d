"""The export: schema-valid, loadable with `datasets`, no gold-patch lines, no secrets."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import datasets
import pytest
from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session

from prchain.agent.export import export_trajectories, validate_record
from prchain.agent.runner import ChainRunner
from prchain.core.secrets import REDACTED, SECRET_PATTERNS
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.store.db import session_scope
from prchain.store.models import ChainStage, RolloutStage, Step
from tests.agent.conftest import bash
from tests.agent.test_rollout import COMMENT_1, run_happy_chain
from tests.support.llm_fixtures import FAKE_API_KEY

pytestmark = pytest.mark.docker
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _texts(record: dict) -> list[str]:
    out = []
    for m in record["messages"]:
        out.append(m["content"])
        out += [c["function"]["arguments"] for c in m.get("tool_calls", [])]
    return out


@pytest.fixture
def exported_rollout(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> int:
    # The agent prints a token-like string and tries to read the API key (the sandbox has none).
    fake_llm.push(
        model="policy",
        tool_calls=bash(f"echo deploy with {GITHUB_TOKEN}; echo key=$OPENAI_API_KEY"),
    )
    return run_happy_chain(fake_llm, str(sqlite_engine.url), tmp_path, make_runner, sqlite_engine)


def test_the_export_is_valid_loadable_and_clean(
    exported_rollout: int, sqlite_engine: Engine, tmp_path: Path
) -> None:
    out = tmp_path / "out" / "trajectories.jsonl"
    summary = export_trajectories(sqlite_engine, out, min_score=0.8, keep="all")
    # The token was redacted when the step was stored: the export found nothing left to redact.
    assert summary.written == 1 and summary.redactions == 0
    with Session(sqlite_engine) as session:
        stored = json.dumps([s.message for s in session.scalars(select(Step))])
    assert GITHUB_TOKEN not in stored and REDACTED in stored
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    validate_record(record)

    roles = [m["role"] for m in record["messages"]]
    assert roles[:2] == ["system", "user"] and roles.count("tool") == 9 and roles[-1] == "tool"
    meta = record["metadata"]
    assert (meta["pr_numbers"], meta["stage_scores"], meta["kept_stages"]) == (
        [1, 2],
        [0.9, 0.95],
        2,
    )
    assert (
        meta["tool_calls"] == 9
        and meta["models"]["policy"] == "policy"
        and meta["trajectory_tokens"] > 0
    )
    assert any(
        COMMENT_1 in m["content"] for m in record["messages"] if m["role"] == "user"
    )  # the feedback turn

    texts = _texts(record)
    with Session(sqlite_engine) as session:
        golds = [s.gold_patch for s in session.scalars(select(ChainStage))]
    gold = [
        line[1:].strip()
        for patch in golds
        for line in patch.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---")) and len(line[1:].strip()) >= 10
    ]
    assert gold and not [g for g in gold for t in texts if g in t]
    assert not any("<reference_patch>" in t or '"score"' in t for t in texts)  # no judge internals
    raw = out.read_text()
    assert GITHUB_TOKEN not in raw and FAKE_API_KEY not in raw and REDACTED in raw
    assert not any(p.search(t) for p in SECRET_PATTERNS for t in texts)

    loaded = datasets.load_dataset("json", data_files=str(out), split="train")
    assert loaded.num_rows == 1 and set(loaded.column_names) == {"messages", "tools", "metadata"}
    assert loaded[0]["messages"][2]["tool_calls"][0]["function"]["name"] == "bash"
    assert json.loads(loaded[0]["metadata"]["config_json"])["agent"]["judge_threshold"] == 0.8


def test_prefix_policy_and_prm_turns(
    exported_rollout: int, sqlite_engine: Engine, tmp_path: Path
) -> None:
    with session_scope(sqlite_engine) as session:
        session.execute(update(RolloutStage).where(RolloutStage.stage_idx == 2).values(score=0.5))
        session.add(
            Step(
                rollout_id=exported_rollout,
                stage_idx=1,
                idx=10_000,
                kind="prm",
                message={"role": "user", "content": "[PRM] consider running the tests"},
            )
        )
    assert export_trajectories(sqlite_engine, tmp_path / "all.jsonl", keep="all").written == 0

    summary = export_trajectories(sqlite_engine, tmp_path / "prefix.jsonl", keep="prefix")
    (record,) = [json.loads(line) for line in (tmp_path / "prefix.jsonl").read_text().splitlines()]
    assert (
        summary.written == 1
        and record["metadata"]["kept_stages"] == 1
        and record["metadata"]["pr_numbers"] == [1]
    )
    assert not any(
        "Task 2 of 2" in m["content"] or "[PRM]" in m["content"] for m in record["messages"]
    )

    export_trajectories(sqlite_engine, tmp_path / "prm.jsonl", keep="prefix", keep_prm=True)
    (with_prm,) = [json.loads(line) for line in (tmp_path / "prm.jsonl").read_text().splitlines()]
    assert any(m["content"].startswith("[PRM]") for m in with_prm["messages"])
    validate_record(with_prm)
