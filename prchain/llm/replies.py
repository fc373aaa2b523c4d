"""An OpenAI-compatible chat response read into a Completion: reasoning split off, characters no
store can hold scrubbed, tokens priced. Reads the SDK's objects by attribute, so it needs no
import of `openai`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prchain.core.errors import LLMOutputInvalid
from prchain.core.text import storable
from prchain.llm.pricing import cost_usd
from prchain.llm.protocol import Completion
from prchain.llm.reasoning import split_reasoning

if TYPE_CHECKING:
    pass


def read_reply(response: Any, model: str, latency_ms: float, prices: Any) -> tuple[Completion, int]:
    """The first choice as a Completion, and how many characters were scrubbed from it."""
    if not response.choices:
        raise LLMOutputInvalid(f"{model}: the server returned no choices")
    choice = response.choices[0]
    usage = response.usage
    prompt, completion_tokens = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
    # NUL and lone surrogates would fail every later write of this reply (steps, cache).
    answer, reasoning = split_reasoning(choice.message)
    content, scrubbed = storable(answer)
    reasoning, scrubbed_in_reasoning = storable(reasoning)
    tool_calls, scrubbed_in_calls = storable(
        [_tool_call(call) for call in choice.message.tool_calls or []]
    )
    completion = Completion(
        content=content,
        reasoning=reasoning,
        tool_calls=tool_calls,
        model=model,
        prompt_tokens=prompt,
        completion_tokens=completion_tokens,
        latency_ms=latency_ms,
        cost_usd=cost_usd(prices, model, prompt, completion_tokens),
        finish_reason=choice.finish_reason,
    )
    return completion, scrubbed + scrubbed_in_calls + scrubbed_in_reasoning


def _tool_call(call: Any) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.function.name, "arguments": call.function.arguments or ""},
    }
