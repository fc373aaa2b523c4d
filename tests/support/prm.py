"""Test helpers for the PRM: synthetic agent steps, a tool set and well-formed PRM verdicts."""

from __future__ import annotations

import json
from typing import Any

from prchain.agent.hooks import StepRecord


def bash_step(
    index: int, command: str, observation: str, thought: str | None = None, stage: int = 1
) -> StepRecord:
    """A synthetic agent step: one bash call and its output."""
    call = {
        "id": f"call_{index}",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    assistant = {
        "role": "assistant",
        "content": thought or f"thought {index}",
        "tool_calls": [call],
    }
    return StepRecord(index=index, stage_idx=stage, assistant=assistant, observations=[observation])


TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the repository.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string", "description": "The command line."}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "submit",
            "description": "Finish the stage.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]


def verdict_json(
    status: str = "needs_correction",
    detected: dict[str, tuple[str, str]] | None = None,
    guidance: str = "Stop repeating the listing; open calc/ops.py and fix add().",
    action: dict[str, Any] | None = None,
) -> str:
    """A well-formed taxonomy verdict as a PRM would send it."""
    detected = (
        {"step_repetition": ("ran `ls` three times", "Move on to calc/ops.py.")}
        if detected is None
        else detected
    )
    errors = {
        key: {"detected": True, "evidence": ev, "recovery_action": rec}
        for key, (ev, rec) in detected.items()
    }
    errors.setdefault("hallucination", {"detected": False, "evidence": "", "recovery_action": ""})
    body: dict[str, Any] = {"errors": errors, "task_status": status, "guidance": guidance}
    if action is not None:
        body["recommended_action"] = action
    return json.dumps(body)


# SWE-PRM Table 1 as the tests expect it: variant → (taxonomy style, with example,
# reasoning passed to the policy, recommends an action).
TABLE1 = {
    "S": ("simple", False, True, False),
    "C": ("concise", True, True, False),
    "CG": ("concise", True, False, False),
    "D": ("detailed", True, True, False),
    "DN": ("detailed", False, True, False),
    "DG": ("detailed", True, False, False),
    "DNG": ("detailed", False, False, False),
    "DR": ("detailed", True, True, True),
}
