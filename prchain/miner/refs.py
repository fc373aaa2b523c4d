"""Find references to PRs and issues in free text (titles, bodies, commit messages, comments).

Pure functions. What counts: `#N`, `GH-N`, `owner/repo#N`, GitHub URLs to pull/ and issues/, and
"This reverts commit <sha>" (a commit, mapped to its PR by the caller). Each reference is typed by
the words before it: closing keywords → fixes, revert wording → reverts, follow-up wording →
follow_up, otherwise mention. Code (fenced and inline), quoted replies and HTML comments are
ignored: numbers there are rarely meant as links. So is the text of an HTML anchor or markdown link
whose URL points anywhere but this repository: bots write `<a href=".../other/repo/issues/5">#5</a>`,
and that `#5` is the other repository's (the URL itself is still read, as an external reference).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_NUMBER = 999_999_999  # fits a 32-bit INTEGER column; longer digit runs are not PR numbers
EVIDENCE_CHARS = 200
LEAD_CHARS = 60
MAX_WRAPPED_LINES = 6
HEADING = re.compile(r"[ \t]*#{1,6}[ \t]")
SENTENCE_STOP = re.compile(r"[.!?](?=\s)")
LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+")

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

HTML_LINK = re.compile(
    r"<a\s[^>]*?href\s*=\s*[\"'](?P<url>[^\"']*)[\"'][^>]*>(?P<text>.*?)</a\s*>", re.I | re.S
)
MD_LINK = re.compile(r"\[(?P<text>[^\[\]\n]*)\]\((?P<url>[^()\s]*)(?:\s+\"[^\"\n]*\")?\)")
URL = re.compile(
    r"https?://(?:www\.)?github\.com/(?P<owner>[A-Za-z0-9][\w.-]*)/(?P<name>[\w.-]+?)"
    r"/(?:pull|pulls|issues)/(?P<num>\d+)(?![\d])[^\s)\]>]*",
    re.I,
)
GITHUB_REPO_URL = re.compile(
    r"https?://(?:www\.)?github\.com/(?P<owner>[A-Za-z0-9][\w.-]*)/(?P<name>[\w.-]+)", re.I
)
REPO_REF = re.compile(
    r"(?<![\w/.@-])(?P<owner>[A-Za-z0-9][\w.-]*)/(?P<name>[\w.-]+)#(?P<num>\d+)\b"
)
HASH_REF = re.compile(r"(?<![\w&/#@\\])(?:#|\bGH-)(?P<num>\d+)\b", re.I)
MAY_REFER = re.compile(r"#\d|GH-\d|/(?:pull|pulls|issues)/\d|reverts commit", re.I)
REVERT_COMMIT = re.compile(r"\bThis reverts commit (?P<sha>[0-9a-f]{7,40})\b", re.I)

FIXES_BEFORE = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s*(?:(?:issue|bug|pr)\s+)?\[?$", re.I
)
# "Back out #850" (black) and "roll back #12" undo a PR as "revert #12" does.
REVERTS_BEFORE = re.compile(
    r"\b(?:revert(?:s|ed|ing)?|back(?:s|ed|ing)?\s+out|roll(?:s|ed|ing)?\s+back|rollback)"
    r"\s*:?\s*(?:(?:pr|pull request|commit)\s+)?\[?$"
    # "Reverts most of the changes of #10969" (redis #11178), "revert the changes from #12"
    r"|\brevert(?:s|ed|ing)?\s+(?:(?:most|some|all|part|parts|much)\s+of\s+)?the\s+"
    r"(?:changes?|commits?|work)\s+(?:of|from|in|made\s+in|introduced\s+in)\s*$",
    re.I,
)
FOLLOW_BEFORE = re.compile(
    r"\b(?:follow[- ]?ups?(?:\s+(?:to|of|on|for|from))?|builds?\s+(?:up)?on(?:\s+top\s+of)?|built\s+on"
    r"(?:\s+top\s+of)?|part\s+of|supersed(?:es|ed\s+by|e)|continuation\s+of|continues|extends|stacked\s+on"
    r"(?:\s+top\s+of)?|depends\s+on|based\s+on|re-?lands?(?:\s+of)?|split\s+(?:out\s+)?(?:from|of)|"
    r"(?:a\s+)?(?:second|next)\s+(?:part|step)\s+of)\b[^.#\n]{0,30}?$",
    re.I,
)
# Between two numbers of one list: a comma, "and", "&", "/" or only white space ("revert #5601 #6025").
LIST_GAP = re.compile(r"^\s*(?:,\s*(?:and\s+)?|and\s+|&\s*|/\s*)?$", re.I)
# A revert's title: git's `Revert "<title>"`, also behind a conventional-commit type
# (vite: `fix: revert "load sourcemaps alongside modules (#11576)"`, `revert: "…"`) or a list of
# components (tikv: `*: Revert "*: update rust-toolchain (#15584)"`), or the conventional
# `revert:` type before the reverted title itself (`revert: fix(logger): … (#16581)`).
REVERT_TITLE = re.compile(
    r"^\s*(?:[\w*./-]+(?:\s*,\s*[\w*./-]+)*(?:\([^)\n]*\))?!?:\s*)?revert(?:s|ed)?:?\s+"
    r"[\"'“‘](?P<inner>[^\n]*)[\"'”’]",  # single quotes too (application-services #1165)
    re.I,
)
# The head branch GitHub's revert button makes: "revert-1813-DIB_1293" undoes PR #1813 (pillow
# #1847, titled "Revert 1813, plus second commit with tweaks.", names it nowhere else).
REVERT_BRANCH = re.compile(r"^revert-(?P<num>\d{1,9})-")
REVERT_TYPE = re.compile(r"^\s*revert(?:\([^)\n]*\))?!?:\s+(?P<inner>[^\n]+)", re.I)


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


def _points_here(url: str, repo: str) -> bool:
    """Does a link's URL name this repository (or no place at all, as a bare #anchor does)?"""
    if not url or url.startswith("#"):
        return True
    m = URL.match(url) or GITHUB_REPO_URL.match(url)
    return (
        m is not None
        and f"{m.group('owner')}/{_trim_name(m.group('name'))}".lower() == repo.lower()
    )


