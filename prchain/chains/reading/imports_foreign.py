"""Names a Go, JavaScript/TypeScript or Rust file takes from outside the repository, read from
its imports by the language's Pygments lexer (Python's own are read by `prchain.chains.reading.foreign`).

A call qualified by another package (`schema.AddCqIDs` in a cloudquery plugin importing
`github.com/cloudquery/plugin-sdk/v4/schema`) uses that package's name, not a name a PR of the
repository brought in. Each reader returns (names imported from outside, qualifiers bound to
what is outside): a file's `sdk.X`, `React.X`, `serde::X` then name something foreign.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prchain.chains.reading.string_scan import lexer_text, rust_resumes
from prchain.chains.reading.substance import lexer_for

if TYPE_CHECKING:
    from pygments.lexer import Lexer

_VERSION = re.compile(r"^v\d+$")
# The reserved roots of a Rust path that are the crate's own.
RUST_OWN = frozenset({"crate", "self", "super", "Self"})


@dataclass(frozen=True)
class Own:
    """What the repository's own code is called: its directory and module stems (`own_roots`),
    and the module paths its go.mod files declare."""

    roots: frozenset[str]
    go_modules: tuple[str, ...] = ()


Reader = Callable[[list[tuple[Any, str]], Own], tuple[set[str], set[str]]]


def _tokens(text: str, path: str) -> list[tuple[Any, str]] | None:
    lexer = lexer_for(path)
    if lexer is None or lexer.name not in READERS:
        return None
    if lexer.name == "Rust" and "get_tokens_unprocessed" in vars(lexer):  # driven: it resumes
        return _rust_tokens(text, lexer)
    return [(t, v) for t, v in lexer.get_tokens(text) if v.strip()]


def last_use(text: str) -> int:
    """Where the last `use` token of a Rust text may begin (-1: nowhere): the last "use" that no
    word character follows. Every rule of Pygments' `RustLexer` that can read "use" ends its token
    before a non-word character: a keyword or a name takes the whole word, and a string's,
    comment's or attribute's run of text stops at a quote, a backslash, a `*`, a `/` or a bracket.
    The words "unused", "user" and "used" in a file's last lines (ruff's test modules name rules
    so) made the lexer read on to their end. A word character may stand before one: the string
    `"\\nuse"` is read as a quote, an escape, then "use"."""
    at = text.rfind("use")
    while at >= 0 and at + 3 < len(text) and _word_char(text[at + 3]):
        at = text.rfind("use", 0, at)
    return at


def _word_char(char: str) -> bool:
    """Whether `char` is one that `\\w` matches in a `str` pattern (as the lexer's are)."""
    return char.isalnum() or char == "_"


def _rust_tokens(text: str, lexer: Lexer) -> list[tuple[Any, str]]:
    """The tokens of a Rust file that `read_rust` reads, as lexing it up to the first `;` that
    begins past `last_use` gives them (no `use` token begins later; the lexer's text is the
    file's, newlines made one and a leading BOM dropped, never longer), less runs that hold no
    `use` token. Only windows of the text are lexed, each from where the lexer stands between
    tokens (`rust_resumes`, found by the string scanner's regexes) before a place a `use` token
    may begin (`last_use`'s rule) to the first `;` past it: every `use` token and what follows
    it up to its `;` are there, in order, and `read_rust` reads the same declarations. Lexing
    ruff's files whole up to their last `use` read 17 MB of text, mostly code between the
    imports and a test module's."""
    last = last_use(text)
    text = lexer_text(text)
    resumes = rust_resumes(text, last + 1)
    found: list[tuple[Any, str]] = []
    taken = 0  # where the tokens lexed so far end
    tokens: Iterator[tuple[int, Any, str]] | None = None
    for place in _use_places(text):
        if place < taken:
            continue
        resume = resumes[bisect_right(resumes, place) - 1]
        if tokens is None or resume > taken:
            stack = ("root", "base") if resume else ("root",)
            tokens = lexer.get_tokens_unprocessed(text, stack, resume)  # type: ignore[call-arg]
        for start, kind, value in tokens:
            taken = start + len(value)
            if value.strip():
                found.append((kind, value))
            if value == ";" and start > last:
                return found
            if value == ";" and start > place:
                break
        else:
            return found
    return found


def _use_places(text: str) -> Iterator[int]:
    """Where a `use` token may begin in `text`, in order: each "use" no word character follows."""
    at = text.find("use")
    while at >= 0:
        if at + 3 >= len(text) or not _word_char(text[at + 3]):
            yield at
        at = text.find("use", at + 3)


def _go_package(path: str) -> str:
    """The name a Go import path binds by default: its last element, a major version suffix
    (`/v4`) and a `.vN` or a `go-` part left out (`gopkg.in/yaml.v3` → yaml)."""
    parts = [p for p in path.split("/") if p]
    while len(parts) > 1 and _VERSION.match(parts[-1]):
        parts.pop()
    name = parts[-1].split(".")[0] if parts else ""
    return name.split("-")[-1]


def _go_own(path: str, own: Own) -> bool:
    return any(path == m or path.startswith(m + "/") for m in own.go_modules)


def read_go(tokens: list[tuple[Any, str]], own: Own) -> tuple[set[str], set[str]]:
    """Go imports bind packages only: each foreign import's name is a qualifier, and the keys
    of its types' composite literals are its names."""
    qualifiers: set[str] = set()
    for alias, spec in _go_imports(tokens):
        path = spec.strip('"`')
        if _go_own(path, own) or alias in ("_", "."):
            continue
        qualifiers.add(alias or _go_package(path))
    return _go_fields(tokens, qualifiers), qualifiers


def _go_fields(tokens: list[tuple[Any, str]], qualifiers: set[str]) -> set[str]:
    """The field keys of composite literals of a foreign type (`schema.Table{Name: ...,
    Transform: ...}`): the other package's field names, as Python's keyword arguments are."""
    fields: set[str] = set()
    for at in range(len(tokens) - 3):
        if tokens[at][1] in qualifiers and tokens[at + 1][1] == "." and tokens[at + 3][1] == "{":
            depth, end = 0, at + 3
            for end in range(at + 3, len(tokens)):
                value = tokens[end][1]
                depth += value in ("{", "(", "[")
                depth -= value in ("}", ")", "]")
                if depth == 0:
                    break
                nxt = tokens[end + 1][1] if end + 1 < len(tokens) else ""
                if depth == 1 and value.isidentifier() and nxt == ":":
                    fields.add(value)
    return fields


def _go_imports(tokens: list[tuple[Any, str]]) -> Iterator[tuple[str, str]]:
    """(alias or '', quoted path) of each import spec."""
    at = 0
    while at < len(tokens):
        if tokens[at][1] != "import":
            at += 1
            continue
        at += 1
        grouped = at < len(tokens) and tokens[at][1] == "("
        at += grouped
        alias = ""
        while at < len(tokens) and tokens[at][1] != ")":
            value = tokens[at][1]
            if value.startswith(('"', "`")):
                yield alias, value
                alias = ""
                if not grouped:
                    break
            else:
                alias = value
            at += 1
        at += 1


def _js_own(spec: str, own: Own) -> bool:
    if spec.startswith((".", "/", "~", "@/")):
        return True
    parts = spec.split("/")
    name = parts[1] if spec.startswith("@") and len(parts) > 1 else parts[0]
    return name in own.roots


def read_js(tokens: list[tuple[Any, str]], own: Own) -> tuple[set[str], set[str]]:
    """ES imports (`import X, { a as b } from "m"`, `import * as ns from "m"`) and CommonJS
    requires (`const fs = require("fs")`): named imports are names, a default or namespace
    binding is a qualifier too (`React.useState`)."""
    names: set[str] = set()
    qualifiers: set[str] = set()
    at = 0
    while at < len(tokens):
        value = tokens[at][1]
        if value == "import":
            end = at + 1
            while end < len(tokens) and not _quoted(tokens[end][1]) and tokens[end][1] != ";":
                end += 1
            spec = tokens[end][1] if end < len(tokens) else ""
            if _quoted(spec) and not _js_own(spec[1:-1], own):
                _js_bindings(tokens[at + 1 : end], names, qualifiers)
            at = end
        elif value == "require" and at >= 2 and tokens[at - 1][1] == "=":
            spec = tokens[at + 2][1] if at + 2 < len(tokens) else ""
            if _quoted(spec) and not _js_own(spec[1:-1], own):
                qualifiers.add(tokens[at - 2][1])
        at += 1
    return names, qualifiers


def _quoted(value: str) -> bool:
    return len(value) > 1 and value[0] in "\"'`" and value[-1] == value[0]


def _js_bindings(clause: Sequence[tuple[Any, str]], names: set[str], qualifiers: set[str]) -> None:
    """The names an import clause binds: inside braces named imports, outside a default or
    namespace binding (a qualifier too); with `as`, both names are the package's."""
    braced = False
    for _type, value in clause:
        if value == "{":
            braced = True
        elif value == "}":
            braced = False
        elif value in ("as", ",", "*", "from", "type"):
            continue
        elif value.isidentifier():
            names.add(value)
            if not braced:
                qualifiers.add(value)


def read_rust(tokens: list[tuple[Any, str]], own: Own) -> tuple[set[str], set[str]]:
    """`use` declarations whose root is another crate (`use serde::{Deserialize, Serialize}`):
    the names they import, and the crate's name as a qualifier (`serde_json::to_string`)."""
    names: set[str] = set()
    qualifiers: set[str] = set()
    at = 0
    while at < len(tokens):
        if tokens[at][1] != "use":
            at += 1
            continue
        end = at + 1
        while end < len(tokens) and tokens[end][1] != ";":
            end += 1
        path = [v for _t, v in tokens[at + 1 : end]]
        root = path[0] if path else ""
        if root and root not in RUST_OWN and not _rust_own(root, own):
            qualifiers.add(root)
            names.update(_rust_leaves(path[1:]))
        at = end
    return names, qualifiers


def _rust_own(root: str, own: Own) -> bool:
    return root in own.roots or root.replace("_", "-") in own.roots


def _rust_leaves(path: list[str]) -> set[str]:
    """The names a `use` path brings in: the last segment, each of a `{...}` group, an alias."""
    leaves: set[str] = set()
    for at, value in enumerate(path):
        following = path[at + 1] if at + 1 < len(path) else ";"
        aliased = at > 0 and path[at - 1] == "as"
        if value.isidentifier() and (following in (",", "}", ";", "as") or aliased):
            leaves.add(value)
    return leaves - {"self"}


READERS: dict[str, Reader] = {
    "Go": read_go,
    "JavaScript": read_js,
    "TypeScript": read_js,
    "JSX": read_js,
    "TSX": read_js,
    "Rust": read_rust,
}
# How a qualifier reaches into what it names.
_MEMBER = {"Rust": "::"}


def imported_elsewhere(text: str, path: str, own: Own) -> tuple[set[str], set[str], str]:
    """(foreign names, foreign qualifiers, the member operator) of one file; nothing where no
    reader knows its language."""
    tokens = _tokens(text, path)
    lexer = lexer_for(path)
    if tokens is None or lexer is None:
        return set(), set(), "."
    names, qualifiers = READERS[lexer.name](tokens, own)
    return names, qualifiers, _MEMBER.get(lexer.name, ".")


def go_modules(go_mods: Sequence[str]) -> tuple[str, ...]:
    """The module paths go.mod texts declare (`module github.com/acme/x`)."""
    found = []
    for text in go_mods:
        match = re.search(r"^module\s+(\S+)", text, re.M)
        if match:
            found.append(match.group(1).strip('"'))
    return tuple(found)
