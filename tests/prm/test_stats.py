"""`prchain stats` reports SWE-PRM per variant in the paper's Table 4 columns."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine

from prchain.cli import main
from prchain.store.db import session_scope
from prchain.store.models import PRMCall, Step


def _steps(engine: Engine, rollout_id: int, n: int) -> None:
    with session_scope(engine) as session:
        session.add(
            Step(
                rollout_id=rollout_id, stage_idx=1, idx=0, kind="system", message={"role": "system"}
            )
        )
        for i in range(n):
            message = {"role": "assistant", "content": f"step {i}"}
            session.add(
                Step(
                    rollout_id=rollout_id,
                    stage_idx=1,
                    idx=2 * i + 1,
                    kind="assistant",
                    message=message,
                )
            )
            session.add(
                Step(
                    rollout_id=rollout_id,
                    stage_idx=1,
                    idx=2 * i + 2,
                    kind="tool",
                    message={"role": "tool"},
                )
            )


def _calls(
    engine: Engine, rollout_id: int, variant: str, statuses: list[str | None], cost: float = 0.01
) -> None:
    with session_scope(engine) as session:
        for n, status in enumerate(statuses, start=1):
            session.add(
                PRMCall(
                    rollout_id=rollout_id,
                    stage_idx=1,
                    step_idx=5 * n,
                    variant=variant,
                    task_status=status,
                    status="ok" if status or variant == "S" else "invalid_output",
                    injected=status != "on_track",
                    prompt_tokens=1000,
                    completion_tokens=200,
                    cost_usd=cost,
                )
            )


@pytest.fixture
def populated(engine: Engine, make_rollout) -> Engine:
    """base: 2 rollouts (1 kept); D: 2 rollouts (both kept); S: 1 rollout (rejected)."""
    for status, steps in (("kept", 10), ("rejected", 20)):
        _steps(engine, make_rollout(None, status=status, cost_usd=0.5), steps)
    d1, d2 = (
        make_rollout("D", status="kept", cost_usd=1.0),
        make_rollout("D", status="kept", cost_usd=2.0),
    )
    _steps(engine, d1, 12)
    _steps(engine, d2, 8)
    _calls(engine, d1, "D", ["needs_correction", "critical"])
    _calls(
        engine, d2, "D", ["on_track", "needs_correction", None]
    )  # the last one was invalid output
    s1 = make_rollout("S", status="rejected", cost_usd=0.25)
    _steps(engine, s1, 15)
    _calls(engine, s1, "S", [None, None, None], cost=0.02)
    return engine


def _run(engine: Engine, *args: str) -> str:
    url = engine.url.render_as_string(hide_password=False)
    result = CliRunner(env={"COLUMNS": "250"}).invoke(main, ["stats", "--db", url, *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_stats_json_has_table4_numbers_per_variant(populated: Engine) -> None:
    data = json.loads(_run(populated, "--json"))
    assert data["prm.base.trajectories"] == 2 and data["prm.base.acceptance_rate"] == 0.5
    assert data["prm.base.mean_steps"] == 15 and data["prm.base.invocations_per_trajectory"] == 0
    assert data["prm.D.trajectories"] == 2 and data["prm.D.acceptance_rate"] == 1.0
    assert data["prm.D.mean_steps"] == 10
    assert data["prm.D.invocations_per_trajectory"] == 2.5
    assert data["prm.D.optimal_windows_per_trajectory"] == 0.5
    assert data["prm.D.suboptimal_windows_per_trajectory"] == 1.5
    assert data["prm.D.invalid_calls"] == 1
    assert data["prm.D.prm_cost_per_100"] == pytest.approx(100 * 0.05 / 2)
    assert data["prm.D.total_cost_per_100"] == pytest.approx(150.0)
    assert data["prm.D.prm_input_tokens_per_trajectory"] == 2500
    # S never judges a window, so it has no optimal/suboptimal split (the paper's "-").
    assert data["prm.S.optimal_windows_per_trajectory"] is None
    assert data["prm.S.invocations_per_trajectory"] == 3 and data["prm.S.acceptance_rate"] == 0
    assert data["prm.S.prm_cost_per_100"] == pytest.approx(6.0)


def test_stats_prints_the_per_variant_table(populated: Engine) -> None:
    output = _run(populated)
    assert "SWE-PRM by variant" in output
    for header in (
        "Accepted %",
        "Mean steps",
        "PRM calls / traj",
        "Optimal windows / traj",
        "Suboptimal windows / traj",
        "PRM $ / 100 traj",
    ):
        assert header in output
    rows = {line.split("│")[1].strip(): line for line in output.splitlines() if line.count("│") > 5}
    assert {"base", "S", "D"} <= set(rows)
    d_cells = [cell.strip() for cell in rows["D"].split("│")[2:-1]]
    assert d_cells[:6] == ["2", "100.0", "10.00", "2.50", "0.50", "1.50"]
    s_cells = [cell.strip() for cell in rows["S"].split("│")[2:-1]]
    assert s_cells[4:6] == ["-", "-"]


def test_no_prm_section_without_prm_rollouts(engine: Engine, make_rollout) -> None:
    make_rollout(None, status="kept")
    assert "SWE-PRM" not in _run(engine)
    assert not any(key.startswith("prm.") for key in json.loads(_run(engine, "--json")))
