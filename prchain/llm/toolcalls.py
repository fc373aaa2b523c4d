"""Tool calls a model wrote as text, parsed as the call it meant.

Servers turn a model's tool-call markup into `tool_calls` only when started with the matching
parser (vLLM `--tool-call-parser hermes|llama3_json|…`, SGLang `--tool-call-parser qwen25|…`,
llama.cpp `--jinja`, Ollama per model template). With the wrong or no parser the call arrives as
text. The shapes recognised here are the ones those parsers read:

- Hermes / Qwen2.5: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`
- Llama 3.1 custom: `<function=name>{…}</function>`; Qwen3-Coder: `<function=name><parameter=k>v</parameter></function>`
- Llama 3.x JSON: `{"name": …, "parameters": {…}}`, optionally after `<|python_tag|>`
- the OpenAI shape itself: `{"type": "function", "function": {"name": …, "arguments": …}}`
- any of the JSON shapes in a fenced ```json block, or a list of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_FUNCTION_TAG = re.compile(r"<function=([\w.-]+)>\s*(.*?)\s*</function>", re.DOTALL)
_PARAMETER_TAG = re.compile(r"<parameter=([\w.-]+)>\s*(.*?)\s*</parameter>", re.DOTALL)
_FENCED = re.compile(r"```(?:json|tool_call|tool_code)?[ \t]*\n(.*?)```", re.DOTALL)
_PYTHON_TAG = "<|python_tag|>"
_LEFTOVER = re.compile(r"[\s{}\[\],]*")  # what may remain of a reply once its calls are out

Call = dict[str, Any]


def calls_from_text(text: str, names: Collection[str] | None) -> tuple[list[Call], str] | None:
    """(OpenAI-shaped calls without ids, the prose around them), or None when there is no call.

    Every call-shaped part is taken out of the prose (a second call never stays behind as the
    message's text), and prose that is only leftover brackets (a stray `}`) is no prose at all.
    `names=None` reads calls to any name (to tell the model which unknown tool it called).
    """
    text = text.replace(_PYTHON_TAG, "")
    for finder in (_tagged, _function_tags, _fenced, _bare_json):
        found = finder(text, names)
        if found is not None and found[0]:
            calls, prose = found
            return calls, _without_leftovers(prose)
    return None


def _without_leftovers(prose: str) -> str:
    """The prose without lines that are only brackets left over from a call (a stray `}`)."""
    lines = [
        line for line in prose.splitlines() if not (line.strip() and _LEFTOVER.fullmatch(line))
    ]
    return "\n".join(lines).strip()


def unknown_tool(text: str, names: Collection[str]) -> str | None:
    """The name a call written as text asks for when it is none of `names`."""
    found = calls_from_text(text, None)
    if found is None:
        return None
    return next(
        (c["function"]["name"] for c in found[0] if c["function"]["name"] not in names), None
    )


def echoed_tool(text: str, names: Collection[str]) -> str | None:
    """The tool whose own definition the reply repeats ({"name": "bash", "description": …})."""
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and _is_definition(value):
            name = _inner(value).get("name")
            if isinstance(name, str) and name in names:
                return name
    return None


def _tagged(text: str, names: Collection[str] | None) -> tuple[list[Call], str] | None:
    matches = list(_TOOL_CALL_TAG.finditer(text))
    calls = [call for m in matches for call in _json_calls(m.group(1), names)]
    return (calls, _without(text, matches)) if calls else None


def _function_tags(text: str, names: Collection[str] | None) -> tuple[list[Call], str] | None:
    matches = list(_FUNCTION_TAG.finditer(text))
    calls = []
    for match in matches:
        name, body = match.group(1), match.group(2)
        params = {k: _scalar(v) for k, v in _PARAMETER_TAG.findall(body)}
        args = params if params else _loads(body)
        if (names is None or name in names) and isinstance(args, dict):
            calls.append(_call(name, args))
    return (calls, _without(text, matches)) if calls else None


def _fenced(text: str, names: Collection[str] | None) -> tuple[list[Call], str] | None:
    for match in _FENCED.finditer(text):
        calls = _json_calls(match.group(1), names)
        if calls:
            return calls, _without(text, [match])
    return None


def _bare_json(text: str, names: Collection[str] | None) -> tuple[list[Call], str] | None:
    """Every JSON object (or list) in the prose that has a tool call's shape, taken out of it."""
    decoder = json.JSONDecoder()
    calls: list[Call] = []
    spans: list[tuple[int, int]] = []
    position = 0
    while position < len(text):
        start = next((i for i in range(position, len(text)) if text[i] in "{["), len(text))
        if start == len(text):
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        found = _shaped(value, names)
        if found:
            calls.extend(found)
            spans.append((start, end))
            position = end
        else:
            position = start + 1
    if not calls:
        return None
    for start, end in reversed(spans):
        text = text[:start] + text[end:]
    return calls, text.strip()


def _json_calls(body: str, names: Collection[str] | None) -> list[Call]:
    return _shaped(_loads(body), names)


def _shaped(value: Any, names: Collection[str] | None) -> list[Call]:
    items = value if isinstance(value, list) else [value]
    calls = [call for item in items if (call := _as_call(item, names)) is not None]
    return calls if len(calls) == len(items) else []


def _as_call(item: Any, names: Collection[str] | None) -> Call | None:
    if not isinstance(item, dict) or _is_definition(item):
        return None
    if item.get("type") == "function" and isinstance(item.get("function"), dict):
        item = item["function"]
    name = item.get("name")
    args = item.get("arguments", item.get("parameters", {}))
    if isinstance(args, str):
        args = _loads(args) if args.strip() else {}
    if not isinstance(name, str) or (names is not None and name not in names):
        return None
    if not isinstance(args, dict):
        return None
    return _call(name, args)


def _is_definition(item: dict[str, Any]) -> bool:
    """A tool's definition, not a call: it has a description, or its "parameters" is a JSON
    schema (a model echoing the tool list back writes these)."""
    inner = _inner(item)
    if "description" in inner:
        return True
    parameters = inner.get("parameters")
    return isinstance(parameters, dict) and (
        parameters.get("type") == "object" and "properties" in parameters
    )


def _inner(item: dict[str, Any]) -> dict[str, Any]:
    """The function part of an OpenAI-shaped item, or the item itself."""
    function = item.get("function")
    return function if isinstance(function, dict) else item


def _call(name: str, args: dict[str, Any]) -> Call:
    return {"type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _loads(text: str) -> Any:
    """JSON, also with stray closing brackets after it (`{…}}`, a small model's habit)."""
    text = text.strip()
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError:
        return None
    return value if _LEFTOVER.fullmatch(text[end:]) else None


def _scalar(text: str) -> Any:
    """A Qwen3-Coder parameter value: JSON when it parses (numbers, lists), else the raw string."""
    value = _loads(text)
    return text if value is None else value


def _without(text: str, matches: list[re.Match[str]]) -> str:
    for match in reversed(matches):
        text = text[: match.start()] + text[match.end() :]
    return text.strip()
