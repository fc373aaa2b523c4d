"""The sharegpt conversion keeps LLaMA-Factory's rules on conversations the loop can produce."""

from __future__ import annotations

import json

import jsonschema
import pytest

from prchain.agent.formats.sharegpt import check_sharegpt, to_sharegpt
from prchain.agent.tools import TOOL_SCHEMAS


def _call(i: int, name: str, arguments: str) -> dict:
    return {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": arguments}}


def test_parallel_calls_broken_arguments_feedback_and_a_final_answer() -> None:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": "two at once",
            "tool_calls": [_call(1, "bash", '{"command": "ls"}'), _call(2, "bash", "{bad")],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "bash", "content": "calc"},
        {"role": "tool", "tool_call_id": "c2", "name": "bash", "content": "Error: not JSON"},
        {"role": "assistant", "content": "", "tool_calls": [_call(3, "submit", "{}")]},
        {"role": "tool", "tool_call_id": "c3", "name": "submit", "content": "submitted"},
        {"role": "user", "content": "judge feedback"},
        {"role": "assistant", "content": "Nothing more to change."},
    ]
    row = to_sharegpt({"messages": messages, "tools": TOOL_SCHEMAS, "metadata": {}})
    check_sharegpt(row)
    turns = row["conversations"]
    assert [t["from"] for t in turns] == [
        "human",
        "function_call",
        "observation",
        "function_call",
        "observation",
        "gpt",
    ]
    assert json.loads(turns[1]["value"]) == [
        {"name": "bash", "arguments": {"command": "ls"}},
        {"name": "bash", "arguments": {"raw": "{bad"}},
    ]
    assert turns[2]["value"] == "calc\n\nError: not JSON"
    assert turns[4]["value"] == "submitted\n\njudge feedback"
    assert row["system"] == "sys"


def test_the_check_rejects_what_llama_factory_would_skip() -> None:
    tools = json.dumps([s["function"] for s in TOOL_SCHEMAS])
    odd = {"conversations": [{"from": "human", "value": "a"}], "system": "", "tools": tools}
    swapped = {
        "conversations": [{"from": "gpt", "value": "a"}, {"from": "human", "value": "b"}],
        "system": "",
        "tools": tools,
    }
    unknown = {
        "conversations": [
            {"from": "human", "value": "a"},
            {"from": "function_call", "value": '{"name": "rm", "arguments": {}}'},
        ],
        "system": "",
        "tools": tools,
    }
    for row in (odd, swapped, unknown):
        with pytest.raises(jsonschema.ValidationError):
            check_sharegpt(row)
