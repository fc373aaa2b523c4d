"""The seam between the chain runner and the agent that works a stage: the built-in loop
(prchain.agent.loop) or mini-swe-agent (prchain.agent.mini). The runner opens each stage, lets the
agent work to a submit, hands the judge's comment back and lets it work again; nothing else."""

from __future__ import annotations

from typing import Any, Protocol

from prchain.agent.config import AgentConfig
from prchain.agent.hooks import StepHook
from prchain.agent.loop import Counters, StageRun, StepSink
from prchain.agent.tasks import ChainTask, StageTask
from prchain.environments.protocol import Environment
from prchain.llm.protocol import ChatLLM, Message


def scaffold_of(rollout_config: dict[str, Any] | None) -> str:
    """Which scaffold a rollout was made with: its stored config's agent.scaffold (builtin for
    rollouts stored before the key existed)."""
    return str((rollout_config or {}).get("agent", {}).get("scaffold") or "builtin")


class StageAgent(Protocol):
    """One rollout's agent: a conversation that goes on across the stages of a chain."""

    rollout_id: int | None
    stage: Counters  # this stage's steps and tokens
    chain: Counters  # the whole rollout's

    def opening(self, task: ChainTask, stage: StageTask) -> list[tuple[str, Message]]:
        """(kind, message) pairs a stage starts with, in this scaffold's own prompts."""
        ...

    def run_stage(
        self, stage_idx: int, task: str, *, opening: list[tuple[str, Message]]
    ) -> StageRun: ...

    def feedback(self, comment: str) -> Message:
        """The user turn that hands the judge's comment back (how to submit again included)."""
        ...

    def add(self, kind: str, message: Message, **extra: Any) -> None: ...

    def work(self) -> StageRun: ...


class Scaffold(Protocol):
    """Makes the agent of each rollout when it is not the built-in loop (agent.scaffold)."""

    def loop(
        self,
        llm: ChatLLM,
        env: Environment,
        config: AgentConfig,
        sink: StepSink,
        hook: StepHook | None,
        rollout_id: int,
        messages: list[Message],
        chain: Counters,
    ) -> StageAgent: ...
