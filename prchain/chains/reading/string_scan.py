"""The strings that span lines, found without Pygments where a language's lexer can be mirrored.

`substance.string_spans` lexes a file with Pygments only to find the runs of string tokens
(doc comments and char literals are strings to Pygments too) that span lines; on ruff that was
43 s of a cold build's CPU. A scanner here reads the same runs from the same rules: each of the
lexer's states is one ordered alternation (a regex alternation takes its first branch that
matches, as `RegexLexer` takes its first rule), and where a run of tokens can hold no string
(code between strings), one possessive repetition of those rules skips it in a single call. Its
answer is the one Pygments' tokens give, misreadings included (Pygments reads `c: '"'` as a
lifetime and then a string opened, and so does the scanner): the chain builder's decisions stay
as they were. A language without a scanner is lexed as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

# A scanner: the (start, end) offsets of every string token of the text as the lexer reads it
# (`lexer_text`), tokens that touch joined, in order; it may stop at the first token outside a
# string that begins at or after `limit` (the offset of the line past the last asked).
Scanner = Callable[[str, int], list[tuple[int, int]]]


def lexer_text(text: str) -> str:
    """The text as Pygments lexes it (`_preprocess_lexer_input` with `stripnl=False`): no byte
    order mark, every line break a newline, and a newline at the end."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return text if text.endswith("\n") else text + "\n"


def scanned_spans(text: str, scanner: Scanner, until: int | None) -> list[tuple[int, int]]:
    """What `string_spans` reads from the lexer's tokens, from the runs a scanner finds: the
    (first, last) line of every run that spans lines, a run ending in a newline ending on that
    newline's line. With `until`, the runs that begin by that line (and one at the very start)."""
    text = lexer_text(text)
    limit = len(text) + 1 if until is None else _line_start(text, until + 1)
    spans: list[tuple[int, int]] = []
    row, at = 1, 0
    for start, end in scanner(text, limit):
        if start >= limit and start > 0:
            break
        row += text.count("\n", at, start)
        last = row + text.count("\n", start, end) - (text[end - 1] == "\n")
        if last > row:
            spans.append((row, last))
        at = start
    return spans


def _line_start(text: str, line: int) -> int:
    """The offset line `line` (1-based) begins at; past the end where the text is shorter."""
    at = 0
    for _ in range(line - 1):
        at = text.find("\n", at) + 1
        if not at:
            return len(text) + 1
    return at


def scanner_for(lexer_name: str) -> Scanner | None:
    """The scanner that mirrors the named Pygments lexer, or None."""
    return {"Rust": scan_rust, "Go": scan_go}.get(lexer_name)


def _join(runs: list[tuple[int, int]], start: int, end: int) -> None:
    """Add the string token `start`..`end` to the runs: to the last one where it touches it."""
    if runs and runs[-1][1] == start:
        runs[-1] = (runs[-1][0], end)
    else:
        runs.append((start, end))


def _done(runs: list[tuple[int, int]], pos: int, limit: int) -> bool:
    """Whether a scanner may stop at `pos`, where a token begins: at or past the limit, not at
    the very start, and not where a string token would join the run before it."""
    return pos >= limit and pos > 0 and not (runs and runs[-1][1] == pos)


# -- Rust (pygments.lexers.rust.RustLexer) ------------------------------------------------------

_IDENT = r"[a-zA-Z_]\w*"
_CHAR = r"""'(?:\\['"\\nrt]|\\x[0-7][0-9a-fA-F]|\\0|\\u\{[0-9a-fA-F]{1,6}\}|.)'"""
_BYTE_CHAR = r"""b'(?:\\['"\\nrt]|\\x[0-9a-fA-F]{2}|\\0|\\u\{[0-9a-fA-F]{1,6}\}|.)'"""
# The 'lifetime' state: `static`, `_` and names, each leaving the state as it is, until none.
_LIFETIME = r"'(?:static|_|[a-zA-Z_]+\w*)*+"
# Numbers: a float is an integer and this; then 'number_lit' takes a type.
_FLOAT = r"\.[0-9_]+[eE][+\-]?[0-9_]+|\.[0-9_]*(?!\.)|[eE][+\-]?[0-9_]+"
_NUMBER_TYPE = r"(?:[ui](?:8|16|32|64|size)|f(?:32|64))?"
_STRING_BODY = r'[^"\\]*+(?:\\[\s\S][^"\\]*+)*+"?'  # after the `"`: to the closing one, or the end
_DOC_LINE = r"//!.*?\n|///(?:\n|[^/].*?\n)"


