"""The link rules: every decision about one pair of PRs a reference links (`assess_edge`).

The pair's references are weighed by evidence class (`prchain.chains.reading.cues`) and the strongest decides; the
rules on file overlap, the gap between the PRs and wording without code then apply, and code
evidence (line lineage, symbol use, rewritten tests) backs a link over them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.kept import KeptEvidence
from prchain.chains.evidence.lines import Lineage, LineOracle
from prchain.chains.evidence.nodes import PRNode, RefRow
from prchain.chains.evidence.symbols import SymbolOracle, Symbols
from prchain.chains.reading.cues import (
    EVIDENCE_CLASSES,
    SPLIT_OFF,
    EvidenceClass,
    classify,
    prepares,
    regression_wording,
    stacked_wording,
)
from prchain.chains.record import EvidenceRow, LinkEvidence
from prchain.chains.rulebook import LINEAGE_CAN_RESCUE, SYMBOLS_CAN_RESCUE, RuleName

MAX_EVIDENCE = 4
# Texts written while a PR was open: a mention there of a PR merged later is a forward-looking link.
AUTHORED_BEFORE_MERGE = frozenset({"title", "body", "commit", "branch"})
# Tie-break between references of equal weight: the more specific class decides the edge.
EVIDENCE_ORDER = ("revert", "strong", "medium", "code", "issue_only", "parallel")
assert set(EVIDENCE_ORDER) == set(EVIDENCE_CLASSES)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def evidence_rows(refs: list[tuple[RefRow, str]]) -> list[EvidenceRow]:
    return [
        {
            "type": ref.type,
            "class": cls,
            "found_in": ref.found_in,
            "via_issue": ref.via_issue,
            "text": ref.evidence,
        }
        for ref, cls in refs[:MAX_EVIDENCE]
    ]


# Lines written back that count as code evidence: one common line comes back by chance (clippy
# #8313 restored one line #8280 had removed, and built on nothing of it).
MIN_RESTORED = 3


def _restored(lineage: Lineage) -> int:
    """The written-back lines that count as code evidence (0 under `MIN_RESTORED`)."""
    return lineage.restored if lineage.restored >= MIN_RESTORED else 0


@dataclass
class Judged:
    """One reference with its evidence class, weight and the words that decided the class."""

    ref: RefRow
    cls: EvidenceClass
    cue: str
    strength: int


def judge_reference(ref: RefRow, newer: PRNode, config: ChainsConfig) -> Judged:
    cls, cue = classify(ref.type, ref.evidence, ref.number)
    strength = config.evidence_weights.get(cls, 0)
    if cls == "revert" and not config.revert_links:
        strength = 0
    # Written by the older PR while it was open, about the newer one: a vaguer, forward link.
    if strength and ref.src != newer.id and ref.found_in in AUTHORED_BEFORE_MERGE:
        strength = max(strength - config.flipped_penalty, 1)
    return Judged(ref, cls, cue, strength)


def _best(judged: list[Judged]) -> Judged:
    """The reference that decides the edge: strongest first; analogy wording vetoes a weaker one."""
    ranked = sorted(
        judged, key=lambda j: (-j.strength, EVIDENCE_ORDER.index(j.cls), j.ref.found_in)
    )
    top = ranked[0]
    if top.cls not in ("strong", "revert"):
        parallel = [j for j in ranked if j.cls == "parallel"]
        if parallel:
            return parallel[0]
    return top


def _describe(best: Judged, writer: int) -> str:
    text = best.ref.evidence if len(best.ref.evidence) <= 90 else best.ref.evidence[:87] + "..."
    return f"{best.cls}: {best.cue} ({best.ref.type} in the {best.ref.found_in} of #{writer}: '{text}')"


class Undone(NamedTuple):
    """When a PR was reverted, and by which PR (None: a revert pushed without one)."""

    at: datetime
    by: PRNode | None = None


def _reverted_before(undone: Undone | None, newer: PRNode) -> bool:
    """Whether the older PR was reverted before the newer one merged: the newer PR's base (the
    main branch at its merge) no longer holds the older change, whenever the newer PR was opened
    (tokio #4373, opened before #4377 merged, merged after #4394 reverted #4377; it builds on
    the re-land #4395). A re-submission keeps its commits' old dates (serde #316, "Re-opening of
    #302 after bust merge", dated before the revert #314 it was branched after)."""
    return undone is not None and undone.at < newer.merged_at


def assess_edge(
    refs: list[RefRow],
    newer: PRNode,
    older: PRNode,
    config: ChainsConfig,
    lines: LineOracle | None = None,
    reverted_at: dict[int, Undone] | None = None,
    symbols: SymbolOracle | None = None,
) -> tuple[RuleName | None, LinkEvidence]:
    """(drop rule or None, edge attributes with `why`): every decision about one pair of PRs."""
    judged = [judge_reference(r, newer, config) for r in refs]
    best = _best(judged)
    if best.cls != "revert" and _reverted_before((reverted_at or {}).get(older.id), newer):
        # The older change was reverted before the newer PR merged: its base does not hold it
        # (a re-land builds on the revert, not on the original).
        return "older_reverted_before", _settled_attrs(judged, best, newer, older)
    if best.cls != "revert" and lines is not None and lines.repeats(newer, older):
        return "repeats_older", _settled_attrs(judged, best, newer, older, REPEATS)
    overlap = round(jaccard(newer.files, older.files), 4)
    gap = (newer.opened - older.merged_at).total_seconds() / 86400
    lineage = Lineage()
    attrs: LinkEvidence = {
        "types": sorted({r.type for r in refs}),
        "evidence_class": best.cls,
        "cue": best.cue,
        "strength": 0 if best.cls == "parallel" else best.strength,
        "overlap": overlap,
        "gap_days": round(gap, 1),
        "lineage": lineage.lines,
        "lineage_via": lineage.via,
    }
    attrs["weight"] = attrs["strength"] + config.overlap_weight * overlap
    writer = newer.number if best.ref.src == newer.id else older.number
    why = _describe(best, writer)
    rule = _link_rule(best, attrs, newer, older, config)
    # git blame runs only where lineage could change the decision; elsewhere the patches tell
    # (cheaply) whether the newer PR rewrites the older one's lines, for the record.
    if lines is not None:
        lineage = lines.lineage(newer, older, blame=_needs_blame(rule, lines, newer, older))
        attrs["lineage"], attrs["lineage_via"] = lineage.lines, lineage.via
        attrs["lineage_moved"], attrs["lineage_touched"] = lineage.moved, lineage.touched
        attrs["lineage_restored"], attrs["lineage_tests"] = lineage.restored, lineage.tests
        attrs["lineage_test_code"] = lineage.test_code
        attrs["lineage_whole"], attrs["lineage_inserted"] = lineage.whole, lineage.inserted
        if rule in LINEAGE_CAN_RESCUE:
            rule = _link_rule(best, attrs, newer, older, config)
    rule = _with_symbols(rule, best, attrs, newer, older, config, symbols)
    if best.cls == "issue_only" and rule is None and config.corroborate_issue_only:
        backing = _corroboration(
            lineage,
            lineage_backs(lineage, gap, config),
            symbols_back(attrs, config),
            tests_back(lineage, gap, config),
        )
        why += f"; corroborated by {backing}"
    if lineage.lines:
        why += f"; the newer PR changes {lineage.lines} line(s) the older one added ({lineage.via})"
        if lineage.moved:
            why += f", {lineage.moved} of them only moved or carried"
        if lineage.whole:
            why += ", all the code the older PR wrote"
    if lineage.inserted:
        why += (
            f"; the newer PR adds code inside {lineage.inserted} place(s) of the older one's code"
        )
    if lineage.tests:
        why += f"; it changes {lineage.tests} line(s) of the older PR's tests"
        if lineage.test_code != lineage.tests:
            why += f" ({lineage.test_code} of them test code)"
    if attrs.get("symbols"):
        why += f"; the newer PR's code uses {attrs['symbols']} name(s) the older one introduced"
        if attrs.get("symbol_names"):
            why += f" ({', '.join(attrs.pop('symbol_names')[:5])})"
    if lineage.restored:
        why += f"; the newer PR writes back {lineage.restored} line(s) the older one removed"
    if not lineage.lines and lineage.touched:
        why += (
            f"; the newer PR edits {lineage.touched} line(s) the older one added that hold no"
            " code (imports, comments, generated files)"
        )
    attrs["why"] = f"{why}; file overlap {overlap:.2f}; opened {gap:.0f} days after the older merge"
    ranked = sorted(judged, key=lambda j: -j.strength)
    attrs["evidence"] = evidence_rows([(j.ref, j.cls) for j in ranked])
    return rule, attrs


def _with_symbols(
    rule: RuleName | None,
    best: Judged,
    attrs: LinkEvidence,
    newer: PRNode,
    older: PRNode,
    config: ChainsConfig,
    symbols: SymbolOracle | None,
) -> RuleName | None:
    """The decision once symbol use is known; it is measured only where it may rescue the link
    (one git grep per older PR, cached)."""
    # A code link's names are always measured: its stage rules weigh them (`code_contact`).
    if symbols is None or (rule not in SYMBOLS_CAN_RESCUE and best.cls != "code"):
        return rule
    attrs["symbols"] = symbols.used(newer, older)
    if not attrs["symbols"]:
        return rule
    if isinstance(symbols, Symbols | KeptEvidence):
        attrs["symbol_names"] = symbols.shared(newer, older)
    return _link_rule(best, attrs, newer, older, config)


def symbols_back(attrs: LinkEvidence, config: ChainsConfig) -> bool:
    """Whether the newer PR's use of names the older one introduced backs the link on its own:
    `min_symbols` names per `max_gap_days` between the PRs (at least one period), as for line
    lineage: a function added two years ago is everybody's by now."""
    if config.min_symbols <= 0 or not attrs.get("symbols", 0):
        return False
    periods = max(1.0, attrs["gap_days"] / config.max_gap_days)
    return attrs["symbols"] >= math.ceil(config.min_symbols * periods)


def _needs_blame(rule: str | None, lines: LineOracle, newer: PRNode, older: PRNode) -> bool:
    """Whether git blame may change this pair's decision. Strong wording needs only some code
    evidence, so where the patches already show a rewritten line, blame is not asked; parallel
    wording yields only to many rewritten lines, so blame runs only where the patches show some."""
    if rule == "wording_without_shared_code":
        return not lines.lineage(newer, older, blame=False).lines
    if rule == "parallel_wording":
        return lines.lineage(newer, older, blame=False).lines > 0
    return rule in LINEAGE_CAN_RESCUE


REVERTED = "the older PR was reverted before the newer one merged"
REPEATS = "the newer PR makes the older one's change again (a re-submission or re-application)"


def _settled_attrs(
    judged: list[Judged], best: Judged, newer: PRNode, older: PRNode, reason: str = REVERTED
) -> LinkEvidence:
    """The record of a link settled before its lineage is read: the older PR was reverted, or the
    newer one makes its change again (`reason`)."""
    gap = (newer.opened - older.merged_at).total_seconds() / 86400
    writer = newer.number if best.ref.src == newer.id else older.number
    return {
        "types": sorted({j.ref.type for j in judged}),
        "evidence_class": best.cls,
        "cue": best.cue,
        "strength": best.strength,
        "overlap": round(jaccard(newer.files, older.files), 4),
        "gap_days": round(gap, 1),
        "lineage": 0,
        "lineage_via": "",
        "why": f"{_describe(best, writer)}; {reason}",
        "evidence": evidence_rows([(j.ref, j.cls) for j in judged]),
    }


def _link_rule(
    best: Judged, attrs: LinkEvidence, newer: PRNode, older: PRNode, config: ChainsConfig
) -> RuleName | None:
    """The first link rule this pair fails, or None when it is an edge.

    Line lineage (the newer PR rewrites lines the older one added) is the strongest evidence there
    is: it backs a plain mention or an issue-only link, and the overlap and gap rules, which only
    guess at shared code, apply where it is absent."""
    if best.cls == "parallel":
        return None if _lineage_beats_parallel(attrs, config) else "parallel_wording"
    if best.cls == "revert" and not config.revert_links:
        return "revert_links_off"
    if attrs["strength"] <= 0:
        return "zero_weight"
    lineage = lineage_of(attrs)
    backed = (
        lineage_backs(lineage, attrs["gap_days"], config)
        or symbols_back(attrs, config)
        or tests_back(lineage, attrs["gap_days"], config)
    )
    said_by_newer = best.ref.src == newer.id
    needs_backing = best.cls == "issue_only" and config.corroborate_issue_only
    if needs_backing and not backed:
        return "issue_only_uncorroborated"
    if best.cls == "code" and not code_backed(
        lineage, attrs["gap_days"], config, attrs.get("symbols", 0)
    ):
        return "code_link_unbacked"
    if best.cls == "medium" and config.medium_needs_lines:
        if not backed:
            return "plain_mention_without_shared_lines"
        if not lineage.whole and mention_contact(lineage, attrs) < config.plain_mention_min_contact:
            return "plain_mention_little_contact"
    if backed or _regression_fix(best, attrs, config, said_by_newer):
        return None
    if attrs["overlap"] < config.min_overlap_by_strength.get(attrs["strength"], 0.0):
        return "too_little_file_overlap"
    if attrs["gap_days"] > config.max_gap_days and not _strong_with_code(
        best, attrs, lineage, config, said_by_newer
    ):
        return "gap_too_long"
    if _wording_only(best, attrs, lineage, config, said_by_newer):
        return "wording_without_shared_code"
    return None


def _strong_with_code(
    best: Judged, attrs: LinkEvidence, lineage: Lineage, config: ChainsConfig, said_by_newer: bool
) -> bool:
    """Whether the newer PR's own strong wording and some code evidence (a rewritten line, a used
    name) hold the link over the gap, up to `strong_code_max_gap_days`: either alone is too little
    after months, together they tell a follow-up (wasm-tools #2466, "a follow-up to #2306, which
    added support for tag imports", iterates #2306's `tag_imports` 186 days on)."""
    if best.cls != "strong" or not said_by_newer:
        return False
    if attrs["gap_days"] > config.strong_code_max_gap_days:
        return False
    return lineage.weight >= 1 or attrs.get("symbols", 0) > 0


def _lineage_beats_parallel(attrs: LinkEvidence, config: ChainsConfig) -> bool:
    """Analogy or list wording ("see also #N") loses to many rewritten lines: a PR rewriting
    dozens of the older one's lines builds on it whatever its description lists it under."""
    need = config.parallel_lineage_lines
    return need > 0 and attrs["lineage"] - attrs.get("lineage_moved", 0) / 2 >= need


def _regression_fix(
    best: Judged, attrs: LinkEvidence, config: ChainsConfig, said_by_newer: bool
) -> bool:
    """A fix of a regression the older PR caused ("in #N I broke X", "regressed in #N"). Soon
    after it, the fix may touch another file, yet it repairs the older PR's behaviour. Later, it
    must share a file with the older PR: a regression stays in the code until someone notices
    (pydantic #3201, "Small regression in #2231", 232 days on), so the gap rule does not apply.
    Only the newer PR can fix what the older one broke: the same words in the PR merged first
    name a bug of a branch still open (xarray #10741, "Fixes regression from #10726")."""
    strong = best.cls == "strong" and said_by_newer
    words = regression_wording(best.ref.evidence, best.ref.number) if strong else ""
    if not words:
        return False
    gap = attrs["gap_days"]
    if gap <= config.regression_gap_days:
        return True
    # Months on, "introduced in #N" tells a feature's history as often as a bug's (ruff #10891:
    # "the control-flow graph which was first introduced in #5384 and removed in #9463").
    late = not words.lower().startswith("introduced")
    return late and attrs["overlap"] > 0 and gap <= config.regression_max_gap_days


def lineage_backs(lineage: Lineage, gap_days: float, config: ChainsConfig) -> bool:
    """Whether line lineage is enough to back a link on its own (over the gap, overlap and
    issue-only rules): `lineage_lines_per_gap` per `max_gap_days` between the PRs (at least one
    period), a moved line counting half, and never more than `lineage_max_lines`: the reference
    already says the two PRs are related, and two rewritten lines of the older PR's code confirm
    it at any age, while a single line is as often a shared hot spot. Rewriting all the code the
    older PR wrote backs it within `whole_change_max_gap_days`, however few lines that is (rust-analyzer
    #17813 rewrote #15864's one-line fix 270 days on). Code lines the older PR removed and the
    newer one writes back, from `MIN_RESTORED` on, count as rewritten ones: the newer PR takes
    back part of the older one (numpy #6717, "Readd fallback CBLAS detection", of #6183)."""
    restored = _restored(lineage)
    if not lineage.lines and not lineage.inserted and not restored:
        return False
    if lineage.whole and lineage.weight and gap_days <= config.whole_change_max_gap_days:
        return True
    need = config.lineage_lines_per_gap * max(1.0, gap_days / config.max_gap_days)
    if config.lineage_max_lines > 0:
        need = min(need, config.lineage_max_lines)
    return lineage.weight + restored >= need


def lineage_of(attrs: LinkEvidence) -> Lineage:
    """The line lineage a link's attributes record (`lineage*`, set when its rules ran)."""
    return Lineage(
        attrs["lineage"],
        attrs["lineage_via"],
        attrs.get("lineage_moved", 0),
        attrs.get("lineage_touched", 0),
        tests=attrs.get("lineage_tests", 0),
        test_code=attrs.get("lineage_test_code", 0),
        restored=attrs.get("lineage_restored", 0),
        whole=attrs.get("lineage_whole", False),
        inserted=attrs.get("lineage_inserted", 0),
    )


def code_backed(lineage: Lineage, gap_days: float, config: ChainsConfig, symbols: int = 0) -> bool:
    """Whether a link no text names (`prchain.chains.rules.codelinks`) stands: its points of contact with the
    older PR's code reach `code_link_min_contact` per `max_gap_days` between the PRs. A point of
    contact is a line of the older PR's code the newer one rewrites, not only moves (git blame,
    or without a clone the same file), a place where it adds code inside that code, or a name
    the older PR introduced that its code uses (`code_contact`). Moved lines alone do not make
    one: on autogen, links whose every line was moved (a module moved to an extension package,
    #4557) were as often unrelated as not; nor do three or four rewritten lines with no name
    used (round 31: a refactor that rewrites a loop the older PR had just synced, gin #2368 →
    #2378; a sweep over files the older PR touched, chi #966 → #971)."""
    need = config.code_link_min_contact * max(1.0, gap_days / config.max_gap_days)
    return code_contact(lineage, symbols) >= need


def code_contact(lineage: Lineage, symbols: int) -> int:
    """Points of contact of a code link: rewritten (not moved) lines of the older PR's code,
    places where the newer PR adds code inside it, and names the older PR introduced that the
    newer one's code uses."""
    return max(0, lineage.lines - lineage.moved) + lineage.inserted + symbols


def mention_contact(lineage: Lineage, attrs: LinkEvidence) -> int:
    """Points of contact behind a plain mention: those of a code link (`code_contact`), the
    lines of the older PR's code the newer one writes back and those of its tests it changes.
    A newer PR that rewrites all the older one's code needs no more (`Lineage.whole`)."""
    contact = code_contact(lineage, attrs.get("symbols", 0))
    return contact + _restored(lineage) + lineage.test_code


def tests_back(lineage: Lineage, gap_days: float, config: ChainsConfig) -> bool:
    """Whether the newer PR rewrites enough of the older one's tests to back the link on its own:
    `test_lines_per_gap` per `max_gap_days` between the PRs (at least one period). Tests say what
    the older PR promised; a PR that changes them changes that behaviour (arrow-adbc #403 renames
    #381's TLS tests and adds cases for the options #381 implemented; lancedb #3016 changes the
    output of #3013's `__getitems__` and rewrites its 21 lines of tests). A line or two is as
    often a sibling adding its case beside the older one's."""
    if config.test_lines_per_gap <= 0 or not lineage.test_code:
        return False
    need = config.test_lines_per_gap * max(1.0, gap_days / config.max_gap_days)
    return lineage.test_code >= need


def _wording_only(
    best: Judged,
    attrs: LinkEvidence,
    lineage: Lineage,
    config: ChainsConfig,
    said_by_newer: bool,
) -> bool:
    """A strong-wording link with no code evidence at all: the newer PR changes none of the older
    one's lines, writes back none it removed (a re-land after a revert does) and uses none of its
    symbols ("follow up to #N" for a parallel change, "#N caused an overflow" for a fix
    elsewhere). Stack wording needs the same unless `stack_needs_code` is off: a branch is
    stacked to merge in order as often as to build on its base (xarray #9418, "Stacks on #9417,
    merge that first", swaps annotations #9417 never wrote; rolldown #9893 and #9895, each
    "Stacked on" a sibling that removes another plugin). The exception is the older PR saying it
    prepares the newer one (wasmtime #8721, "primarily to unblock #8715"). With it off, split-off
    wording still needs code when the newer PR says it of the older (tokio: "Extracted from
    #1152", said of a PR merged before, is a side change left over)."""
    if best.cls != "strong" or not config.strong_needs_code:
        return False
    if lineage.weight or lineage.touched or _restored(lineage) or attrs.get("symbols", 0):
        return False
    if config.stack_needs_code:
        # Only the PR merged first saying it exists for the other ("a prerequisite for #N", "to
        # unblock #N") keeps the link on its words: it was written for that PR.
        return said_by_newer or not prepares(best.ref.evidence, best.ref.number)
    words = stacked_wording(best.ref.evidence, best.ref.number)
    if words and said_by_newer and SPLIT_OFF.fullmatch(words):
        return True
    return not words


def _corroboration(lineage: Lineage, by_lines: bool, by_symbols: bool, by_tests: bool) -> str:
    """What backs an issue-only link besides the issue ('' when nothing does). Only code and the
    older PR's tests: two PRs of one author on one issue are as often a fix and an unrelated later
    attempt (mypy: "#1645 isn't fixed by this") as a fix and its follow-up."""
    if by_lines and not lineage.weight:
        return "the newer PR writing back lines the older one removed"
    if by_lines:
        return "the newer PR changing lines the older one added"
    if by_symbols:
        return "the newer PR's code using names the older one introduced"
    if by_tests:
        return "the newer PR changing the older one's tests"
    return ""
