"""The messages each stage of a chain starts with (the system prompt and the first task, or the
next task), the same for a plain rollout and a P2T curation."""

from __future__ import annotations

from pathlib import Path

from prchain.agent.tasks import ChainTask, StageTask
from prchain.llm.prompts import render
from prchain.llm.protocol import Message

PROMPTS = Path(__file__).with_name("prompts")


def stage_opening(
    task: ChainTask, stage: StageTask, action_format: str
) -> list[tuple[str, Message]]:
    """(kind, message) pairs: system and first task for the chain's first stage, else the next task."""
    n = len(task.stages)
    if stage.idx == task.stages[0].idx:
        system = render(PROMPTS, "system.j2", action_format=action_format)
        first = render(
            PROMPTS, "first_task.j2", n_stages=n, overview=task.overview, query=stage.query
        )
        return [
            ("system", {"role": "system", "content": system}),
            ("query", {"role": "user", "content": first}),
        ]
    text = render(PROMPTS, "next_task.j2", idx=stage.idx, n_stages=n, query=stage.query)
    return [("query", {"role": "user", "content": text})]


def task_text(task: ChainTask, stage: StageTask) -> str:
    """What the stage asks, with the chain's overview before the first stage's query."""
    return f"{task.overview}\n\n{stage.query}" if stage.idx == 1 else stage.query
