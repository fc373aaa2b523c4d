"""`prchain tests verify` as a user runs it on a mined repository made here, then the rollout that
records T(p̂) and the task export that carries the lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import select

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import CIRCLE, ChainRepo
from prchain.llm.config import LLMConfig
from prchain.store.db import session_scope
from prchain.store.models import ChainStage, PullRequest, RolloutStage, StageVerification
from prchain.store.opener import make_engine
from tests.verdicts.conftest import GEO_REPO, GEO_TEST_COMMAND

pytestmark = [pytest.mark.docker, pytest.mark.slow]
CIRCLE_IDS = [
    "tests/test_shapes.py::test_circle_area[r=2]",
    "tests/test_shapes.py::test_circle_area[unit - r]",
]


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, f"prchain {' '.join(args)} failed:\n{result.output}"
    return result.output


def _verified(url: str) -> dict[int, StageVerification]:
    engine = make_engine(url)
    with session_scope(engine) as session:
        rows = session.execute(
            select(PullRequest.number, StageVerification)
            .join(ChainStage, ChainStage.id == StageVerification.chain_stage_id)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
        ).all()
        session.expunge_all()
    return {number: row for number, row in rows}


def _policy(body: dict[str, Any]) -> dict[str, Any]:
    """Stage 1: write circle_area (its own way) and submit; later stages: a token change (a stage
    that changes nothing is failed unjudged, issue 20), then submit."""
    since_task = 0
    for message in reversed(body["messages"]):
        if message["role"] == "user":
            break
        since_task += message["role"] == "assistant"
    if not any(m["role"] == "assistant" for m in body["messages"]):
        code = CIRCLE.replace("radius * radius", "radius ** 2")
        command = f"cat >> geo/shapes.py <<'EOF'\n{code}\nEOF"
        return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
    if since_task == 0:
        command = "echo '# reviewed' >> geo/shapes.py"
        return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
    return {"tool_calls": [{"name": "submit", "arguments": {"summary": "done"}}]}


def test_verify_then_rollout_records_t_of_p_hat(
    geo_repo: ChainRepo,
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    sqlite_url: str,
    tmp_path: Path,
    base_image: str,
) -> None:
    config = tmp_path / "prchain.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "llm": llm_config.model_dump(mode="json"),
                "verdicts": {"repos": {GEO_REPO: {"test": GEO_TEST_COMMAND}}},
                "environment": {"log_dir": str(tmp_path / "logs")},
                "chains": {"min_chain_code_lines": 0},  # the made-up chain is a few lines per PR
            }
        )
    )
    common = ["--config", str(config), "--db", sqlite_url]
    _invoke("mine", "--source", "git", "--name", GEO_REPO, str(geo_repo.path), *common)
    _invoke("chains", "build", *common)

    out = _invoke("tests", "verify", *common)
    assert "3 stages: 1 unusable, 2 usable; 3 FAIL_TO_PASS tests in 2 usable stages" in out
    found = _verified(sqlite_url)
    assert found[1].fail_to_pass == CIRCLE_IDS
    assert found[1].pass_to_pass == ["tests/test_shapes.py::test_square_area"]
    assert found[1].flaky == ["tests/test_shapes.py::test_coin_flip"]  # alternates run to run
    assert found[2].fail_to_pass == ["tests/test_shapes.py::test_rectangle_area"]
    assert found[3].status == "unusable" and found[3].reason == (
        "the gold patch fails 1 of its own tests: tests/test_perimeter.py::test_perimeter"
    )
    again = _invoke("tests", "verify", *common)  # resumable: nothing runs twice, nothing duplicates
    assert "3 stages: 3 skipped" in again and len(_verified(sqlite_url)) == 3

    tasks = tmp_path / "tasks.jsonl"
    _invoke("tasks", "export", str(tasks), *common)
    stages = json.loads(tasks.read_text().splitlines()[0])["stages"]
    assert stages[0]["FAIL_TO_PASS"] == CIRCLE_IDS and stages[2]["tests_status"] == "unusable"

    fake_llm.push(model="query_constructor", content="Extend the shapes.", times=None)
    fake_llm.push(model="overview", content="Grow the geometry module.", times=None)
    fake_llm.push(model="policy", responder=_policy, times=None)
    fake_llm.push(model="judge", content=json.dumps({"score": 0.9, "comment": "Fine."}), times=None)
    _invoke("queries", "build", *common)
    _invoke("rollout", *common)
    engine = make_engine(sqlite_url)
    with session_scope(engine) as session:
        rows = session.scalars(select(RolloutStage).order_by(RolloutStage.stage_idx)).all()
        results = [(r.score, r.tests_passed, (r.test_result or {}).get("failing")) for r in rows]
    assert results == [
        (0.9, True, []),  # the agent's own circle_area passes the hidden tests
        (0.9, False, ["tests/test_shapes.py::test_rectangle_area"]),  # judged fine, tests say no
        (0.9, None, None),  # unusable stage: no verdict
    ]
    stats = json.loads(_invoke("stats", "--json", *common))
    assert (stats["stages_usable"], stats["stages_unusable"], stats["fail_to_pass_tests"]) == (
        2,
        1,
        3,
    )
    assert (stats["rollout_stages_tests_passed"], stats["rollout_stages_tests_failed"]) == (1, 1)
