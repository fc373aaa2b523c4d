"""The JSON the scripted server answers with, shaped as OpenAI-compatible servers shape it: chat
completions (tool calls with ids, token counts) and error bodies."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any


def estimate_tokens(text: str) -> int:
    """About four characters per token, like English text under common tokenizers."""
    return max(1, (len(text) + 3) // 4)


def openai_tool_calls(calls: list[dict[str, Any]], ids: Iterator[int]) -> list[dict[str, Any]]:
    """Accept {name, arguments(dict|str)} or the full OpenAI shape; return the OpenAI shape."""
    shaped = []
    for call in calls:
        function = call.get("function", call)
        arguments = function.get("arguments", {})
        shaped.append(
            {
                "id": call.get("id") or f"call_{next(ids)}",
                "type": "function",
                "function": {
                    "name": function["name"],
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    return shaped


def completion_body(
    body: dict[str, Any],
    content: str | None,
    calls: list[dict[str, Any]] | None,
    extra: dict[str, str] | None,
    ids: Iterator[int],
) -> dict[str, Any]:
    """A chat.completion body with token counts estimated from the text, as servers count them."""
    tool_calls = openai_tool_calls(calls, ids) if calls else None
    message: dict[str, Any] = {"role": "assistant", "content": content, **(extra or {})}
    if tool_calls:
        message["tool_calls"] = tool_calls
    prompt_text = json.dumps(body.get("messages", [])) + json.dumps(body.get("tools") or [])
    completion_tokens = estimate_tokens(
        (content or "")
        + "".join((extra or {}).values())
        + (json.dumps(tool_calls) if tool_calls else "")
    )
    prompt_tokens = estimate_tokens(prompt_text)
    return {
        "id": f"chatcmpl-fake-{next(ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error_reply(status: int, message: str, kind: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    """(status, OpenAI-shaped error body, no extra headers)."""
    return status, {"error": {"message": message, "type": kind, "param": None, "code": None}}, {}
