"""The OpenAI chat format: `messages` (assistant `tool_calls`, `tool` results), `tools`, `metadata`.

This is the record as built; HF chat templates (Qwen3, DeepSeek-R1, gpt-oss) and LLaMA-Factory's
`openai` formatting read it directly. Kept reasoning sits on assistant turns as `reasoning_content`,
the field reasoning servers return and those templates render.
"""

from __future__ import annotations

from typing import Any

from prchain.agent.export import validate_record


def to_openai(record: dict[str, Any]) -> dict[str, Any]:
    return record


def check_openai(row: dict[str, Any]) -> None:
    """Validate a row as loaded back (datasets fills absent struct fields with None)."""
    validate_record(_without_nulls(row))


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value
