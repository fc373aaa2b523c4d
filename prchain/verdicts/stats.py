"""The test-verdicts section of `prchain stats`: verified stages, their tests, and T(p̂) of rollouts."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from sqlalchemy.orm import Session

from prchain.store.environments import usable_lists, verification_counts
from prchain.store.rollouts import test_outcome_counts


def collect(session: Session) -> dict[str, Any]:
    by_status = verification_counts(session)
    lists = usable_lists(session)
    t_values = test_outcome_counts(session)
    return {
        "stages_verified": sum(by_status.values()),
        "stages_usable": by_status.get("usable", 0),
        "stages_unusable": by_status.get("unusable", 0),
        "fail_to_pass_tests": sum(len(f2p) for f2p, _ in lists),
        "pass_to_pass_tests": sum(len(p2p) for _, p2p in lists),
        "rollout_stages_tests_passed": t_values.get(True, 0),
        "rollout_stages_tests_failed": t_values.get(False, 0),
    }


def render(data: dict[str, Any]) -> list[Table]:
    table = Table(title="Test verdicts")
    table.add_column("what")
    table.add_column("count", justify="right")
    for key, label in (
        ("stages_verified", "stages verified"),
        ("stages_usable", "  usable (with FAIL_TO_PASS tests)"),
        ("stages_unusable", "  unusable"),
        ("fail_to_pass_tests", "FAIL_TO_PASS tests (usable stages)"),
        ("pass_to_pass_tests", "PASS_TO_PASS tests (usable stages)"),
        ("rollout_stages_tests_passed", "rollout stages with T(p̂) = 1"),
        ("rollout_stages_tests_failed", "rollout stages with T(p̂) = 0"),
    ):
        table.add_row(label, str(data.get(key, 0)))
    return [table]
