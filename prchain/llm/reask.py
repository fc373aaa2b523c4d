"""Asking again after an unusable reply: whether a role's check refuses a reply, and the
correction message that tells the model what was wrong (firmer on each attempt)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from prchain.core.errors import LLMOutputInvalid
from prchain.llm.prompts import render
from prchain.llm.protocol import Completion

Check = Callable[[Completion], object]
"""Raises LLMOutputInvalid when a reply is unusable for its role; such replies are never replayed."""

PROMPTS = Path(__file__).with_name("prompts")


def refusal(check: Check | None, completion: Completion) -> str | None:
    """Why `check` refuses the reply, or None when there is no check or it passes."""
    if check is None:
        return None
    try:
        check(completion)
    except LLMOutputInvalid as exc:
        return str(exc)
    return None


def correction(error: Exception, completion: Completion, attempt: int, attempts: int) -> str:
    """What went wrong, said more firmly each time; an echo of the feedback is called out."""
    text = str(error)
    echoed = bool(completion.content) and (
        "could not be used" in completion.content or text[:60] in completion.content
    )
    return render(
        PROMPTS, "correction.j2", error=text, echoed=echoed, attempt=attempt, attempts=attempts
    )
