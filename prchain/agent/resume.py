"""Resuming a killed rollout: the counters of the steps already stored, and the sandbox at the end of
the last passed stage rebuilt from its stored cumulative diff."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from environments.protocol import Environment
from prchain.agent.loop import Counters
from prchain.core.errors import EnvironmentFailure
from sql.models import RolloutStage, Step


def rebuild(env: Environment, last: RolloutStage) -> None:
    """Bring a fresh sandbox to the end of stage `last`: its start state plus the stored Δ."""
    env.enter_stage(last.stage_idx)
    delta = last.cumulative_diff
    if not delta.strip():
        return
    marker = f"PRCHAIN_DELTA_{uuid.uuid4().hex}"
    result = env.execute(f"git apply --whitespace=nowarn - <<'{marker}'\n{delta}\n{marker}\n")
    if result.exit_code != 0:
        raise EnvironmentFailure(
            f"could not restore stage {last.stage_idx}'s changes on resume: {result.output[-500:]}"
        )


def restored_counters(steps: Iterable[Step]) -> Counters:
    """The chain counters as they stood after `steps` (policy replies only)."""
    counters = Counters()
    for step in steps:
        if step.kind in ("assistant", "format_error") and step.message.get("role") == "assistant":
            counters.steps += 1
            counters.tool_calls += len(step.message.get("tool_calls") or [])
            counters.prompt_tokens += step.prompt_tokens
            counters.completion_tokens += step.completion_tokens
            counters.context_tokens = step.prompt_tokens + step.completion_tokens
    return counters
