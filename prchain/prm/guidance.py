"""How a verdict enters the agent's context: one clearly marked user message, or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prchain.llm.prompts import render
from prchain.llm.protocol import Message
from prchain.prm.taxonomy import Taxonomy
from prchain.prm.variants import Variant
from prchain.prm.verdict import TaskStatus, Verdict

PROMPTS = Path(__file__).with_name("prompts")
# Every injected message starts with this, so exporters and readers can tell supervisor text from the user's.
PRM_MARKER = "[Supervisor guidance]"


def is_prm_message(message: dict[str, Any]) -> bool:
    """True for a message the PRM injected (export drops these unless prm.keep_in_export)."""
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, str)
        and content.startswith(PRM_MARKER)
    )


def has_something_to_say(verdict: Verdict, inject_when_on_track: bool) -> bool:
    """A clean window (on track, nothing detected) stays silent unless configured otherwise.

    The paper's PRM interjects to course-correct; a window it judges optimal needs no correction, and
    each injected message costs the policy context, so by default we skip it.
    """
    clean = verdict.task_status in (None, TaskStatus.ON_TRACK) and not verdict.detected
    if clean and verdict.task_status is TaskStatus.ON_TRACK and not inject_when_on_track:
        return False
    return bool(verdict.guidance or verdict.detected or verdict.recommended_action)


def guidance_text(variant: Variant, verdict: Verdict, taxonomy: Taxonomy, window: int) -> str:
    """The text the policy reads: guidance only (the G variants) or guidance with the PRM's reasoning."""
    return render(
        PROMPTS,
        "guidance.j2",
        marker=PRM_MARKER,
        window=window,
        verdict=verdict,
        reasoning=variant.reasoning_to_policy,
        detected=verdict.detected,
        names={c.key: c.name for c in taxonomy.categories},
    ).strip()


def guidance_messages(
    variant: Variant,
    verdict: Verdict,
    taxonomy: Taxonomy,
    window: int,
    *,
    inject_when_on_track: bool,
) -> list[Message]:
    if not has_something_to_say(verdict, inject_when_on_track):
        return []
    return [{"role": "user", "content": guidance_text(variant, verdict, taxonomy, window)}]