def blank_foreign_link_text(text: str, repo: str) -> str:
    """Blank the visible text of links whose URL points outside this repository (positions kept)."""
    if "<a" not in text and "](" not in text:
        return text

    def blank(match: re.Match[str]) -> str:
        if _points_here(match.group("url"), repo):
            return match.group(0)
        start, end = match.span("text")
        inner = re.sub(r"[^\n]", " ", match.group("text"))
        return text[match.start() : start] + inner + text[end : match.end()]

    for pattern in (HTML_LINK, MD_LINK):
        text = pattern.sub(blank, text)
    return text


def branch_refs(head_ref: str | None, repo: str) -> list[Ref]:
    """The revert a PR's head branch names (GitHub's revert button), as a reference."""
    found = REVERT_BRANCH.match(head_ref or "")
    if found is None:
        return []
    return [Ref(repo, int(found.group("num")), "reverts", "branch", f"branch {head_ref}")]


def extract_refs(text: str, found_in: str, repo: str) -> list[Ref]:
    """Every reference in `text`, in order of appearance; `repo` is the text's own owner/name."""
    if not text or not MAY_REFER.search(text):
        return []
    clean = blank_foreign_link_text(strip_ignored(text), repo)
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
    # The words before the number, across hard-wrapped lines ("Follow-up to\n#12").
    before = clean[_paragraph_start(clean, start) : start].replace("\n", " ")
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


def revert_title_span(text: str) -> tuple[int, int] | None:
    """Where the reverted PR's title sits in a revert's title (`Revert "Add foo (#12)"`), if the
    text starts with one."""
    m = REVERT_TITLE.match(text) or REVERT_TYPE.match(text)
    return None if m is None else (m.start("inner"), m.end("inner"))


