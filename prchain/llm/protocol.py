"""The seam every LLM role talks through; tests swap the server, never this interface."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

Message = dict[str, Any]  # an OpenAI chat message: {"role": ..., "content": ..., "tool_calls": ...}


@dataclass(frozen=True)
class Completion:
    """One model reply with what it cost."""

    content: str  # the answer, with any <think> block taken out
    tool_calls: list[dict[str, Any]] = field(
        default_factory=list
    )  # OpenAI shape: {id, type, function{name, arguments}}
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    cost_usd: float = 0.0
    cached: bool = False
    finish_reason: str | None = None
    reasoning: str = ""  # reasoning_content / reasoning field, or the <think> block
    # Where the reply is kept (cache entry, llm_calls row), so a later check can refuse it.
    cache_key: str = field(default="", compare=False)
    call_id: int | None = field(default=None, compare=False)

    def as_message(self) -> Message:
        """The assistant message to append to a conversation."""
        # A string even beside tool calls: llama.cpp's server answers `null` with HTTP 500.
        message: Message = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


def sendable(messages: list[Message]) -> list[Message]:
    """The conversation as every common server accepts it: `content` is never `null` (OpenAI allows
    it beside tool calls, llama.cpp's server answers it with HTTP 500), so it becomes ""."""
    return [
        {**message, "content": ""} if message.get("content", "") is None else message
        for message in messages
    ]


class ChatLLM(Protocol):
    """Anything that answers chat requests for a named role (query_constructor, policy, judge, prm, ...)."""

    def complete(
        self,
        role: str,
        messages: list[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        rollout_id: int | None = None,
        sample: int = 0,
        attempt: int = 0,
        check: Callable[[Completion], object] | None = None,
    ) -> Completion:
        """The reply; `check` raises LLMOutputInvalid for a reply the role cannot use, which is
        then returned all the same but never replayed from a cache."""
        ...
