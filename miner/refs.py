"""Find references to PRs and issues in free text (titles, bodies, commit messages, comments).

Pure functions. What counts: `#N`, `GH-N`, `owner/repo#N`, GitHub URLs to pull/ and issues/, and
"This reverts commit <sha>" (a commit, mapped to its PR by the caller). Each reference is typed by
the words before it: closing keywords → fixes, revert wording → reverts, follow-up wording →
follow_up, otherwise mention. Code (fenced and inline), quoted replies and HTML comments are
ignored: numbers there are rarely meant as links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_NUMBER = 999_999_999  # fits a 32-bit INTEGER column; longer digit runs are not PR numbers
EVIDENCE_CHARS = 200

FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)", re.M | re.S)
HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
INLINE_CODE = re.compile(r"(`+)(?!`)[^\n]+?(?<!`)\1(?!`)")
QUOTED_LINE = re.compile(r"^[ \t]*>[^\n]*$", re.M)
IGNORED = (
    (("```", "~~~"), FENCE),
    (("<!--",), HTML_COMMENT),
    (("`",), INLINE_CODE),
    ((">",), QUOTED_LINE),
)

URL = re.compile(
    r"https?://(?:www\.)?github\.com/(?P<owner>[A-Za-z0-9][\w.-]*)/(?P<name>[\w.-]+?)"
    r"/(?:pull|pulls|issues)/(?P<num>\d+)(?![\d])[^\s)\]>]*",
    re.I,
)
REPO_REF = re.compile(
    r"(?<![\w/.@-])(?P<owner>[A-Za-z0-9][\w.-]*)/(?P<name>[\w.-]+)#(?P<num>\d+)\b"
)
HASH_REF = re.compile(r"(?<![\w&/#@\\])(?:#|\bGH-)(?P<num>\d+)\b", re.I)
MAY_REFER = re.compile(r"#\d|GH-\d|/(?:pull|pulls|issues)/\d|reverts commit", re.I)
REVERT_COMMIT = re.compile(r"\bThis reverts commit (?P<sha>[0-9a-f]{7,40})\b", re.I)

FIXES_BEFORE = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s*(?:(?:issue|bug|pr)\s+)?$", re.I
)
REVERTS_BEFORE = re.compile(
    r"\brevert(?:s|ed|ing)?\s*:?\s*(?:(?:pr|pull request|commit)\s+)?$", re.I
)
FOLLOW_BEFORE = re.compile(
    r"\b(?:follow[- ]?ups?(?:\s+(?:to|of|on|for|from))?|builds?\s+(?:up)?on(?:\s+top\s+of)?|built\s+on"
    r"(?:\s+top\s+of)?|part\s+of|supersed(?:es|ed\s+by|e)|continuation\s+of|continues|extends|stacked\s+on"
    r"(?:\s+top\s+of)?|depends\s+on|based\s+on|re-?lands?(?:\s+of)?|split\s+(?:out\s+)?(?:from|of)|"
    r"(?:a\s+)?(?:second|next)\s+(?:part|step)\s+of)\b[^.#\n]{0,30}?$",
    re.I,
)
LIST_GAP = re.compile(r"^\s*(?:,\s*(?:and\s+)?|and\s+|&\s*|/\s*)$", re.I)
REVERT_TITLE = re.compile(r'^\s*Revert\s+"(?P<inner>.*)"', re.I | re.S)


@dataclass(frozen=True)
class Ref:
    target_repo: str  # owner/name; the text's own repo unless external
    target_number: int | None  # None for a commit reference (see target_sha)
    type: str  # mention | fixes | reverts | follow_up
    found_in: str  # title | body | commit | comment | review | timeline | issue
    evidence: str
    external: bool = False
    target_sha: str | None = None


def strip_ignored(text: str) -> str:
    """Blank out code, quoted replies and HTML comments, keeping every other character in place."""

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    # Each pattern only runs when its marker occurs at all: most texts have none of them.
    for markers, pattern in IGNORED:
        if any(m in text for m in markers):
            text = pattern.sub(blank, text)
    return text


def extract_refs(text: str, found_in: str, repo: str) -> list[Ref]:
    """Every reference in `text`, in order of appearance; `repo` is the text's own owner/name."""
    if not text or not MAY_REFER.search(text):
        return []
    clean = strip_ignored(text)
    spans = _number_spans(clean, repo)
    refs: list[Ref] = []
    previous: tuple[int, str] | None = None  # (end, type) of the last reference, for lists
    for start, end, owner_name, number in spans:
        kind = _classify(clean, start, previous)
        previous = (end, kind)
        same = owner_name is None or owner_name.lower() == repo.lower()
        target = repo if same else str(owner_name)
        refs.append(
            Ref(target, number, kind, found_in, evidence(clean, start, end), external=not same)
        )
    refs.extend(_commit_refs(clean, found_in, repo))
    return refs


