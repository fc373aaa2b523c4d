"""agent.keep_on (judge | tests | both): what passes a stage, in the keep decision, the export and
the judge-vs-tests agreement table of `prchain stats` and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine

from prchain.agent.export import export_trajectories
from prchain.agent.keep import decide, stage_passes
from prchain.agent.stats import agreement, agreement_table
from prchain.cli import main
from prchain.store.db import session_scope
from prchain.store.models import Judgement, Rollout, RolloutStage, Step
from tests.agent.conftest import seed_chain

# (judge score, judge passed, tests passed) of stages 1 and 2 of four rollouts.
ROLLOUTS = [
    [(0.9, True, True), (0.9, True, True)],  # both agree: pass
    [(0.9, True, False), (0.9, True, None)],  # the judge passes what the tests fail
    [(0.3, False, True), (0.9, True, None)],  # the tests pass what the judge fails
    [(0.2, False, False), (None, False, None)],  # both fail; stage 2 gated (no score)
]


@pytest.mark.parametrize(
    ("score", "tests", "signal", "passes"),
    [
        (0.9, None, "tests", True),  # no verified tests: the judge decides
        (0.3, True, "tests", True),
        (0.9, False, "tests", False),
        (0.9, False, "both", False),
        (0.9, True, "both", True),
        (0.3, True, "both", False),
        (0.3, True, "judge", False),
        (None, True, "tests", False),  # never judged (a gate failed it): never passes
    ],
)
def test_stage_passes(score: float | None, tests: bool | None, signal: str, passes: bool) -> None:
    assert stage_passes(score, tests, 0.8, signal) is passes  # type: ignore[arg-type]


def test_decide_takes_pass_flags() -> None:
    assert (
        decide("all", [True, False], 2, 0.8).reason == "stage 2 of 2 did not pass (threshold 0.8)"
    )
    assert decide("prefix", [True, True, False], 3, 0.8).kept_stages == 2


def seed_rollouts(engine: Engine, tmp_path: Path) -> None:
    chain_id = seed_chain(str(engine.url), tmp_path).chain_id
    with session_scope(engine) as session:
        for stages in ROLLOUTS:
            rollout = Rollout(chain_id=chain_id, status="kept", conflict_policy="strict")
            session.add(rollout)
            session.flush()
            for idx, (score, judged, tests) in enumerate(stages, 1):
                session.add(
                    RolloutStage(
                        rollout_id=rollout.id,
                        stage_idx=idx,
                        status="passed",
                        score=score,
                        tests_passed=tests,
                    )
                )
                if score is not None:
                    session.add(
                        Judgement(
                            rollout_id=rollout.id,
                            stage_idx=idx,
                            round=0,
                            score=score,
                            comment="c",
                            passed=judged,
                            attempts=1,
                        )
                    )
            for i, (kind, role) in enumerate(
                [("system", "system"), ("query", "user"), ("assistant", "assistant")]
            ):
                message = {"role": role, "content": f"{kind} text"}
                session.add(
                    Step(rollout_id=rollout.id, stage_idx=1, idx=i, kind=kind, message=message)
                )


def test_the_export_follows_the_signal(sqlite_engine: Engine, tmp_path: Path) -> None:
    seed_rollouts(sqlite_engine, tmp_path)
    written = {
        signal: export_trajectories(
            sqlite_engine, tmp_path / f"{signal}.jsonl", keep="all", keep_on=signal
        ).written
        for signal in ("judge", "both")
    }
    assert written == {"judge": 2, "both": 1}
    ids = {
        signal: [
            json.loads(r)["metadata"]["rollout_id"]
            for r in (tmp_path / f"{signal}.jsonl").read_text().splitlines()
        ]
        for signal in ("judge", "both")
    }
    assert ids == {"judge": [1, 2], "both": [1]}


def test_the_tests_alone_are_refused_with_a_reason(sqlite_engine: Engine, tmp_path: Path) -> None:
    """Issue 52: the agent's code runs inside the test process, so tests alone keep nothing."""
    from pydantic import ValidationError

    from prchain.agent.config import AgentConfig

    seed_rollouts(sqlite_engine, tmp_path)
    with pytest.raises(ValueError, match="keep_on=tests is refused: the agent's own code"):
        export_trajectories(sqlite_engine, tmp_path / "t.jsonl", keep="all", keep_on="tests")
    assert not (tmp_path / "t.jsonl").exists()
    with pytest.raises(ValidationError, match="use keep_on=both"):
        AgentConfig(keep_on="tests")


def test_stats_show_judge_against_tests_as_a_2x2_table(
    sqlite_engine: Engine, sqlite_url: str, tmp_path: Path
) -> None:
    seed_rollouts(sqlite_engine, tmp_path)
    with session_scope(sqlite_engine) as session:
        cells = agreement(session)
    # Stages with both a standing verdict and verified tests: 1/1, 1/2, 2/1, 3/1, 4/1.
    assert cells == {
        "judge_pass_tests_pass": 2,
        "judge_pass_tests_fail": 1,
        "judge_fail_tests_pass": 1,
        "judge_fail_tests_fail": 1,
    }
    assert agreement_table(cells).caption == "agreement 60.0%"
    shown = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["stats", "--db", sqlite_url])
    assert shown.exit_code == 0 and "Judge vs hidden tests" in shown.output
    data = json.loads(CliRunner().invoke(main, ["stats", "--json", "--db", sqlite_url]).output)
    assert data["judge_fail_tests_pass"] == 1
