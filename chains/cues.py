"""Read the words around a plain mention: does the newer PR build on the older one, or only resemble it?

The miner types a reference `mention` when no closing, revert or follow-up wording precedes it.
Many such mentions still say "introduced in #X", "regressed in #X", "while working on #X" (the
newer PR builds on or repairs the older) while others say "similar to #X", "same as #X but for…"
(parallel work that shares no code state). Only the evidence window the miner stored is read.
"""

from __future__ import annotations

import re

DEPENDENT = re.compile(
    r"\b(?:introduced|added|regressed|broken|broke|caused|landed|implemented|started|changed|missed)\s+(?:\w+\s+){0,3}?(?:in|by|with)\b"
    r"|\b(?:since|after|until|following|unblocked\s+by|requires?|needs|re-?apply|re-?lands?|addendum|follow[- ]on"
    r"|spun\s+(?:this\s+)?off|split\s+(?:out\s+)?(?:of|from)|on\s+top\s+of|first\s+(?:version|pr|step|part)"
    r"|prototype|improves|extends|generaliz\w*|discovered\s+(?:during|in|while)|while\s+(?:working\s+on|fixing|reviewing)"
    r"|reviewing|feedback|suggestion|discussion|discussed\s+in|my\s+mistake|regression|leftover|missed|oversight|revert"
    r"|setup\s+for|(?:in\s+)?prep(?:aration)?\s+for|needed\s+(?:\S+\s+){0,4}?for|prerequisite|precursor|pulled\s+out"
    r"|atop|in\s+light\s+of|unblocks?|blocks|blocked\s+by)\b"
    r"|\b\w+ed\s+(?:\S+\s+){0,5}?in\s+(?:#\d|https?://\S+/pull/\d)"
    r"|\bin\s+(?:#\d+|https?://\S+/pull/\d+\S*),?\s+(?:we|I)\b"
    r"|#\d+\s+(?:added|introduced|changed|made|moved|removed|no\s+longer|modeled|broke|caused)\b"
    r"|/pull/\d+#(?:discussion|issuecomment|pullrequestreview)",
    re.I,
)
PARALLEL = re.compile(
    r"\b(?:similar(?:\s+in\s+spirit)?\s+to|same\s+as|just\s+like|like\s+in|analog(?:ous)?|peer\s+to|inspired\s+by"
    r"|like\s+(?:#|https?://)|alternative\s+to|instead\s+of|counterpart|equivalent\s+of|mirrors?|see\s+also|related:?|unrelated"
    r"|also\s+(?:see|fixed)|sibling)\b",
    re.I,
)


def mention_cue(evidence: str) -> str:
    """'parallel', 'dependent' or 'none' for the evidence text of a plain mention (parallel wins)."""
    if PARALLEL.search(evidence):
        return "parallel"
    if DEPENDENT.search(evidence):
        return "dependent"
    return "none"
