"""Text the store can hold: PostgreSQL's text and JSON cannot carry NUL, and no UTF-8 column can
carry a lone surrogate (which `json.loads` happily makes from "\\ud800"). Both are replaced by
U+FFFD and counted, so a reply or a command output that holds them is kept instead of failing
every write (and every rerun) the same way."""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable_text(text: str) -> tuple[str, int]:
    """(`text` with every unstorable character replaced, how many were replaced)."""
    return _UNSTORABLE.subn(REPLACEMENT, text)


def storable(value: Any) -> tuple[Any, int]:
    """The same for a JSON-shaped value: every string in it, keys included."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        out, total = {}, 0
        for key, item in value.items():
            (clean_key, n), (clean_item, m) = storable(key), storable(item)
            out[clean_key] = clean_item
            total += n + m
        return out, total
    if isinstance(value, list | tuple):
        items = [storable(item) for item in value]
        return [item for item, _ in items], sum(n for _, n in items)
    return value, 0


def plural(n: int, one: str, many: str | None = None) -> str:
    """`1 chain`, `2 chains`: a count in a message agrees with its noun."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
