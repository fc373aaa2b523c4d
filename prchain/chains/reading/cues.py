"""Sort each reference into an evidence class: does the newer PR build on the older one?

Classes (weights in `ChainsConfig.evidence_weights`):
- strong: follow-up, extends or fix-of-regression wording ("follow-up to #X", "fixes #X",
  "introduced in #X", "prerequisite for #X");
- medium: a plain mention with no wording either way;
- parallel: analogy, list or drive-by wording ("similar to #X", "as in #X", "same as #X",
  "Related: - #X", "Related PRs: #X", "noticed while working on #X"):
  siblings that share no code state, never an edge. "Related to #X" says no more than a
  plain mention does (meilisearch #3538, "Related to" a review comment of #3524, fixes what it
  pointed out), and "cost-related" no analogy at all;
- issue_only: the two PRs only meet through an issue; an edge only with corroboration (an issue one
  of them names only by analogy makes the pair parallel, `issue_analogy`; one that says it prepares
  the issue the other fixes makes it strong, `issue_prepares`; both set by prchain/chains/evidence/loading.py);
- revert: the newer PR reverts the older.

Only the evidence window the miner stored is read, and of it only the sentence that holds the
reference (plus a list's lead-in line, which the miner prefixes as "lead | item"): dependency wording
in a neighbouring sentence is about something else. Cue words match as whole words ("restoration"
is not "restore"). Analogy wording is looked for just before the number, so "follow-up to #1,
similar to #2" calls #1 strong and #2 parallel.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from prchain.miner.refs import LIST_ITEM, strip_ignored

EvidenceClass = Literal["strong", "medium", "parallel", "issue_only", "revert", "code"]
EVIDENCE_CLASSES: tuple[str, ...] = get_args(EvidenceClass)

# Reference types whose own wording (read by the miner right before the number) is a dependency.
STRONG_TYPES = frozenset({"fixes", "follow_up"})
WINDOW = 60  # characters before the number in which analogy wording applies to it
# A link into one PR's review ("/pull/12#discussion_r…") is a review follow-up of that PR only.
REVIEW_ANCHOR = "(?:discussion|issuecomment|pullrequestreview)"

# "Should be merged first: #910" (wgpu #907, opened before #910 and rebased on it): dependency,
# stack and stacked-on wording alike.
MERGED_FIRST = (
    r"(?:be|gets?)\s+(?:merged|landed)\s+first|(?:merge|land)\s+(?:#\d+\s+|that\s+)?first"
)
DEPENDENT = re.compile(
    r"\b(?:introduced|added|regressed|broken|broke|caused|landed|implemented|started|changed|missed)\s+(?:\w+\s+){0,3}?(?:in|by|with)\b"
    r"|\b(?:since|(?<!merged\s)(?<!landed\s)(?<!opened\s)after(?!\s+(?:a\s+|the\s+)?rebas)|until|(?<!the\s)following|unblocked\s+by|requires?|needs|re-?apply|re-?lands?|addendum|follow[- ]on"
    r"|spun\s+(?:this\s+)?off|split\s+(?:out\s+)?(?:of|from)|on\s+top\s+of|first\s+(?:version|pr|step|part)"
    r"|prototype|improves|extends|generaliz(?:e|es|ed|ing)|discovered\s+(?:during|in|while)|while\s+(?:fixing|reviewing)"
    r"|reviewing|feedback|suggestion|discussion|discussed\s+in|my\s+mistake|regression|leftover|missed|oversight|revert"
    r"|(?<!in\s)(?:an\s+)?addition\s+to|prepar(?:e|es|ing)\s+for"
    r"|setup\s+for|(?:in\s+)?prep(?:aration)?\s+for|needed\s+(?:\S+\s+){0,4}?for|prerequisite|precursor|groundwork|pulled\s+out"
    r"|atop|in\s+light\s+of|unblocks?|blocks|blocked\s+by|stacked|originally|restor(?:e|es|ed|ing)|TODO"
    rf"|{MERGED_FIRST}"
    r"|(?:required|necessary)\s+(?:\w+\s+){0,3}?for|to\s+(?:use|support)|bug\s+(?:\w+\s+){0,3}?(?:in|from)"
    r"|pulled\s+(?:\w+\s+){0,2}?out\s+of|extracted\s+(?:\w+\s+){0,4}?from|left\s+(?:behind\s+)?in)\b"
    r"|\b\w+ed\s+(?:\S+\s+){0,5}?in\s+(?:#\d|https?://\S+/pull/\d)"
    r"|\bin\s+(?:#\d+|https?://\S+/pull/\d+\S*),?\s+(?:we|I)\b"
    r"|#\d+\s+(?:added|introduced|changed|made|moved|removed|no\s+longer|modeled|broke|caused)\b"
    r"|\bfollows?\s+up|\bsplit(?:ting)?\s+(?:\w+\s+){0,3}?out\s+(?:of|from)",
    re.I,
)
PARALLEL = re.compile(
    r"\b(?:similar(?:\s+in\s+spirit)?\s+to|similar\s+(?:\w+\s+){0,2}?(?:as|approach)|same\s+(?:\w+\s+){0,6}?as"
    r"|(?:just\s+)?like\s+(?:in|for|we\s+did\s+in)|analog(?:ous)?|equivalent\s+(?:to|as)|peer\s+to|inspired\s+by|akin\s+to"
    r"|(?:same|similar)\s+(?:basic\s+)?(?:approach|idea|pattern|change|fix)|along\s+the\s+lines\s+of"
    r"|like\s+(?:#|https?://)|alternative\s+to|instead\s+of|counterpart|equivalent\s+of|mirrors?|see\s+also"
    r"|(?<![\w-])related(?=:|\s+(?:prs?|pull\s+requests?|work)\b)|unrelated|also\s+(?:see|fixed)|sibling|as\s+(?:was\s+)?(?:done\s+)?in|as\s+with"
    r"|as\s+we\s+did\s+(?:in|for)|companion|in\s+parallel|independent(?:ly)?\s+(?:of|from)"
    r"|(?:smaller|simpler|larger|bigger|shorter)\s+than|(?:noticed|found|spotted)\s+(?:\w+\s+){0,4}?while"
    r"|while\s+working\s+on|drive[- ]?by|in\s+the\s+works|in\s+flight)\b",
    re.I,
)

# Wording that says the newer PR cannot exist without the older one (a stack, a prerequisite, a
# split-out base, a re-land): it keeps a link even when the two PRs share no code we can see.
STACKED = re.compile(
    r"\b(?:stacked|on\s+top\s+of|atop|built\s+(?:up)?on|builds\s+(?:up)?on|based\s+on|depends\s+on"
    r"|dependent\s+on|requires?\s+(?:#\d|https?://)|required\s+(?:by|for)|prerequisite|precursor|groundwork|blocked\s+by|unblocks?"
    r"|split(?:ting)?\s+(?:\w+\s+){0,3}?(?:out\s+)?(?:of|from)|spun\s+(?:\w+\s+)?off|pulled\s+(?:\w+\s+){0,2}?out\s+of"
    r"|extracted\s+(?:\w+\s+){0,4}?from|re-?appl(?:y|ies|ied)|re-?lands?|un-?reverts?"
    r"|part\s+(?:\d|one|two|three|four|ii|iii|iv)|(?:first|second|third|next)\s+(?:part|step|pr)"
    # The newer PR uses what the older one made (until symbol use is measured, its own words).
    r"|enabled\s+by|made\s+possible\s+by|now\s+that|reus(?:e|es|ed|ing)|wires?\s+up"
    r"|(?:after|once)\s+(?:#\d+|https?://\S+)\s+(?:has\s+|is\s+|was\s+)?(?:landed|merged)"
    rf"|{MERGED_FIRST}"
    r"|uses?\s+(?:the\s+)?(?:\w+\s+){0,4}?(?:added|introduced|defined)\s+(?:in|by))\b",
    re.I,
)


# Split-off wording among the stack words: "split out of #N" makes a stack only when #N is the PR
# still open (the newer one); said of a PR already merged, the newer PR is a leftover of it.
SPLIT_OFF = re.compile(
    r"(?:split(?:ting)?\s+(?:\w+\s+){0,3}?(?:out\s+)?(?:of|from)|spun\s+(?:\w+\s+)?off"
    r"|pulled\s+(?:\w+\s+){0,2}?out\s+of|extracted\s+(?:\w+\s+){0,4}?from)",
    re.I,
)


_NAMED = re.compile(r"(?:#|/pull/)(\d+)")  # the PR numbers a stretch of text names


def _said(wording: re.Pattern[str], evidence: str, number: int | None) -> str:
    """The words of `wording` in the sentence that holds the reference ('' when none); words
    that name another PR are said of that one ("Updates a test added by #10475 after #10297
    merged": arrow-rs #10506 is stacked on nothing of #10475's)."""
    for found in wording.finditer(reference_sentence(evidence, number)):
        named = {int(n) for n in _NAMED.findall(found.group(0))}
        if not named or number in named:
            return found.group(0).strip()
    return ""


# Wording by which a PR says it was opened on top of another, still open: it may be opened before
# its base merged (clippy: "Based on #15947", its parsing revamp part 4 of N).
STACKED_ON = re.compile(
    r"\b(?:stacked\s+on|on\s+top\s+of|atop|built\s+(?:up)?on|builds\s+(?:up)?on|based\s+on"
    r"|depends\s+on|dependent\s+on|requires?\s+(?:#\d|https?://)|blocked\s+by"
    rf"|{MERGED_FIRST})",
    re.I,
)


# Wording by which a PR says, while another is still open, that it prepares that one: the other,
# merged later, was stacked on it (rust-analyzer #7021, "Groundwork for #6966", opened with it).
PREPARES = re.compile(
    r"\b(?:groundwork|(?:in\s+)?prep(?:aration)?|prepar(?:e|es|ing)|preparatory\s+\w+|set\s?up|prerequisite|precursor"
    r"|needed|required|necessary)\s+(?:work\s+)?for\b|\bunblocks?\b",
    re.I,
)


def prepares(evidence: str, number: int | None = None) -> bool:
    """Whether the sentence holding the reference says the writing PR prepares the named one."""
    return bool(_said(PREPARES, evidence, number))


def stacked_on(evidence: str, number: int | None = None) -> bool:
    """Whether the sentence holding the reference says the PR is stacked on the referenced one."""
    return bool(_said(STACKED_ON, evidence, number))


def stacked_wording(evidence: str, number: int | None = None) -> str:
    """The stack/prerequisite words in the sentence that holds the reference ('' when none)."""
    return _said(STACKED, evidence, number)


# Wording that says the older PR broke something the newer one repairs (whole words, in the
# sentence holding the reference).
REGRESSION = re.compile(
    r"\b(?:broke|broken\s+(?:by|in|since)|regress(?:ed|ion|ions)|introduced\s+(?:\w+\s+){0,3}?(?:in|by)"
    r"|caused\s+by|my\s+mistake|bug\s+(?:\w+\s+){0,3}?(?:in|from))\b",
    re.I,
)


def regression_wording(evidence: str, number: int | None = None) -> str:
    """The words saying the older PR caused a regression ('' when none)."""
    return _said(REGRESSION, evidence, number)


# A sentence ends at . ! or ? followed by white space, at a blank line, or at a line that starts a
# list item; "1.2.3", "e.g.x" and URLs keep their dots.
SENTENCE_DONE = re.compile(r"[.!?]\s*$")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")


def mention_cue(evidence: str, number: int | None = None) -> str:
    """'parallel', 'dependent' or 'none' for the evidence of a plain mention (parallel wins)."""
    if _analogy_before(evidence, number):
        return "parallel"
    if DEPENDENT.search(reference_sentence(evidence, number)):
        return "dependent"
    return "none"


def _locate(evidence: str, number: int | None) -> tuple[str, str, str, re.Match[str]] | None:
    """The evidence split into (list lead-in, separator, item) and the reference to `number` in
    the item; None without a number or when the number is not in the text."""
    lead, bar, item = evidence.rpartition(" | ")
    if SENTENCE_DONE.search(lead):  # the line before is a finished sentence, no lead-in
        lead = bar = ""
    # Only the lead-in's last sentence introduces the list: in "…the polish needed for 0.1. Please
    # note the following:" the first sentence is about the PR's own work (tracing #312).
    lead = SENTENCE_END.split(lead)[-1]
    if number is None:
        return None
    found = re.search(rf"(?:#|/)({number})\b", item)
    return None if found is None else (lead, bar, item, found)


def reference_sentence(evidence: str, number: int | None) -> str:
    """The sentence of `evidence` that holds the reference to `number`, with a list's lead-in.

    Without a number, or when the number is not in the text, the whole window is the sentence
    (nothing better is known)."""
    located = _locate(evidence, number)
    if located is None:
        return evidence
    lead, bar, item, found = located
    start = 0
    for end in SENTENCE_END.finditer(item):
        if end.start() >= found.end():
            return f"{lead}{bar}{item[start : end.start()]}"
        start = end.end()
    return f"{lead}{bar}{item[start:]}"


def analogy_window(evidence: str, number: int | None) -> str:
    """The list lead-in plus the text just before the number (back to the previous reference)."""
    located = _locate(evidence, number)
    if located is None:
        return evidence
    lead, _, item, found = located
    before = item[max(0, found.start() - WINDOW) : found.start()]
    before = re.split(r"#\d+|/pull/\d+|/issues/\d+", before)[-1]
    # The marker itself stays in the window: "Like #12" is an analogy, "like" alone is not.
    return f"{lead} {before}{item[found.start() : found.end()]}"


# Regression words proper: "introduced in #N" says no more than where a thing came from ("similar
# to the change introduced in #2369", grafana/agent), so it does not outweigh analogy wording.
BROKE = re.compile(
    r"\b(?:regress(?:ed|ion|ions)|broke|broken\s+(?:by|in|since)|caused\s+by)\b", re.I
)


def _analogy_before(evidence: str, number: int | None) -> re.Match[str] | None:
    """The analogy wording just before the reference, unless words nearer the number say the
    referenced PR broke something: in "use the endpoint name instead of its ID (regression from
    #6118)" (temporal #6182), "instead of" is about names and IDs, "regression from" about #6118."""
    window = analogy_window(evidence, number)
    found = PARALLEL.search(window)
    if found and BROKE.search(window, found.end()):
        return None
    return found


# Right after the number: the same change for another target ("a follow up to #4024 but for
# line ranges", "equivalent as #5023, but for the MultiThread scheduler"). A fix is exempt: "fixes
# #12 but for Windows only" still fixes #12.
ANALOGY_AFTER = re.compile(r"[ \t]*,?[ \t]*but\s+(?:\w+\s+){0,2}?for\b(?!\s+now)", re.I)


def analogy_after(evidence: str, number: int | None) -> str:
    """The "but for …" words just after the reference ('' when none)."""
    located = _locate(evidence, number)
    if located is None:
        return ""
    _, _, item, found = located
    after = ANALOGY_AFTER.match(item, found.end())
    return after.group(0).strip(" ,;:-") if after else ""


def analogy(evidence: str, number: int | None) -> str:
    """The analogy wording about the reference to `number` ('' when none): just before it, or a
    "but for …" just after it."""
    before = _analogy_before(evidence, number)
    return before.group(0).strip() if before else analogy_after(evidence, number)


def landed_subject(evidence: str, title: str, number: int | None) -> bool:
    """Whether a reference's sentence is the commit subject PR `number` (titled `title`) landed
    with, "Title (#N)", alone or as a list item under a lead-in with no dependency wording: a
    copy of its commit, not words about it ("Depends on: | - Title (#N)" is words). A lead that
    ends a sentence introduces no list: it is the line before, often the body of another commit
    the branch took in (zellij #1521 lists main's "sixel support (#1557)" below "... now all
    depend on `utils` only."). Code spans are compared blanked, as the miner stores evidence."""
    lead, _, said = evidence.rpartition(" | ")
    lead_in = lead and not lead.rstrip().endswith((".", "!", "?"))
    if lead_in and (DEPENDENT.search(lead) or STACKED.search(lead) or PREPARES.search(lead)):
        return False
    subject = f"{strip_ignored(title)} (#{number})"
    item = LIST_ITEM.match(said)
    said = said[item.end() :] if item else said
    return " ".join(said.split()).casefold() == " ".join(subject.split()).casefold()


def classify(ref_type: str, evidence: str, number: int | None = None) -> tuple[EvidenceClass, str]:
    """The evidence class of one reference and the words that decided it."""
    if ref_type == "reverts":
        return "revert", "revert wording"
    if (
        ref_type == "code"
    ):  # no text: the newer PR rewrites the older one's code (prchain.chains.rules.codelinks)
        return "code", "the newer PR rewrites code the older one wrote; no text names it"
    if ref_type == "issue_mediated":
        return "issue_only", "only a shared issue"
    if ref_type == "issue_analogy":
        return (
            "parallel",
            f"the shared issue #{number} named by analogy '{analogy(evidence, number)}'",
        )
    if ref_type == "issue_prepares":
        return "strong", f"prepares the shared issue #{number}"
    after = analogy_after(evidence, number) if ref_type != "fixes" else ""
    if after:
        return "parallel", f"analogy wording '{after}' after the reference"
    if ref_type in STRONG_TYPES:
        return "strong", f"{ref_type.replace('_', '-')} wording"
    parallel = _analogy_before(evidence, number)
    if parallel:
        return "parallel", f"analogy/list wording '{parallel.group(0).strip()}'"
    dependent = DEPENDENT.search(reference_sentence(evidence, number))
    if dependent:
        return "strong", f"dependency wording '{dependent.group(0).strip()}'"
    if number is not None and re.search(rf"/pull/{number}/?#{REVIEW_ANCHOR}", evidence):
        return "strong", "a link into the older PR's review"
    return "medium", f"plain {ref_type.replace('_', ' ')}"
