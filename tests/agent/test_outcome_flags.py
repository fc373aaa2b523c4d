"""(unit) Every exported trajectory says whether it succeeded and whether a budget cut it
(`success`, `truncated`, `truncation_reason` in its metadata, format prchain.trajectory/2)."""

from __future__ import annotations

from prchain.agent.export import outcome_flags
from prchain.store.models import RolloutStage


def _stage(idx: int, status: str, reason: str | None = None) -> RolloutStage:
    return RolloutStage(stage_idx=idx, status=status, reason=reason)


def test_a_whole_chain_that_passed_is_a_success() -> None:
    flags = outcome_flags([_stage(1, "passed"), _stage(2, "passed")], 2)
    assert flags == {"success": True, "truncated": False, "truncation_reason": ""}


def test_a_prefix_is_no_success_even_when_its_stages_passed() -> None:
    assert outcome_flags([_stage(1, "passed")], 2)["success"] is False


def test_each_budget_the_loop_stops_on_is_a_truncation() -> None:
    for reason in [
        "stage step budget spent (40 steps)",
        "chain step budget spent (120 steps)",
        "stage token budget spent (200000 tokens)",
        "chain token budget spent (600000 tokens)",
        "not submitted: context window exceeded (~130000 > 128000 tokens)",
    ]:
        flags = outcome_flags([_stage(1, "passed"), _stage(2, "failed", reason)], 2)
        assert flags == {"success": False, "truncated": True, "truncation_reason": reason}


def test_a_failed_judgement_is_not_a_truncation() -> None:
    flags = outcome_flags([_stage(1, "failed", "the judge scored 0.2 (below 0.8)")], 1)
    assert flags == {"success": False, "truncated": False, "truncation_reason": ""}
