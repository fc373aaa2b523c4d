"""The window the PRM reads: the last k agent steps as (thought, action, observation) triples.

The paper's x_t = serialize(d, H_t^(k)); the task d is rendered by the prompt template. The
serialized window is also what a `prm_calls` row stores, so it stays JSON-ready.
"""

from __future__ import annotations

import json
from typing import Any

from prchain.agent.hooks import StepRecord

TRUNCATION_MARKER = "\n[... observation truncated for the supervisor ...]\n"


def truncate(text: str, limit: int) -> str:
    """Head and tail of a long observation: errors tend to sit at the end, context at the start."""
    if len(text) <= limit:
        return text
    head = limit // 2
    return text[:head] + TRUNCATION_MARKER + text[len(text) - (limit - head) :]


def _arguments(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw or {}
    try:
        return json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return raw  # the PRM should see a malformed call exactly as the agent sent it


def _action(tool_call: dict[str, Any]) -> dict[str, Any]:
    function = tool_call.get("function") or {}
    return {"tool": function.get("name", ""), "arguments": _arguments(function.get("arguments"))}


def serialize_step(step: StepRecord, max_observation_chars: int) -> dict[str, Any]:
    return {
        "index": step.index,
        "stage": step.stage_idx,
        "thought": (step.assistant.get("content") or "").strip(),
        "actions": [_action(call) for call in step.assistant.get("tool_calls") or []],
        "observations": [truncate(o, max_observation_chars) for o in step.observations],
    }


def serialize_window(
    steps: list[StepRecord], k: int, max_observation_chars: int
) -> list[dict[str, Any]]:
    """The last `k` steps, oldest first."""
    return [serialize_step(step, max_observation_chars) for step in steps[-k:]]


def _render_action(action: dict[str, Any]) -> str:
    arguments = action["arguments"]
    shown = (
        json.dumps(arguments, ensure_ascii=False) if not isinstance(arguments, str) else arguments
    )
    return f"{action['tool']} {shown}"


def render_step(step: dict[str, Any]) -> str:
    lines = [
        f"--- Step {step['index']} (stage {step['stage']}) ---",
        f"Thought: {step['thought'] or '(none)'}",
    ]
    lines += [f"Action: {_render_action(a)}" for a in step["actions"]] or ["Action: (no tool call)"]
    lines += [f"Observation:\n{o}" for o in step["observations"]]
    return "\n".join(lines)


def render_window(window: list[dict[str, Any]]) -> str:
    """The window as the plain text the PRM prompt embeds."""
    return "\n\n".join(render_step(step) for step in window)
