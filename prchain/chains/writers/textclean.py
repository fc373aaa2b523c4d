"""Text in and out of the query writer: cleaned PR bodies, patches cut to a budget, parsed replies.

PR templates leave HTML comments, checklists, empty headings, images and badges behind; none of
it helps a model understand the intent, and links must not leak into the queries. A reply is
accepted only as plain prose (no code or links), else it is an LLMOutputInvalid that the client
retries. What is only form (backticks around a command, bold or italic emphasis, a bulleted or
numbered list of sentences) is repaired instead (markup stripped, items joined into a paragraph),
and the repair is recorded.
"""

from __future__ import annotations

import re

from prchain.core.errors import LLMOutputInvalid
from prchain.llm.repairs import Repaired, RepairKind

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_IMAGE_MD = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_IMAGE_HTML = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
_HTML_TAG = re.compile(
    r"</?(?:details|summary|p|br|div|span|sub|sup|picture|source|b|i|em|strong)\b[^>]*>",
    re.IGNORECASE,
)
_LINK_MD = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"<?https?://[^\s)>\]]+>?")
_CHECKLIST = re.compile(r"^\s*[-*+]\s*\[[ xX]\].*$", re.MULTILINE)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_BLANKS = re.compile(r"\n{3,}")

DEFAULT_MAX_CHARS = 6000


def clean_body(body: str | None, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """The description without comments, checklists, images, links, tags and empty sections."""
    text = (body or "").replace("\r\n", "\n")
    for pattern in (_HTML_COMMENT, _IMAGE_MD, _IMAGE_HTML, _CHECKLIST):
        text = pattern.sub("", text)
    text = _HTML_TAG.sub(" ", text)
    text = _LINK_MD.sub(r"\1", text)
    text = _URL.sub("", text)
    text = _drop_empty_sections(text)
    text = _BLANKS.sub("\n\n", text).strip()
    return (
        text
        if len(text) <= max_chars
        else text[:max_chars].rstrip() + "\n[… description truncated]"
    )


def _drop_empty_sections(text: str) -> str:
    """Remove headings with nothing under them before the next heading of any level (template leftovers)."""
    lines = text.split("\n")
    kept: list[str] = []
    for index, line in enumerate(lines):
        if _HEADING.match(line) and not _has_content_before_next_heading(lines, index + 1):
            continue
        kept.append(line)
    return "\n".join(kept)


def _has_content_before_next_heading(lines: list[str], start: int) -> bool:
    for line in lines[start:]:
        if _HEADING.match(line):
            return False
        if line.strip():
            return True
    return False


_SECTION = re.compile(r"^diff --git ", re.MULTILINE)
_CODE_FENCE = re.compile(r"```")
_PREAMBLE = re.compile(
    r"^\s*(?:\*\*)?(?:query|overview|rewritten (?:query|text))(?:\*\*)?\s*:\s*", re.IGNORECASE
)
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+", re.MULTILINE)


def estimate_tokens(text: str) -> int:
    """About four characters per token; good enough to budget a prompt."""
    return (len(text) + 3) // 4


def trim_patch(diff: str, budget_tokens: int) -> tuple[str, bool]:
    """(the diff cut to about `budget_tokens`, whether anything was cut).

    Whole files are kept in order while they fit; the file that crosses the budget is cut at a
    line boundary, and later files are only named, so the writer still sees everything touched.
    """
    budget = budget_tokens * 4
    if len(diff) <= budget:
        return diff, False
    starts = [m.start() for m in _SECTION.finditer(diff)] or [0]
    sections = [diff[a:b] for a, b in zip(starts, [*starts[1:], len(diff)], strict=True)]
    kept: list[str] = []
    used = 0
    for index, section in enumerate(sections):
        if used + len(section) > budget:
            kept.append(_cut(section, budget - used))
            omitted = [_section_name(rest) for rest in sections[index + 1 :]]
            if omitted:
                kept.append(f"[… diff trimmed; also changed: {', '.join(omitted)}]\n")
            break
        kept.append(section)
        used += len(section)
    return "".join(kept), True


def _cut(section: str, room: int) -> str:
    head = section[: max(room, 0)]
    head = head[: head.rfind("\n") + 1] if "\n" in head else ""
    dropped = section[len(head) :].count("\n")
    return head + f"[… {dropped} more lines of {_section_name(section)} omitted]\n"


def _section_name(section: str) -> str:
    first = section.split("\n", 1)[0]
    return (
        first.rsplit(" b/", 1)[-1] if " b/" in first else first.removeprefix("diff --git ").strip()
    )


_INLINE_CODE = re.compile(r"`([^`\n]+)`")
# Only asterisks: underscores belong to identifiers (snake_case, __init__) more often than to italics.
_EMPHASIS = re.compile(r"(\*\*|\*)(?=\S)(.+?)(?<=\S)\1")


def strip_markup(text: str) -> str:
    """Prose with inline code spans and bold/italic markers reduced to their words."""
    text = _INLINE_CODE.sub(r"\1", text)
    return _EMPHASIS.sub(r"\2", text)


def parse_query(text: str) -> str:
    """The model's query as plain prose (formatting markup stripped); LLMOutputInvalid otherwise."""
    return parse_query_repaired(text).value


def parse_query_repaired(text: str) -> Repaired[str]:
    """parse_query, reporting whether markup had to be stripped (the client records the repair).

    The leakage check runs later on the returned, repaired text, so stripping backticks cannot
    hide an identifier the query must not name.
    """
    query = _PREAMBLE.sub("", text.strip()).strip().strip('"').strip()
    if not query:
        raise LLMOutputInvalid("the reply is empty; write the query as prose")
    if _CODE_FENCE.search(query):
        raise LLMOutputInvalid("the reply contains code (a fenced block); write prose without code")
    cleaned = strip_markup(query)
    if "`" in cleaned:
        raise LLMOutputInvalid(
            "the reply contains code formatting (a stray backtick); write prose without backticks"
        )
    if _URL.search(query):
        raise LLMOutputInvalid("the reply contains a URL; remove every link")
    repairs: tuple[RepairKind, ...] = ("markup_stripped",) if cleaned != query else ()
    if len(_LIST_ITEM.findall(cleaned)) >= 2:  # only the form is off: its items are the prose
        cleaned, repairs = list_as_prose(cleaned), (*repairs, "list_joined")
    return Repaired(cleaned, repairs)


def list_as_prose(text: str) -> str:
    """A bulleted or numbered reply as one paragraph: markers gone, each item a sentence."""
    items = [_LIST_ITEM.sub("", line).strip() for line in text.splitlines() if line.strip()]
    sentences = [i if i.endswith((".", "!", "?", ":")) else i + "." for i in items]
    return " ".join(s[:1].upper() + s[1:] for s in sentences)
