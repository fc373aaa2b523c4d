"""Pull a JSON object out of a model reply (bare, fenced, or wrapped in prose)."""

from __future__ import annotations

import json
import re
from typing import Any

from prchain.core.errors import LLMOutputInvalid

_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in `text`; LLMOutputInvalid when there is none."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise LLMOutputInvalid(f"expected a JSON object in the reply, got: {text[:200]!r}")
