"""ATIF, Harbor's Agent Trajectory Interchange Format (harbor.models.trajectories, ATIF-v1.6).

One row is one trajectory: `schema_version`, `session_id` (the rollout), `agent` (prchain, the
policy model, the tool definitions) and `steps` numbered from 1. The OpenAI-shaped record maps:

- a system or user message (the task, the judge's feedback) is a `system` or `user` step;
- an assistant message is an `agent` step: its text as `message`, kept reasoning as
  `reasoning_content`, its calls as `tool_calls` (`tool_call_id`, `function_name`, `arguments` as
  an object; broken JSON a model wrote stays under `raw`, as in sharegpt);
- the `tool` results that follow it are that step's `observation.results`, each naming its call
  (`source_call_id`), which is where ATIF wants a call's result.

The row's metadata (format version, success and truncation flags, ids back to the store) is the
trajectory's `extra`. `check_atif` holds the rules ATIF's models enforce; a test validates rows
with Harbor's own pydantic models.
"""

from __future__ import annotations

from typing import Any

from prchain import __version__
from prchain.agent.formats.openai import _without_nulls
from prchain.agent.formats.sharegpt import _arguments

ATIF_VERSION = "ATIF-v1.6"


def to_atif(record: dict[str, Any]) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    for message in record["messages"]:
        if message["role"] == "tool" and steps and steps[-1]["source"] == "agent":
            result = {"source_call_id": message.get("tool_call_id"), "content": message["content"]}
            steps[-1].setdefault("observation", {"results": []})["results"].append(result)
        else:
            steps.append(_step(message, len(steps) + 1))
    metadata = record["metadata"]
    agent = {
        "name": "prchain",
        "version": __version__,
        "model_name": metadata.get("models", {}).get("policy") or None,
        "tool_definitions": record["tools"],
    }
    return {
        "schema_version": ATIF_VERSION,
        "session_id": f"prchain-rollout-{metadata['rollout_id']}",
        "agent": {k: v for k, v in agent.items() if v is not None},
        "steps": steps,
        "extra": metadata,
    }


def _step(message: dict[str, Any], step_id: int) -> dict[str, Any]:
    role = message["role"]
    if role != "assistant":
        source = "system" if role == "system" else "user"
        return {"step_id": step_id, "source": source, "message": message.get("content") or ""}
    step: dict[str, Any] = {
        "step_id": step_id,
        "source": "agent",
        "message": message.get("content") or "",
    }
    if message.get("reasoning_content"):
        step["reasoning_content"] = message["reasoning_content"]
    calls = message.get("tool_calls") or []
    if calls:
        step["tool_calls"] = [
            {
                "tool_call_id": call["id"],
                "function_name": call["function"]["name"],
                "arguments": _arguments(call["function"]["arguments"]),
            }
            for call in calls
        ]
    return step


def check_atif(row: dict[str, Any]) -> None:
    """The rules of ATIF's models: steps numbered from 1, agent-only fields on agent steps, each
    observation naming a call of its own step."""
    import jsonschema  # a dev dependency: tests and `--check` only

    row = _without_nulls(row)  # as loaded back: datasets fills absent struct fields with None
    jsonschema.validate(row, ATIF_SCHEMA)
    for index, step in enumerate(row["steps"], start=1):
        if step["step_id"] != index:
            raise jsonschema.ValidationError(f"steps[{index - 1}].step_id is not {index}")
        if step["source"] != "agent" and ({"tool_calls", "reasoning_content"} & set(step)):
            raise jsonschema.ValidationError(f"step {index}: agent-only fields on a non-agent step")
        ids = {call["tool_call_id"] for call in step.get("tool_calls") or []}
        for result in (step.get("observation") or {}).get("results", []):
            if result.get("source_call_id") is not None and result["source_call_id"] not in ids:
                raise jsonschema.ValidationError(f"step {index}: a result of no call of its own")


_CALL: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["tool_call_id", "function_name", "arguments"],
    "properties": {
        "tool_call_id": {"type": "string"},
        "function_name": {"type": "string"},
        "arguments": {"type": "object"},
    },
}
_RESULT: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"source_call_id": {"type": ["string", "null"]}, "content": {"type": "string"}},
}
ATIF_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema_version", "agent", "steps"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"const": ATIF_VERSION},
        "session_id": {"type": "string"},
        "agent": {
            "type": "object",
            "required": ["name", "version"],
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "model_name": {"type": "string"},
                "tool_definitions": {"type": "array", "items": {"type": "object"}},
            },
        },
        "steps": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["step_id", "source", "message"],
                "additionalProperties": False,
                "properties": {
                    "step_id": {"type": "integer", "minimum": 1},
                    "source": {"enum": ["system", "user", "agent"]},
                    "message": {"type": "string"},
                    "reasoning_content": {"type": "string"},
                    "tool_calls": {"type": "array", "items": _CALL},
                    "observation": {
                        "type": "object",
                        "required": ["results"],
                        "additionalProperties": False,
                        "properties": {"results": {"type": "array", "items": _RESULT}},
                    },
                },
            },
        },
        "extra": {"type": "object"},
    },
}