def _inside_revert_title(clean: str, start: int) -> bool:
    """`Revert "Add foo (#12)"`: the number inside the quoted title is the reverted PR."""
    span = revert_title_span(clean)
    return span is not None and span[0] <= start < span[1]


def retype(evidence: str, number: int | None) -> str | None:
    """The type today's rules give a stored mention of `#number`, read again from its evidence
    text: a store mined before a wording was known ('fix: revert "… (#12)"', "revert #5 #12")
    needs no new mining. None when they find nothing more than a mention."""
    if number is None:
        return None
    for ref in extract_refs(evidence, "body", "_/_"):
        if ref.target_number == number and not ref.external and ref.type != "mention":
            return ref.type
    return None


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
    """The sentence around text[start:end], whitespace squeezed, at most EVIDENCE_CHARS long.

    A reference in a list item carries the list's lead-in line ("Related:", "Stack:") in front,
    joined by " | ": that line is what says whether the listed PRs are built on or only related.
    """
    line_start = text.rfind("\n", 0, start) + 1
    lead = _list_lead(text, line_start) if LIST_ITEM.match(text, line_start) else ""
    own = _sentence(text, start, end)
    return f"{lead} | {own}"[:EVIDENCE_CHARS] if lead else own


def _list_lead(text: str, line_start: int) -> str:
    """The first non-empty line above a run of list items (at most LEAD_CHARS of it)."""
    pos = line_start
    while pos > 0:
        prev_start = text.rfind("\n", 0, pos - 1) + 1
        line = text[prev_start : pos - 1]
        if line.strip() and not LIST_ITEM.match(line):
            lead = " ".join(text[_paragraph_start(text, prev_start) : pos - 1].split())
            return lead[-LEAD_CHARS:]
        pos = prev_start
    return ""


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence around the reference, across hard-wrapped lines (commit bodies wrap at ~72)."""
    para_start, para_end = _paragraph_start(text, start), _paragraph_end(text, end)
    stops = [m.end() for m in SENTENCE_STOP.finditer(text, para_start, start)]
    left = stops[-1] if stops else para_start
    after = SENTENCE_STOP.search(text, end, para_end)
    right = after.start() + 1 if after else para_end
    snippet = " ".join(text[left:right].split())
    if len(snippet) <= EVIDENCE_CHARS:
        return snippet
    focus = " ".join(text[left:start].split())
    begin = max(0, min(len(focus) - EVIDENCE_CHARS // 2, len(snippet) - EVIDENCE_CHARS))
    return snippet[begin : begin + EVIDENCE_CHARS]


def _starts_block(text: str, pos: int) -> bool:
    """Does the line at `pos` start a list item or heading (so a wrapped sentence cannot cross it)?"""
    return bool(LIST_ITEM.match(text, pos) or HEADING.match(text, pos))


def _paragraph_start(text: str, start: int) -> int:
    """Start of the run of wrapped lines holding `start`: back over non-blank, non-block lines."""
    pos = text.rfind("\n", 0, start) + 1
    for _ in range(MAX_WRAPPED_LINES):
        if pos == 0 or _starts_block(text, pos):
            break
        prev = text.rfind("\n", 0, pos - 1) + 1
        if not text[prev : pos - 1].strip() or HEADING.match(text, prev):
            break
        pos = prev
    return pos


def _paragraph_end(text: str, end: int) -> int:
    """End of the run of wrapped lines holding `end` (the newline before a blank or block line)."""
    pos = text.find("\n", end)
    for _ in range(MAX_WRAPPED_LINES):
        if pos < 0:
            return len(text)
        following = text.find("\n", pos + 1)
        line = text[pos + 1 : following if following >= 0 else len(text)]
        if not line.strip() or _starts_block(text, pos + 1):
            return pos
        pos = following
    return pos if pos >= 0 else len(text)
