"""`prchain p2t curate|graph|stats` and `prchain export` end to end: a one-stage chain of the calc
repository, the scripted server playing every role, a real container, a real store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import Engine, select

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.config import ROLES
from prchain.p2t.patches import split_patch
from prchain.store.db import session_scope
from prchain.store.models import ChainStage, P2TGraph, P2TStage, Rollout, StageVerification, Step
from tests.agent.conftest import seed_chain
from tests.p2t.test_forward import ADD_SUBTRACT, SUBMIT, editor, verifier

pytestmark = pytest.mark.docker

F1 = "calc/ops.py defines add and no other operation"
NODES = [
    {
        "id": "f1",
        "node_type": "fact",
        "fact_kind": "static",
        "statement": F1,
        "action": "VIEW calc/ops.py",
    },
    {
        "id": "analysis",
        "node_type": "issue_analysis",
        "statement": "only add exists",
        "action": "THINK the module has one operation",
    },
    {
        "id": "plan",
        "node_type": "fix_plan",
        "statement": "add a sibling function",
        "action": "THINK define subtract beside add",
    },
    {
        "id": "edit1",
        "node_type": "code_edit",
        "statement": "subtract is defined next to add",
        "action": "STR_REPLACE calc/ops.py",
        "old_str": "def add(a, b):\n    return a + b\n",
        "new_str": "def add(a, b):\n    return a + b\n\n\ndef subtract(a, b):\n    return a - b\n",
    },
]


def script(server: ScriptedLLMServer) -> None:
    server.push(model="p2t_proposer", content=json.dumps({"nodes": NODES}))
    server.push(model="p2t_proposer", content=json.dumps({"nodes": []}))
    server.push(
        model="p2t_critic", content=json.dumps({"verdicts": [], "feedback": []}), times=None
    )
    server.push(model="p2t_verifier", responder=verifier, times=None)
    for calls in (editor(command="view", path="calc/ops.py"), ADD_SUBTRACT, SUBMIT):
        server.push(model="p2t_seed", tool_calls=calls)


def store_like_chain_build(engine: Engine, verified: bool) -> None:
    """Code and tests apart, as `chains build` stores them; optionally verified by `tests verify`."""
    with session_scope(engine) as session:
        stage = session.scalars(select(ChainStage)).one()
        stage.gold_patch, stage.gold_test_patch = split_patch(stage.gold_patch)
        if verified:
            session.add(
                StageVerification(
                    chain_stage_id=stage.id,
                    recipe="test",
                    status="usable",
                    test_command="python3 -m pytest -q -p no:cacheprovider tests/test_ops.py",
                    test_files=["tests/test_ops.py"],
                    fail_to_pass=["tests/test_ops.py::test_subtract"],
                    pass_to_pass=["tests/test_ops.py::test_add"],
                )
            )


def config_file(tmp_path: Path, url: str, test_command: bool = True) -> Path:
    config = {
        "store": {"url": url},
        "llm": {
            "models": {r: r for r in ROLES},
            "prices": {"*": {"prompt_per_million": 1.0, "completion_per_million": 2.0}},
        },
        "environment": {
            "test_command": {"acme/calc": "python3 -m pytest -q -p no:cacheprovider tests"}
            if test_command
            else {}
        },
        "p2t": {"window": 3, "commit": 3, "seeds": 1, "mutate": False},
    }
    path = tmp_path / "prchain.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("verified", [False, True], ids=["gold-tests", "verified-tests"])
def test_curate_graph_stats_and_export(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    base_image: Any,
    verified: bool,
) -> None:
    url = str(sqlite_engine.url)
    seeded = seed_chain(url, tmp_path, prs=(1,))
    store_like_chain_build(sqlite_engine, verified)
    script(fake_llm)
    cfg = str(config_file(tmp_path, url, test_command=not verified))
    cli = CliRunner()

    curated = cli.invoke(
        main,
        ["p2t", "curate", "--chain", str(seeded.chain_id), "--config", cfg],
        terminal_width=200,
    )
    assert curated.exit_code == 0, curated.output
    assert "kept" in curated.output
    # The proposer saw the hidden tests even though the chain stores them apart from the code.
    assert "test_subtract" in json.dumps(fake_llm.requests_for("p2t_proposer")[0]["messages"])
    with session_scope(sqlite_engine) as session:
        rollout = session.scalars(select(Rollout)).one()
        assert (rollout.source, rollout.status, rollout.kept_stages) == ("p2t", "kept", 1)
        stage = session.scalars(select(P2TStage)).one()
        assert stage.admitted and stage.steps == 3 and "f1" in stage.established
        assert stage.coverage == pytest.approx(2 / 5)  # f0 and f1 of five nodes
        graph = session.scalars(select(P2TGraph)).one()
        assert graph.stop_reason == "unchanged" and graph.cost_usd > 0

    drawn = cli.invoke(
        main, ["p2t", "graph", f"{seeded.chain_id}:1", "--config", cfg, "--format", "text"]
    )
    assert drawn.exit_code == 0, drawn.output
    assert (
        "f1 [fact/static] calc/ops.py defines add" in drawn.output and "<- analysis" in drawn.output
    )
    tree = cli.invoke(
        main, ["p2t", "graph", f"{seeded.chain_id}:1", "--config", cfg], terminal_width=200
    )
    assert tree.exit_code == 0 and "edit1" in tree.output
    assert cli.invoke(main, ["p2t", "graph", "1", "--config", cfg]).exit_code == 2  # not CHAIN:IDX

    stats = cli.invoke(main, ["p2t", "stats", "--config", cfg, "--json"])
    assert stats.exit_code == 0, stats.output
    data = json.loads(stats.output)
    assert data["curated_stages"] == 1 and data["plain_stages"] == 0

    out = tmp_path / "sft.jsonl"
    exported = cli.invoke(main, ["export", str(out), "--config", cfg])
    assert exported.exit_code == 0, exported.output
    record = json.loads(out.read_text().splitlines()[0])
    assert record["metadata"]["source"] == "p2t"
    text = json.dumps(record["messages"])
    assert "test_subtract" not in text and F1 not in text

    # A curated message that shows a graph statement is never exported.
    with session_scope(sqlite_engine) as session:
        step = session.scalars(select(Step).where(Step.kind == "assistant")).first()
        step.message = {**step.message, "content": f"I know that {F1}."}
    again = cli.invoke(main, ["export", str(out), "--config", cfg])
    assert again.exit_code == 0 and "oracle text" in again.output
    assert out.read_text() == ""


def test_curate_without_a_test_command_is_one_clear_error(
    fake_llm: ScriptedLLMServer, sqlite_engine: Engine, tmp_path: Path, base_image: Any
) -> None:
    url = str(sqlite_engine.url)
    seeded = seed_chain(url, tmp_path, prs=(1,))
    fake_llm.push(model="p2t_proposer", content=json.dumps({"nodes": []}))
    result = CliRunner().invoke(
        main, ["p2t", "curate", "--chain", str(seeded.chain_id), "--db", url]
    )
    assert result.exit_code == 1
    assert "no test command is configured for acme/calc" in result.output
