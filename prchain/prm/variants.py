"""The eight SWE-PRM variants of the paper's Table 1, registered by short name.

A variant fixes three things: the prompt (template, feedback style, example or not), the output
fields the PRM must return (taxonomy findings and task status, a recommended action), and how its
verdict reaches the policy (guidance plus the PRM's reasoning, or guidance only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from prchain.core.registry import Registry

Style = Literal["simple", "concise", "detailed"]


@dataclass(frozen=True)
class Variant:
    name: str
    style: Style  # simple = no taxonomy, the model's own notion of suboptimal steps
    example: bool  # the prompt shows a worked example reply
    reasoning_to_policy: bool  # Table 1 "Guidance+Reasoning" (True) vs "Guidance-only" (False)
    recommend_action: bool  # DR: the PRM names the next tool call from the agent's own tool set
    description: str

    @property
    def uses_taxonomy(self) -> bool:
        return self.style != "simple"

    @property
    def template(self) -> str:
        return "simple.j2" if self.style == "simple" else "taxonomy.j2"


VARIANTS: Registry[Variant] = Registry("PRM variant")


def _add(variant: Variant) -> None:
    VARIANTS.register(variant.name)(variant)


# Table 1 of the paper. It marks the concise variants C and CG "with example" although its
# Listing 3 shows none; we follow the table, with a short example in the concise style.
for _variant in (
    Variant("S", "simple", False, True, False, "simple: no taxonomy; guidance and analysis"),
    Variant("C", "concise", True, True, False, "concise taxonomy; guidance and reasoning"),
    Variant("CG", "concise", True, False, False, "concise taxonomy; guidance only"),
    Variant(
        "D", "detailed", True, True, False, "detailed taxonomy with example; guidance and reasoning"
    ),
    Variant(
        "DN",
        "detailed",
        False,
        True,
        False,
        "detailed taxonomy, no example; guidance and reasoning",
    ),
    Variant("DG", "detailed", True, False, False, "detailed taxonomy with example; guidance only"),
    Variant("DNG", "detailed", False, False, False, "detailed taxonomy, no example; guidance only"),
    Variant(
        "DR",
        "detailed",
        True,
        True,
        True,
        "detailed taxonomy; guidance, reasoning and a next action",
    ),
):
    _add(_variant)


def get_variant(name: str) -> Variant:
    """The variant registered as `name` (case-insensitive); UnknownName lists the valid ones."""
    return VARIANTS.get(name.upper())
