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

    def as_message(self) -> Message:
        """The assistant message to append to a conversation."""
        message: Message = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


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
