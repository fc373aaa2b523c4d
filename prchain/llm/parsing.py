"""Pull JSON objects out of a model reply (bare, fenced, or wrapped in prose), and name the
markers that fence untrusted text in a prompt."""

from __future__ import annotations

import hashlib
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


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in `text`, in order (fenced or bare, nested ones not separately)."""
    decoder, found, at = json.JSONDecoder(), [], text.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        at = text.find("{", end)
    return found


def fence_token(*texts: str) -> str:
    """A marker suffix derived from the fenced texts themselves: a text cannot contain the marker
    that closes it, since the marker depends on the text (a fixed point of sha256)."""
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8", "surrogatepass")).hexdigest()
    return digest[:16].upper()
