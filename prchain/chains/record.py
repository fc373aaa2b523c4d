"""A link's record: what the link rules read and wrote of one pair of PRs, typed.

`LinkEvidence` is the record a link carries through the build (`LinkDecision.attrs`, the edge
attributes of the chain graph); `chain_links` stores its fields as columns and its `evidence`
(`EvidenceRow`s, the references that decided it) as JSON, under the same keys. Both are
TypedDicts: the record is the stored JSON and the graph's edge attributes as they are, and mypy
refuses a key the record does not name. `EVIDENCE_FIELDS` is the closed set of its fields; the
rulebook's rules name the ones each reads (`prchain.chains.rulebook.Rule.fields`).
"""

from __future__ import annotations

from typing import Literal, TypedDict, get_args

# `class` is a keyword: the row is spelled as a call.
EvidenceRow = TypedDict(
    "EvidenceRow",
    {"type": str, "class": str, "found_in": str, "via_issue": int, "text": str},
)
"""One reference behind a link: its type, evidence class, where it was found, the issue it went
through (0: none) and its text (stored as is in `chain_links.evidence` and `chains.edges`)."""


class LinkEvidence(TypedDict, total=False):
    """The record of one candidate link. A key is absent where its rule phase never ran (no
    lineage is read for a pair settled before it, no symbols where they cannot change the
    decision: `symbols` absent is "not measured", stored as NULL)."""

    types: list[str]  # the reference types between the pair, sorted
    evidence_class: str  # the deciding reference's class (`prchain.chains.reading.cues`)
    cue: str  # the words that decided its class
    strength: int  # its weight (`evidence_weights`, less `flipped_penalty`; 0 for analogy)
    overlap: float  # file Jaccard of the two PRs, 4 places
    gap_days: float  # days from the older merge to the newer opening, 1 place
    weight: float  # `strength` + `overlap_weight` × `overlap`: the chain search's edge weight
    lineage: int  # lines of the older PR's code the newer one rewrites (`Lineage.lines`)
    lineage_via: str  # how they were found: "blame" or "patch" ('' for none)
    lineage_moved: int  # of them, only moved or carried
    lineage_touched: int  # lines of the older PR's it edits that hold no code
    lineage_restored: int  # lines the older PR removed that the newer one writes back
    lineage_tests: int  # lines of the older PR's tests it changes
    lineage_test_code: int  # of them, test code
    lineage_whole: bool  # it rewrites all the code the older PR wrote
    lineage_inserted: int  # places where it adds code inside the older PR's code
    symbols: int  # names the older PR introduced that the newer one's code uses
    symbol_names: list[str]  # those names (read into `why`, then dropped)
    vetted: str  # the link vetter's verdict on the pair
    rescued_from: str  # the rule whose drop the vetter or code evidence lifted
    why: str  # the decision in words
    evidence: list[EvidenceRow]  # the references that decided it, strongest first (at most 4)


EvidenceField = Literal[
    "types",
    "evidence_class",
    "cue",
    "strength",
    "overlap",
    "gap_days",
    "weight",
    "lineage",
    "lineage_via",
    "lineage_moved",
    "lineage_touched",
    "lineage_restored",
    "lineage_tests",
    "lineage_test_code",
    "lineage_whole",
    "lineage_inserted",
    "symbols",
    "symbol_names",
    "vetted",
    "rescued_from",
    "why",
    "evidence",
]
"""The fields of `LinkEvidence` (tests/chains/test_rulebook.py keeps the two equal)."""
EVIDENCE_FIELDS: tuple[EvidenceField, ...] = get_args(EvidenceField)
