"""What real OpenAI-compatible servers refuse in a chat request, before any model runs, with the
status each server uses: a `null` content (llama.cpp's 500), an unknown role, a tool message that
answers no open call, calls left without their results, malformed tool calls or tool definitions,
a non-positive `max_tokens`. The scripted server's strict mode applies these."""

from __future__ import annotations

from typing import Any

ROLES = ("system", "developer", "user", "assistant", "tool")
# What llama.cpp's server (nlohmann::json) answers, with HTTP 500, for `"content": null`.
NULL_CONTENT = "[json.exception.type_error.302] type must be string, but is null"


def refuse(body: dict[str, Any]) -> tuple[int, str] | None:
    """(status, message) for a request a real server would refuse, or None when it is acceptable."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return 400, "'messages' must be a non-empty array"
    if (max_tokens := body.get("max_tokens")) is not None and (
        not isinstance(max_tokens, int) or max_tokens < 1
    ):
        return 400, f"'max_tokens' must be a positive integer, got {max_tokens!r}"
    if (problem := _tools_problem(body.get("tools"))) is not None:
        return 400, problem
    return _conversation_problem(messages)


def _conversation_problem(messages: list[Any]) -> tuple[int, str] | None:
    open_calls: set[str] = set()  # ids of the last assistant turn's calls not yet answered
    for n, message in enumerate(messages):
        where = f"messages[{n}]"
        if not isinstance(message, dict):
            return 400, f"{where} must be an object"
        role = message.get("role")
        if role not in ROLES:
            return 400, f"{where}: unknown role {role!r} (expected one of {', '.join(ROLES)})"
        if open_calls and role != "tool":
            return 400, (
                f"{where}: an assistant message with 'tool_calls' must be followed by tool "
                f"messages answering each call; unanswered: {', '.join(sorted(open_calls))}"
            )
        if (refusal := _content_problem(where, message)) is not None:
            return refusal
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if (problem := _calls_problem(where, calls)) is not None:
                return 400, problem
            open_calls = {call["id"] for call in calls}
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                return 400, (
                    f"{where}: a tool message must answer a call of the assistant message before "
                    f"it; no open call has tool_call_id {call_id!r}"
                )
            open_calls.discard(call_id)
    if open_calls:
        return (
            400,
            f"the conversation ends with unanswered tool calls: {', '.join(sorted(open_calls))}",
        )
    return None


def _content_problem(where: str, message: dict[str, Any]) -> tuple[int, str] | None:
    if "content" not in message:
        if message["role"] == "assistant" and message.get("tool_calls"):
            return None  # OpenAI's own shape: a turn of calls may omit the content
        return 400, f"{where}: 'content' is required for a {message['role']} message"
    content = message["content"]
    if content is None:
        return 500, NULL_CONTENT
    if isinstance(content, list):
        ok = all(isinstance(part, dict) and isinstance(part.get("text"), str) for part in content)
        return None if ok else (400, f"{where}: every content part needs a string 'text'")
    if not isinstance(content, str):
        return (
            500,
            f"[json.exception.type_error.302] type must be string, but is {type(content).__name__}",
        )
    return None


def _calls_problem(where: str, calls: Any) -> str | None:
    if not isinstance(calls, list):
        return f"{where}: 'tool_calls' must be an array"
    for n, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(
            call.get("id") if isinstance(call, dict) else None, str
        ) or not isinstance(function, dict):
            return f"{where}.tool_calls[{n}] needs a string 'id' and a 'function' object"
        if not isinstance(function.get("name"), str) or not isinstance(
            function.get("arguments"), str
        ):
            return f"{where}.tool_calls[{n}].function needs a string 'name' and string 'arguments'"
    return None


def _tools_problem(tools: Any) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, list):
        return "'tools' must be an array"
    for n, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if (
            tool.get("type") != "function"
            or not isinstance(function, dict)
            or not function.get("name")
        ):
            return f"tools[{n}] must be {{type: function, function: {{name, ...}}}}"
    return None