@cache
def _rust() -> tuple[re.Pattern[str], ...]:
    """Rust's patterns: the code between strings, one token where that stops, a string's body,
    and the ends of block comments and attributes."""
    from pygments.lexers.rust import RustLexer

    # Their words as Pygments joins them, the group made non-capturing: Python's `re` fails on a
    # capturing group inside a possessive repeat ("the span of capturing group is wrong").
    builtins, types = (
        _uncaptured(w[0].get()) for w in (RustLexer.builtin_funcs_types, RustLexer.keyword_types)
    )
    # The 'typename' state (after `:`, `->`, `struct`...): blanks, `&`, lifetimes, built-in
    # names and types stay in it; a name or anything else leaves it.
    typename = rf"(?:\s+|&|{_LIFETIME}|{builtins}|{types})*+(?:{_IDENT})?"
    # Every rule of 'base' that yields no string, as Pygments would take it where it stands:
    # a rule that may take a position an earlier string rule would take is kept from it.
    # Each branch begins with a character or a class, which `re` tests before trying the branch.
    code = "|".join(
        (
            r"[\s{}()\[\],.;+*%&|<>^!~@=?]+",  # blanks and one-character tokens
            rf"mod\b\s*(?:{_IDENT})?",  # 'modname'
            rf"fn\b\s*(?:{_IDENT})?",  # 'funcname'
            *(rf"{word}\b{typename}" for word in ("struct", "enum", "type", "union")),
            r"default\s+(?:type|fn)\b",
            *(rf"{word}\b\s*(?:'[A-Za-z_]\w*)?" for word in ("break", "continue")),  # a label
            # Keywords and names alike end where the word does; `b'`, `b"`, `r"`, `br#"` may
            # begin strings.
            r"""(?:[ac-qs-zA-Z_]|b(?!['"]|r#*")|r(?!#*"))\w*""",
            rf"0(?:b[01_]+|o[0-7_]+|[xX][0-9a-fA-F_]+){_NUMBER_TYPE}",
            rf"[0-9][0-9_]*(?:{_FLOAT})?{_NUMBER_TYPE}",
            rf"'(?!{_CHAR[1:]}){_LIFETIME[1:]}",
            r"//(?!!|/(?!/)).*\n",  # a comment; `///x` and `//!` are doc comments (strings)
            r"/(?![/*])",
            r"::\b",
            rf":{typename}",
            rf"->{typename}",
            r"-",
            r"\$(?:[a-zA-Z_]\w*|\(,?|\),?|,?)",
            r"#(?!!?\[)",
        )
    )
    token = "|".join(
        (
            rf"(?P<doc>{_DOC_LINE})",
            r"(?P<doc_block>/\*\*(?:\n|[^/*])|/\*!)",
            r"(?P<block>/\*)",
            rf"(?P<char>{_CHAR}|{_BYTE_CHAR})",
            r'(?P<string>b?")',
            r'(?P<raw>b?r(?P<hashes>#*)"(?s:.*?)"(?P=hashes))',
            r"(?P<attribute>#!?\[)",
            rf"(?P<code>{_IDENT})",  # `b`, `r`, `br` whose string did not match
        )
    )
    return (
        re.compile(f"(?:{code})*+", re.MULTILINE),
        re.compile(token, re.MULTILINE),
        re.compile(_STRING_BODY),
        re.compile(r"/\*|\*/"),
        re.compile(r'[^"\]\[]+|"|\[|\]'),
        re.compile(r"#![^[\n].*$", re.MULTILINE),  # a shebang, read at the start only
    )


def _uncaptured(pattern: str) -> str:
    return re.sub(r"\((?!\?)", "(?:", pattern)


