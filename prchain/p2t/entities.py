"""Entity extraction and the symbolic groundedness check (no model involved).

An entity is anything a step could only know from having seen it: a file path, a dotted module or
qualified name, an identifier, a line reference, an error type, a shell flag, a long number. A
mutated step passes when every entity it mentions already appears in the issue or the prefix.

The paper's identifier pattern would flag ordinary English words in prose, so in prose it is
applied only to code-looking tokens (backtick spans, tokens with `_`, `.` or inner capitals);
tool-call arguments are code and get it in full. Authored content (new file text, replacement
text) introduces names by design and gets only the non-identifier patterns.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_EXT = r"(?:py|pyx|pyi|c|cpp|h|js|ts|json|yaml|yml|toml|cfg|md|txt|sh|rst|ini)"
PATTERNS: dict[str, re.Pattern[str]] = {
    "file_path": re.compile(rf"(?:[\w.\-]+/)+[\w.\-]+\.{_EXT}\b"),
    "abs_path": re.compile(r"/(?:workspace|testbed|work|opt|usr|home)/[\w.\-/]+"),
    "dotted_module": re.compile(r"\b(?:[a-z_][a-z0-9_]*\.)+[a-zA-Z_][a-zA-Z0-9_]*"),
    "qualified_name": re.compile(r"\b[A-Z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\b"),
    "definition": re.compile(r"\b(?:def|class|async def)\s+([A-Za-z_][A-Za-z0-9_]*)"),
    "line_ref": re.compile(r"\b(?:lines?|L)\s*#?(\d+)(?:\s*-\s*(\d+))?"),
    "error_type": re.compile(r"\b[A-Z][A-Za-z]*(?:Error|Exception|Warning)\b"),
    "shell_flag": re.compile(r"(?<=\s)--?[a-zA-Z][a-zA-Z_\-]*"),
    "number": re.compile(r"\b\d{3,}\b"),
}
STOPWORDS_FILE = Path(__file__).with_name("stopwords.txt")
IDENTIFIER = re.compile(r"\b[_a-zA-Z][_a-zA-Z0-9]{2,}\b")
CODE_LOOKING = re.compile(r"`([^`]+)`|\b(\w*(?:_|[a-z][A-Z])\w*)\b")
WORKSPACE_PREFIX = re.compile(r"^/(?:workspace|testbed|work)/(?:repo/)?")


@cache
def stop_words() -> frozenset[str]:
    """Common English, shell commands and code vocabulary (stopwords.txt) plus Python keywords."""
    lines = STOPWORDS_FILE.read_text().splitlines()
    words = {w.strip() for w in lines if w.strip() and not w.startswith("#")}
    return frozenset(words) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


# Tool-call arguments that hold authored content rather than references to what was seen.
AUTHORED_ARGS = frozenset({"file_text", "new_str", "content", "summary", "thought"})


@dataclass(frozen=True)
class EntityCheck:
    entities: frozenset[str]
    missing: frozenset[str]

    @property
    def passed(self) -> bool:
        return not self.missing


def _pattern_entities(text: str) -> set[str]:
    found: set[str] = set()
    for kind, pattern in PATTERNS.items():
        for match in pattern.finditer(text):
            if kind == "definition":
                found.add(match.group(1))
            elif kind == "line_ref":
                found.update(g for g in match.groups() if g)
            elif kind == "dotted_module":
                if all(len(part) >= 2 for part in match.group(0).split(".")):
                    found.add(match.group(0).rstrip("."))
            else:
                found.add(match.group(0))
    return {normalize_path(e) for e in found}


def _identifiers(text: str) -> set[str]:
    stop = stop_words()
    return {w for w in IDENTIFIER.findall(text) if w.lower() not in stop}


def normalize_path(entity: str) -> str:
    return WORKSPACE_PREFIX.sub("", entity)


def prose_entities(text: str) -> set[str]:
    """Entities of reasoning text: all patterns, identifiers only where a token looks like code."""
    found = _pattern_entities(text)
    for span, token in CODE_LOOKING.findall(text):
        found |= _identifiers(span or token)
    return found


def code_entities(text: str) -> set[str]:
    """Entities of a command or a reference argument: every pattern, identifiers in full."""
    text = normalize_path_text(text)
    return _pattern_entities(text) | _identifiers(text)


def action_entities(action: str) -> set[str]:
    """Entities named by an unlocker action such as `BASH(grep -n foo src/x.py)`."""
    body = re.sub(r"^\s*[A-Z_]+\s*[(<]?|[)>]\s*$", "", action)
    return code_entities(body) - {"problem_statement"}


def call_entities(name: str, arguments: str | dict[str, object]) -> set[str]:
    """Entities of one tool call: references in full, authored content by pattern only."""
    args = arguments
    if isinstance(arguments, str):
        try:
            args = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            return code_entities(arguments)
    if not isinstance(args, dict):
        return code_entities(str(args))
    found: set[str] = set()
    for key, value in args.items():
        if key == "command" and name == "str_replace_editor":
            continue  # the editor's sub-command name, not something seen
        text = json.dumps(value) if not isinstance(value, str) else value
        found |= _pattern_entities(text) if key in AUTHORED_ARGS else code_entities(text)
    return found


def _seen(entity: str, seen_text: str) -> bool:
    if entity in seen_text:
        return True
    parts = entity.split(".")
    # a.b.c is grounded when its tail b.c (or the last name) was seen: imports shorten paths.
    if (
        "/" not in entity
        and len(parts) > 1
        and any(".".join(parts[i:]) in seen_text for i in range(1, len(parts)))
    ):
        return True
    # A file listed by `ls DIR` is reachable as DIR/name: both halves must have been seen.
    parent, _, name = entity.rpartition("/")
    return (
        bool(parent)
        and parent in seen_text
        and re.search(rf"\b{re.escape(name)}\b", seen_text) is not None
    )


def check_entities(entities: Iterable[str], seen: Iterable[str]) -> EntityCheck:
    """Ents(y) ⊆ Obs(h): every entity must occur in what was seen (issue, observations, replies)."""
    seen_text = "\n".join(normalize_path_text(s) for s in seen)
    ents = frozenset(entities)
    return EntityCheck(ents, frozenset(e for e in ents if not _seen(e, seen_text)))


def normalize_path_text(text: str) -> str:
    return re.sub(r"/(?:workspace|testbed|work)/(?:repo/)?", "", text)


def step_entities(content: str, tool_calls: Iterable[dict[str, object]]) -> set[str]:
    """Ents(y) of one assistant step: its reasoning and every tool call."""
    found = prose_entities(content or "")
    for call in tool_calls:
        function = call.get("function", call)
        assert isinstance(function, dict)
        found |= call_entities(str(function.get("name", "")), function.get("arguments") or "{}")  # type: ignore[arg-type]
    return found
