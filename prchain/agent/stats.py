"""`prchain stats` section: trajectories kept and rejected, judge scores, size and cost of kept ones,
and how often the judge agrees with the hidden tests (to calibrate the judge)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from sqlalchemy.orm import Session

from prchain.store import rollouts as stored

PAPER_TOKENS = 85_000  # daVinci-Agency: mean tokens per trajectory
PAPER_TOOL_CALLS = 116  # and mean tool calls
SCORE_BINS = ((0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01))
AGREEMENT_CELLS = {
    (True, True): "judge_pass_tests_pass",
    (True, False): "judge_pass_tests_fail",
    (False, True): "judge_fail_tests_pass",
    (False, False): "judge_fail_tests_fail",
}


def _bin_key(low: float, high: float) -> str:
    return f"stage_scores_{low:.1f}_{min(high, 1.0):.1f}"


def agreement(session: Session) -> dict[str, int]:
    """The 2x2 table of judge verdict against T(p̂), over stages that had both: a judge verdict
    that stood (gated and self-contradicting stages have no score) and verified hidden tests.
    The judge's side is its own pass flag, so the threshold of each rollout applies."""
    passed = stored.judged_passes(session)
    stages = stored.scored_test_outcomes(session)
    cells = dict.fromkeys(AGREEMENT_CELLS.values(), 0)
    for rollout_id, idx, tests in stages:
        cells[AGREEMENT_CELLS[((rollout_id, idx) in passed, bool(tests))]] += 1
    return cells


def agreement_rate(cells: dict[str, int]) -> float | None:
    total = sum(cells.values())
    agreed = cells["judge_pass_tests_pass"] + cells["judge_fail_tests_fail"]
    return round(agreed / total, 3) if total else None


def collect(session: Session) -> dict[str, Any]:
    statuses = stored.status_counts(session)
    n_kept, tokens, calls, cost = stored.kept_means(session)
    total_cost = stored.total_cost(session)
    scores = stored.stage_scores(session)
    data: dict[str, Any] = {
        "trajectories_kept": int(statuses.get("kept", 0)),
        "trajectories_rejected": int(statuses.get("rejected", 0)),
        "trajectories_failed": int(statuses.get("failed", 0)),
        "trajectories_running": int(statuses.get("running", 0)),
        "kept_mean_tokens": round(float(tokens or 0), 1),
        "kept_mean_tool_calls": round(float(calls or 0), 1),
        "kept_mean_cost_usd": round(float(cost or 0), 6),
        "cost_usd_per_kept_trajectory": round(float(total_cost) / n_kept, 6) if n_kept else 0.0,
        "stage_scores_mean": round(sum(scores) / len(scores), 3) if scores else 0.0,
        "judge_calls_needing_retry": stored.judge_retries(session),
    }
    for low, high in SCORE_BINS:
        data[_bin_key(low, high)] = sum(1 for s in scores if low <= s < high)
    data.update(agreement(session))
    return data


def render(data: dict[str, Any]) -> list[Table]:
    table = Table(title="Trajectories")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("paper", justify="right")
    rows = [
        ("kept", data["trajectories_kept"], ""),
        ("rejected", data["trajectories_rejected"], ""),
        ("failed (infrastructure)", data["trajectories_failed"], ""),
        ("running / resumable", data["trajectories_running"], ""),
        ("mean tokens per kept trajectory", data["kept_mean_tokens"], f"{PAPER_TOKENS:,}"),
        (
            "mean tool calls per kept trajectory",
            data["kept_mean_tool_calls"],
            str(PAPER_TOOL_CALLS),
        ),
        (
            "cost per kept trajectory (USD, all rollouts)",
            f"{data['cost_usd_per_kept_trajectory']:.4f}",
            "",
        ),
        ("mean stage score", data["stage_scores_mean"], ""),
    ]
    for name, value, paper in rows:
        table.add_row(name, str(value), paper)
    scores = Table(title="Judge scores per stage (final round)")
    scores.add_column("score")
    scores.add_column("stages", justify="right")
    for low, high in SCORE_BINS:
        scores.add_row(
            f"[{low:.1f}, {min(high, 1.0):.1f}{']' if high > 1 else ')'}",
            str(data[_bin_key(low, high)]),
        )
    return [table, scores, agreement_table(data)]


def agreement_table(data: dict[str, Any]) -> Table:
    cells = {key: int(data.get(key, 0)) for key in AGREEMENT_CELLS.values()}
    rate = agreement_rate(cells)
    caption = f"agreement {rate:.1%}" if rate is not None else "no stage has both yet"
    table = Table(title="Judge vs hidden tests (stages with verified tests)", caption=caption)
    table.add_column("")
    table.add_column("tests pass", justify="right")
    table.add_column("tests fail", justify="right")
    for side in ("pass", "fail"):
        table.add_row(
            f"judge {side}",
            str(cells[f"judge_{side}_tests_pass"]),
            str(cells[f"judge_{side}_tests_fail"]),
        )
    return table
