"""The hook the agent loop calls every n steps with the last k steps (the PRM plugs in here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from prchain.llm.protocol import Message


@dataclass(frozen=True)
class StepRecord:
    """One agent step: the assistant's action and what the environment answered."""

    index: int  # 1-based agent step number within the rollout
    stage_idx: int
    assistant: Message  # the assistant message (content and tool_calls)
    observations: list[str] = field(default_factory=list)  # tool results, in tool_call order


@dataclass(frozen=True)
class HookContext:
    rollout_id: int | None
    stage_idx: int
    step_count: int  # agent steps taken so far in this rollout
    task: str  # what the agent is asked in this stage (overview + query on stage 1)
    recent_steps: list[StepRecord]  # the last `window` steps, oldest first
    tools: list[dict[str, Any]]  # the agent's tool schemas (DR recommends one of these)


class StepHook(Protocol):
    """Called after every `every`-th agent step; returns messages to inject into the agent's context."""

    every: int
    window: int

    def __call__(self, context: HookContext) -> list[Message]: ...
