"""Reasoning kept apart from the answer, whichever way the server hands it over.

Servers with a reasoning parser return it in a field of the message: `reasoning_content` (SGLang,
llama.cpp's server, older vLLM, DeepSeek's API) or `reasoning` (newer vLLM, Ollama's OpenAI
endpoint). Without a parser the model's `<think>…</think>` block stays inside `content`; it is cut
out here so no parser (query, judge, action) ever reads it.
"""

from __future__ import annotations

import re
from typing import Any

REASONING_FIELDS = ("reasoning_content", "reasoning")
# DeepSeek-R1 style templates open the block in the prompt, so a reply may hold only `…</think>`.
_THINK_OPEN_IN_PROMPT = re.compile(r"^(.*?)</think>\s*", re.DOTALL)
_THINK_INLINE = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_THINK_UNCLOSED = re.compile(r"<think>(.*)\Z", re.DOTALL)


def field_reasoning(message: Any) -> str:
    """The reasoning a server put beside the content (SDK objects keep unknown fields as extras)."""
    for name in REASONING_FIELDS:
        value = getattr(message, name, None)
        if value is None:
            value = (getattr(message, "model_extra", None) or {}).get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def split_think(content: str) -> tuple[str, str]:
    """(content without think blocks, the blocks' text)."""
    thoughts: list[str] = []
    if "</think>" in content and "<think>" not in content.split("</think>", 1)[0]:
        match = _THINK_OPEN_IN_PROMPT.match(content)
        assert match is not None
        thoughts.append(match.group(1).strip())
        content = content[match.end() :]
    for match in _THINK_INLINE.finditer(content):
        thoughts.append(match.group(1).strip())
    content = _THINK_INLINE.sub("", content)
    if (match := _THINK_UNCLOSED.search(content)) is not None:  # cut off by max_tokens
        thoughts.append(match.group(1).strip())
        content = content[: match.start()]
    return content.strip(), "\n\n".join(t for t in thoughts if t)


def split_reasoning(message: Any) -> tuple[str, str]:
    """(the answer, the reasoning) of one reply message."""
    content, thought = split_think(getattr(message, "content", None) or "")
    reasoning = "\n\n".join(part for part in (field_reasoning(message), thought) if part)
    return content, reasoning
