"""The summary line of `prchain tests verify`: a rerun counts stages by what the store holds."""

from __future__ import annotations

from prchain.cli.verdicts import _totals
from prchain.verdicts.stage import StageSetup
from prchain.verdicts.verify import Result, StageReport


def _report(idx: int, result: Result, stored: str | None, f2p: int) -> StageReport:
    job = StageSetup(idx, 13, idx, 2800 + idx, "o/r", "", "abc", "", "")
    return StageReport(job, result, fail_to_pass=f2p, stored=stored)


def test_a_rerun_counts_only_the_stages_stored_usable() -> None:
    """strawberry chain 13 verified again: every stage skipped, and #2911, unusable (its gold
    fails 2 of its own tests), stored 63 FAIL_TO_PASS beside its reason. The line said "69
    FAIL_TO_PASS tests in 2 usable stages" where the first run had said 6 in 1."""
    reports = [
        _report(1, "skipped", "unusable", 0),
        _report(2, "skipped", "usable", 6),
        _report(3, "skipped", "unusable", 0),
        _report(4, "skipped", "unusable", 63),
    ]
    assert _totals(reports) == "4 stages: 4 skipped; 6 FAIL_TO_PASS tests in 1 usable stages"
    first = [_report(2, "usable", None, 6), _report(4, "unusable", None, 63)]
    assert (
        _totals(first) == "2 stages: 1 unusable, 1 usable; 6 FAIL_TO_PASS tests in 1 usable stages"
    )
