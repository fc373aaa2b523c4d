"""What a chain's rollout comes to: the `RolloutResult` a runner returns, the scores of a stored
rollout, a failure's one-line reason and the totals a rollout row records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from prchain.agent.loop import Counters
from prchain.store.rollouts import Rollouts


@dataclass
class RolloutResult:
    chain_id: int
    rollout_id: int
    status: (
        str  # a RolloutStatus value, "busy" (another runner has it) or "lost" (its task kept dying)
    )
    kept_stages: int = 0
    reason: str | None = None
    scores: list[float | None] = field(default_factory=list)
    node: str | None = None  # where it ran, filled in by whoever scheduled it
    # An earlier attempt had started this rollout (it was resumed) or finished it (its stored final
    # state is reported): a task Ray reran after its node died, or a rerun of the command.
    retried: bool = False
    # What a resumed sandbox could not restore exactly (empty when Δ came back byte for byte).
    resume_notes: tuple[str, ...] = ()

    @property
    def needs_action(self) -> bool:
        """A stage was skipped for a reason the user must act on (a leaking query)."""
        from prchain.agent.gates import needs_action

        return needs_action(self.reason)


def stored_scores(engine: Engine, rollout_id: int) -> list[float | None]:
    """The judge's score of each stage of a stored rollout, in stage order."""
    return Rollouts(engine).scores(rollout_id)


REASON_CHARS = 500


def failure_reason(exc: BaseException) -> str:
    """`ErrorType: first line of the message`: what a stored reason of a failed rollout holds."""
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    if len(text) > REASON_CHARS:
        text = text[: REASON_CHARS - 1] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def totals(counters: Counters) -> dict[str, Any]:
    """The rollout row's token, step and tool-call totals."""
    return {
        "prompt_tokens": counters.prompt_tokens,
        "completion_tokens": counters.completion_tokens,
        "trajectory_tokens": counters.context_tokens,
        "agent_steps": counters.steps,
        "tool_calls": counters.tool_calls,
    }
