"""LLaMA-Factory's sharegpt format with tools (its data/README "Sharegpt Format").

One row: `conversations` [{"from": human|gpt|function_call|observation, "value": str}], `system`
(str) and `tools` (a JSON string of function definitions). LLaMA-Factory's converter requires
human/observation turns at odd positions and gpt/function_call at even ones, and an even count, so:

- an assistant turn with tool calls becomes `function_call`, its value the JSON of the call
  ({"name", "arguments": {...}}, a list when the turn made several calls); the prose beside a
  call has no place in this format and is left out (the openai format keeps it);
- the results of one turn's calls are joined into one `observation`;
- a user turn right after an observation (judge feedback, the next task) joins that observation;
- a trailing observation (the last submit's receipt) is dropped, so the row ends on a model turn.

Kept reasoning goes in front of the turn's value as `<think>…</think>`, which LLaMA-Factory's
reasoning templates split off again (for function_call values too).
"""

from __future__ import annotations

import json
from typing import Any

USER, MODEL = ("human", "observation"), ("gpt", "function_call")

SHAREGPT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["conversations", "system", "tools"],
    "properties": {
        "conversations": {
            "type": "array",
            "minItems": 2,
            "items": {
                "type": "object",
                "required": ["from", "value"],
                "additionalProperties": False,
                "properties": {
                    "from": {"enum": [*USER, *MODEL]},
                    "value": {"type": "string"},
                },
            },
        },
        "system": {"type": "string"},
        "tools": {"type": "string"},
        "metadata": {"type": "object"},
    },
}


def to_sharegpt(record: dict[str, Any]) -> dict[str, Any]:
    messages = record["messages"]
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    turns: list[dict[str, str]] = []
    for message in messages:
        if message["role"] != "system":
            _append(turns, *_turn(message))
    while turns and turns[-1]["from"] in USER:
        turns.pop()
    tools = [schema.get("function", schema) for schema in record["tools"]]
    return {
        "conversations": turns,
        "system": system,
        "tools": json.dumps(tools, ensure_ascii=False),
        "metadata": record["metadata"],
    }


def _turn(message: dict[str, Any]) -> tuple[str, str]:
    role = message["role"]
    if role == "tool":
        return "observation", message["content"]
    if role != "assistant":
        return "human", message["content"]
    thought = message.get("reasoning_content")
    prefix = f"<think>\n{thought}\n</think>\n\n" if thought else ""
    calls = message.get("tool_calls") or []
    if not calls:
        return "gpt", prefix + message["content"]
    shaped = [
        {"name": c["function"]["name"], "arguments": _arguments(c["function"]["arguments"])}
        for c in calls
    ]
    value = shaped[0] if len(shaped) == 1 else shaped
    return "function_call", prefix + json.dumps(value, ensure_ascii=False)


def _arguments(raw: str) -> dict[str, Any]:
    """The call's arguments as an object (LLaMA-Factory requires one). A model that wrote broken
    JSON got an error observation for it; its text is kept under `raw` so the turn stays faithful."""
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {"raw": raw}
    return value if isinstance(value, dict) else {"raw": raw}


def _append(turns: list[dict[str, str]], side: str, value: str) -> None:
    """Keep the odd/even alternation: a turn on the same side as the last one joins it."""
    if turns and (turns[-1]["from"] in USER) == (side in USER):
        if side in MODEL:  # two model turns in a row cannot be joined; keep the later one
            turns[-1] = {"from": side, "value": value}
        else:
            turns[-1]["value"] += "\n\n" + value
        return
    if not turns and side in MODEL:
        return  # a conversation opens with the human side
    turns.append({"from": side, "value": value})


def check_sharegpt(row: dict[str, Any]) -> None:
    """The schema plus the rules LLaMA-Factory's converter enforces (alternation, even count,
    function_call values that parse to calls of the listed tools)."""
    import jsonschema  # a dev dependency: tests and `--check` only

    jsonschema.validate(row, SHAREGPT_SCHEMA)
    names = {tool["name"] for tool in json.loads(row["tools"])}
    turns = row["conversations"]
    if len(turns) % 2:
        raise jsonschema.ValidationError("odd number of turns: the last one must be a model turn")
    for index, turn in enumerate(turns):
        if turn["from"] not in (USER if index % 2 == 0 else MODEL):
            raise jsonschema.ValidationError(f"turn {index} is {turn['from']!r} out of alternation")
        if turn["from"] == "function_call":
            _check_call(turn["value"], names)


def _check_call(value: str, names: set[str]) -> None:
    import jsonschema

    body = value.split("</think>", 1)[-1].strip()
    calls = json.loads(body)
    for call in calls if isinstance(calls, list) else [calls]:
        if call["name"] not in names or not isinstance(call["arguments"], dict):
            raise jsonschema.ValidationError(
                f"function_call is not a call of a listed tool: {call}"
            )


def card_section(data_file: str) -> list[str]:
    """The dataset card's lines for LLaMA-Factory: the `dataset_info.json` entry of the file."""
    entry = {
        "prchain": {
            "file_name": data_file,
            "formatting": "sharegpt",
            "columns": {"messages": "conversations", "system": "system", "tools": "tools"},
        }
    }
    return [
        "",
        "For LLaMA-Factory, add this entry to `data/dataset_info.json`:",
        "",
        "```json",
        json.dumps(entry, indent=2),
        "```",
    ]
