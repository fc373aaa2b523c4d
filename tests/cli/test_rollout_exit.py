"""`prchain rollout`'s exit status: 1 when a stage was skipped for a reason the user must act on."""

from __future__ import annotations

import click
import pytest

from prchain.agent.gates import leaking_query
from prchain.agent.results import RolloutResult
from prchain.cli.rollout import _report


def test_a_rollout_whose_only_stage_leaked_exits_1() -> None:
    reason = leaking_query(1, ("multiply",))
    with pytest.raises(click.exceptions.Exit) as stopped:
        _report([RolloutResult(1, 1, "rejected", reason=reason, scores=[None])])
    assert stopped.value.exit_code == 1


def test_a_rollout_the_judge_rejected_exits_0() -> None:
    _report(
        [RolloutResult(1, 1, "rejected", reason="stage 1: the judge scored 0.40", scores=[0.4])]
    )