def _number_spans(clean: str, repo: str) -> list[tuple[int, int, str | None, int]]:
    """(start, end, owner/name or None, number), URLs and owner/repo#N first so #N inside is not counted twice."""
    spans: list[tuple[int, int, str | None, int]] = []
    taken = bytearray(len(clean))
    for pattern in (URL, REPO_REF, HASH_REF):
        for m in pattern.finditer(clean):
            if any(taken[m.start() : m.end()]) or len(m.group("num")) > 9:
                continue
            owner_name = (
                f"{m.group('owner')}/{_trim_name(m.group('name'))}"
                if "owner" in m.groupdict()
                else None
            )
            spans.append((m.start(), m.end(), owner_name, int(m.group("num"))))
            taken[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    return sorted(spans)


def _trim_name(name: str) -> str:
    return name[:-4] if name.lower().endswith(".git") else name


def _classify(clean: str, start: int, previous: tuple[int, str] | None) -> str:
    line_start = clean.rfind("\n", 0, start) + 1
    before = clean[line_start:start]
    in_list = previous and previous[0] >= line_start and LIST_GAP.match(clean[previous[0] : start])
    if previous and in_list and previous[1] != "mention":
        return previous[1]
    if FIXES_BEFORE.search(before):
        return "fixes"
    if REVERTS_BEFORE.search(before) or _inside_revert_title(clean, start):
        return "reverts"
    if FOLLOW_BEFORE.search(_sentence_before(before)):
        return "follow_up"
    return "mention"


def _sentence_before(before: str) -> str:
    cut = max(before.rfind(". "), before.rfind("; "))
    return before[cut + 2 :] if cut >= 0 else before


def _inside_revert_title(clean: str, start: int) -> bool:
    """`Revert "Add foo (#12)"`: the number inside the quoted title is the reverted PR."""
    m = REVERT_TITLE.match(clean)
    return m is not None and m.start("inner") <= start < m.end("inner")


def _commit_refs(clean: str, found_in: str, repo: str) -> list[Ref]:
    return [
        Ref(
            repo,
            None,
            "reverts",
            found_in,
            evidence(clean, m.start(), m.end()),
            target_sha=m.group("sha"),
        )
        for m in REVERT_COMMIT.finditer(clean)
    ]


def evidence(text: str, start: int, end: int) -> str:
    """The sentence around text[start:end], whitespace squeezed, at most EVIDENCE_CHARS long."""
    left = max(text.rfind("\n", 0, start), _last_stop(text, start)) + 1
    right_candidates = [i for i in (text.find("\n", end), _next_stop(text, end)) if i >= 0]
    right = min(right_candidates) if right_candidates else len(text)
    snippet = " ".join(text[left:right].split())
    if len(snippet) <= EVIDENCE_CHARS:
        return snippet
    focus = " ".join(text[left:start].split())
    begin = max(0, min(len(focus) - EVIDENCE_CHARS // 2, len(snippet) - EVIDENCE_CHARS))
    return snippet[begin : begin + EVIDENCE_CHARS]


def _last_stop(text: str, start: int) -> int:
    found = [text.rfind(stop, 0, start) for stop in (". ", "! ", "? ")]
    best = max(found)
    return best + 1 if best >= 0 else -1


def _next_stop(text: str, end: int) -> int:
    found = [i for i in (text.find(stop, end) for stop in (". ", "! ", "? ")) if i >= 0]
    return min(found) + 1 if found else -1