def scan_rust(text: str, limit: int, resumes: list[int] | None = None) -> list[tuple[int, int]]:
    """The string runs of Rust text, as `RustLexer` reads them (see `Scanner`). With `resumes`,
    the offsets where the scan stands between tokens are added to it (see `rust_resumes`)."""
    code, token, body, comment, attribute, shebang = _rust()
    runs: list[tuple[int, int]] = []
    found = shebang.match(text)
    pos, size = (found.end() if found else 0), len(text)
    while pos < size:
        if resumes is not None:
            resumes.append(pos)
        pos = code.match(text, pos).end()  # type: ignore[union-attr]  # may match empty
        if pos >= size or _done(runs, pos, limit):
            break
        if resumes is not None:
            resumes.append(pos)
        found = token.match(text, pos)
        kind = found.lastgroup if found else None
        end = found.end() if found else pos + 1  # no rule: one character, an error token
        if kind == "string":
            end = body.match(text, end).end()  # type: ignore[union-attr]
        elif kind == "doc_block" or kind == "block":
            end = _comment_end(text, end, comment)
        elif kind == "attribute":
            end = _attribute_end(text, end, attribute, body, runs)
        if kind in ("doc", "doc_block", "char", "string", "raw"):
            _join(runs, pos, end)
        pos = end
    return runs


def rust_resumes(text: str, limit: int) -> list[int]:
    """Offsets of Rust lexer text (`lexer_text`), in order, where `RustLexer` stands at the start
    of a token in its 'base' state, up to where the scan may stop (`limit`, as `Scanner`'s): where
    a string, a comment or an attribute begins or ends, and the text's start. Lexing from one of
    them with the state stack ('root', 'base') gives the tokens lexing the whole text gives from
    there on (the start: with the stack ('root',), as ever)."""
    resumes = [0]  # before a shebang too, which the scan steps over
    scan_rust(text, limit, resumes)
    return resumes


def _comment_end(text: str, pos: int, marks: re.Pattern[str]) -> int:
    """Where a block comment opened before `pos` ends (comments nest), or the text's end."""
    depth = 1
    for mark in marks.finditer(text, pos):
        depth += 1 if mark.group() == "/*" else -1
        if not depth:
            return mark.end()
    return len(text)


def _attribute_end(
    text: str,
    pos: int,
    parts: re.Pattern[str],
    body: re.Pattern[str],
    runs: list[tuple[int, int]],
) -> int:
    """Where an attribute opened before `pos` ends (brackets nest; its strings are strings)."""
    depth = 1
    while depth and pos < len(text):
        part = parts.match(text, pos)
        assert part is not None  # every character begins one of the parts
        end = part.end()
        if part.group() == '"':
            end = body.match(text, end).end()  # type: ignore[union-attr]
            _join(runs, pos, end)
        elif part.group() == "[":
            depth += 1
        elif part.group() == "]":
            depth -= 1
        pos = end
    return pos


# -- Go (pygments.lexers.go.GoLexer) ------------------------------------------------------------

# GoLexer has one state. None of its rules for code (blanks, names, numbers, operators) takes a
# quote or a backtick, nor a `/` but as an operator's first character: the lexer stands on each of
# them, and tries its rules in their order. A `/` opens a comment (a block comment does not nest,
# and one left open is an operator); a quote opens a rune, a raw string or an interpreted string,
# or, where the literal is left open, is an error token of one character. A rune's `[^\\]` and an
# interpreted string's `[^"\\]` take newlines, as a raw string's `[^`]` does.
_GO_CODE = r"""[^/'"`]++|//.*|/(?:\\\n)?\*[\s\S]*?\*(?:\\\n)?/|/"""
_GO_RUNE = (
    r"""'(?:\\['"\\abfnrtv]|\\x[0-9a-fA-F]{2}|\\[0-7]{1,3}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}"""
    r"""|[^\\])'"""
)
# `"(\\\\|\\[^\\]|[^"\\])*"`: a backslash and any character, or anything but a quote.
_GO_STRING = r'"[^"\\]*+(?:\\[\s\S][^"\\]*+)*+"'


@cache
def _go() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Go's patterns: the code between strings (comments too), and a string where that stops."""
    return (
        re.compile(f"(?:{_GO_CODE})*+"),
        re.compile(f"{_GO_RUNE}|`[^`]*`|{_GO_STRING}"),
    )


def scan_go(text: str, limit: int) -> list[tuple[int, int]]:
    """The string runs of Go text, as `GoLexer` reads them (see `Scanner`)."""
    code, string = _go()
    runs: list[tuple[int, int]] = []
    pos, size = 0, len(text)
    while pos < size:
        pos = code.match(text, pos).end()  # type: ignore[union-attr]  # may match empty
        if pos >= size or _done(runs, pos, limit):
            break
        if found := string.match(text, pos):
            _join(runs, pos, found.end())
            pos = found.end()
        else:
            pos += 1  # a quote or backtick no rule takes: an error token
    return runs
