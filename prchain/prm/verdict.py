"""The PRM's reply parsed into a typed verdict; anything else is PRMOutputInvalid."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from prchain.core.errors import LLMOutputInvalid, PRMOutputInvalid
from prchain.llm.parsing import extract_json_object
from prchain.prm.taxonomy import Taxonomy
from prchain.prm.variants import Variant


class TaskStatus(StrEnum):
    ON_TRACK = "on_track"
    NEEDS_CORRECTION = "needs_correction"
    CRITICAL = "critical"


@dataclass(frozen=True)
class Finding:
    """One taxonomy category as the PRM judged it for this window."""

    category: str
    detected: bool
    evidence: str = ""
    recovery_action: str = ""


@dataclass(frozen=True)
class RecommendedAction:
    """DR only: the next call the PRM suggests, always one of the agent's own tools."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        args = ", ".join(f"{k}={json.dumps(v)}" for k, v in self.arguments.items())
        return f"{self.tool}({args})"


@dataclass(frozen=True)
class Verdict:
    guidance: str
    findings: tuple[Finding, ...] = ()  # all twelve categories for taxonomy variants, none for S
    task_status: TaskStatus | None = None  # S does not judge the window, so it has none
    analysis: str = ""  # S only: its free-form reasoning about the window
    recommended_action: RecommendedAction | None = None

    @property
    def detected(self) -> list[Finding]:
        return [f for f in self.findings if f.detected]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["task_status"] = self.task_status.value if self.task_status else None
        return data


_STATUS_WORDS = {
    "on_track": TaskStatus.ON_TRACK,
    "needs_correction": TaskStatus.NEEDS_CORRECTION,
    "critical": TaskStatus.CRITICAL,
    "critical_intervention_required": TaskStatus.CRITICAL,
}
_YES = {"yes", "true", "y", "1", "detected"}
_NO = {"no", "false", "n", "0", "", "not_detected", "none"}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _status(raw: Any) -> TaskStatus:
    status = _STATUS_WORDS.get(_slug(str(raw)))
    if status is None:
        raise PRMOutputInvalid(
            f"task_status must be on_track, needs_correction or critical, got {raw!r}"
        )
    return status


def _flag(raw: Any, category: str) -> bool:
    if isinstance(raw, bool):
        return raw
    word = _slug(str(raw))
    if word in _YES or word in _NO:
        return word in _YES
    raise PRMOutputInvalid(f"errors.{category}.detected must be yes/no, got {raw!r}")


def _category_lookup(taxonomy: Taxonomy) -> dict[str, str]:
    """Keys and display names (singular or plural) → category key; models echo either."""
    lookup: dict[str, str] = {}
    for c in taxonomy.categories:
        for alias in (c.key, _slug(c.name)):
            lookup[alias] = c.key
            lookup[alias + "s"] = c.key
    return lookup


def _raw_findings(raw: Any) -> dict[str, Any]:
    if isinstance(raw, list):  # [{"category": ..., "detected": ...}, ...] is accepted too
        return {str(item.get("category", "")): item for item in raw if isinstance(item, dict)}
    if isinstance(raw, dict):
        return raw
    raise PRMOutputInvalid(
        "`errors` must map each taxonomy category to {detected, evidence, recovery_action}"
    )


def _findings(raw: Any, taxonomy: Taxonomy) -> tuple[Finding, ...]:
    lookup, seen = _category_lookup(taxonomy), {}
    for name, item in _raw_findings(raw).items():
        key = lookup.get(_slug(name))
        if key is None:
            continue  # a category the taxonomy does not have carries no signal we can use
        item = item if isinstance(item, dict) else {"detected": item}
        seen[key] = Finding(
            category=key,
            detected=_flag(item.get("detected", False), key),
            evidence=str(item.get("evidence") or ""),
            recovery_action=str(item.get("recovery_action") or item.get("recovery") or ""),
        )
    # A category the PRM left out was not flagged: treat it as "not detected".
    return tuple(
        seen.get(key, Finding(category=key, detected=False)) for key in taxonomy.category_keys()
    )


def _text(data: dict[str, Any], key: str, *, required: bool) -> str:
    value = data.get(key)
    if value is None:
        if required:
            raise PRMOutputInvalid(f"the reply lacks the field {key!r}")
        return ""
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value).strip()


def _action(raw: Any, tool_names: list[str]) -> RecommendedAction:
    if not isinstance(raw, dict) or not isinstance(raw.get("tool"), str):
        raise PRMOutputInvalid('recommended_action must be {"tool": <name>, "arguments": {...}}')
    if tool_names and raw["tool"] not in tool_names:
        raise PRMOutputInvalid(
            f"recommended tool {raw['tool']!r} is not one of the agent's tools: {tool_names}"
        )
    arguments = raw.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise PRMOutputInvalid("recommended_action.arguments must be an object")
    return RecommendedAction(tool=raw["tool"], arguments=arguments)


def parse_verdict(
    text: str, variant: Variant, taxonomy: Taxonomy, tool_names: list[str]
) -> Verdict:
    """The verdict in `text` with the fields `variant` asks for; PRMOutputInvalid says what is wrong."""
    try:
        data = extract_json_object(text)
    except LLMOutputInvalid as exc:
        raise PRMOutputInvalid(str(exc)) from None
    if not variant.uses_taxonomy:
        return Verdict(
            guidance=_text(data, "guidance", required=True),
            analysis=_text(data, "analysis", required=False),
        )
    if "task_status" not in data:
        raise PRMOutputInvalid("the reply lacks the field 'task_status'")
    return Verdict(
        guidance=_text(data, "guidance", required=True),
        findings=_findings(data.get("errors", {}), taxonomy),
        task_status=_status(data["task_status"]),
        recommended_action=_action(data.get("recommended_action"), tool_names)
        if variant.recommend_action
        else None,
    )
