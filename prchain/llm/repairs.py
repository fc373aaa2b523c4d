"""Format-only defects that are repaired instead of rejected, and their record per role.

A parser that had to repair a reply returns `Repaired(value, kinds)`; the client (or the agent's
recorder) writes one `llm_repairs` row per repair, so `prchain stats` shows how often each role
needed help.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Literal, TypeVar, get_args

from sqlalchemy import Engine

from prchain.store.db import session_scope
from prchain.store.models import LLMRepair

T = TypeVar("T")

RepairKind = Literal[
    "markup_stripped",  # backticks or markdown emphasis taken out of prose (queries)
    "list_joined",  # a bulleted or numbered reply joined into one paragraph (queries, overviews)
    "extra_blocks_ignored",  # text actions: the first action block ran, the others were ignored
    "tool_call_in_text",  # tools mode: a call written as text was parsed as that call
    "extra_calls_dropped",  # calls written as text: the first ran, the others were dropped
    "verdict_word_normalized",  # a verdict word in other case or with punctuation ("Dependent.")
    "verdict_from_text",  # no JSON object, but a last line "Verdict: independent"
    "thin_normalized",  # the vetter's thin list named PRs by number, "older", or as one word
    "thin_missing",  # the vetter's reply had no thin list: neither PR taken as thin
]
REPAIR_KINDS: tuple[str, ...] = get_args(RepairKind)


@dataclass(frozen=True)
class Repaired(Generic[T]):
    """A parsed value that needed the named repairs."""

    value: T
    kinds: tuple[RepairKind, ...] = ()


def record_repairs(
    engine: Engine | None,
    role: str,
    kinds: tuple[RepairKind, ...] | list[RepairKind],
    *,
    rollout_id: int | None = None,
    detail: str | None = None,
) -> None:
    if engine is None or not kinds:
        return
    with session_scope(engine) as session:
        for kind in kinds:
            session.add(LLMRepair(role=role, kind=kind, rollout_id=rollout_id, detail=detail))
