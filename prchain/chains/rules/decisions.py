"""One candidate link and what the link rules made of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prchain.chains.record import LinkEvidence
    from prchain.chains.rulebook import RuleName


@dataclass
class LinkDecision:
    """One candidate link and what the link rules made of it (rule None: kept as an edge)."""

    newer: int
    older: int
    repo_id: int
    rule: RuleName | None
    attrs: LinkEvidence
