"""Rust's and Go's strings that span lines, found by a scanner (prchain.chains.reading.string_scan), are the ones
Pygments' tokens give (`substance.string_spans` before the scanner), misreadings included: the chain
builder's decisions stay as they were. Each snippet is checked against Pygments for every `until`
and against the spans a reader expects."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from prchain.chains.reading import substance
from prchain.chains.reading.string_scan import lexer_text, scanner_for
from prchain.chains.reading.substance import lexer_for, string_spans

if TYPE_CHECKING:
    from pygments.lexer import Lexer

RUST = lexer_for("lib.rs")
GO = lexer_for("main.go")

RAW = """const TEMPLATE: &str = r##"
[sections]
"quoted" and a "# hash
"##;
let bytes = br#"bytes "inside"
"#;
"""
# Pygments reads the `r` of a raw string after `:` as a type's name, then `"say "` as a string, so
# the raw string's odd quote opens one that runs to the next quote: strings where there are none.
MISREAD_RAW = """let rule = Rule {
    pattern: r#"say "hi"#,
};
let next = "x";
"""
COMMENTS = """let a = r#"x"#;
/* a block /* nested "not a string
*/ still a comment */
/** a doc /* nested */
still the doc */
fn f() {}
"""
DOCS = """//! The crate.
//! More.
/// One.
/// Two.
fn f() -> &'static str { r#"x"# }
impl X {
    /// Three: indented, each line its own string.
    /// Four.
    fn g() {}
}
"""
# `'a` is a lifetime, `'"'` a char literal; but after `:` Pygments reads `'` as a lifetime, so
# `'"'` there opens a string: the real string of lines 6-7 is read as 5-6 and 7-8.
CHARS = """fn f<'a>(x: &'a str) -> char {
    let quote = '"';
    let raw = r#"x"#;
    'outer: loop { break 'outer; }
    Pair { left: '"', right: 'x' };
    "a string
    ends here"
}
"""
BYTES = """let a = b"abc
def";
let b = b'"';
let c = br#"x
"#;
"""
SHEBANG = """#!/usr/bin/env run-cargo-script
#![allow(dead_code)]
#[doc = "an attribute's
string"]
fn main() { let s = r#"x"#; }
"""
CASES = {
    "raw strings with hashes": (RAW, [(1, 4), (5, 6)]),
    "a raw string misread after a colon": (MISREAD_RAW, [(2, 4)]),
    "nested block comments, a doc comment a string": (COMMENTS, [(4, 5)]),
    "doc comments top-level joined, indented apart": (DOCS, [(1, 4)]),
    "lifetimes and char literals": (CHARS, [(5, 6), (7, 8)]),
    "byte strings": (BYTES, [(1, 2), (4, 5)]),
    "a shebang and attributes": (SHEBANG, [(3, 4)]),
}

GO_RAW = """package main

var usage = `Usage: tool [flags]
  -v  "verbose" and 'quiet'
`
var short = `one line`
var query = `SELECT *
FROM t` + "x"
"""
# A backtick inside a comment, an interpreted string or a rune opens nothing; `/*` inside a line
# comment opens no block comment.
GO_TICKS = """// a `tick` in a comment /* and a block opened
s := "a ` tick" + `raw
string`
r := '`'
/* a block comment with ` and " and '
*/ t := `x
y`
"""
# Runes: `'"'` and `'\''` open no string; Pygments' rune is any character but a backslash, a
# newline too, so `'` newline `'` is a string that spans lines (Go has no such rune).
GO_RUNES = """tick := '`'
q, a, n := '"', '\\'', '\\n'
u := '\\u00e9' + '\\x41' + '\\101'
odd := '
'
"""
# Pygments' interpreted string takes newlines, and one left open is a quote alone (an error
# token), the text after it code; a block comment does not nest, `/*/` does not close one, and
# one left open is code.
GO_OPEN = """s := "two
lines" + "an escaped \\" quote"
left := "open
/*/ `not a string
/* still the comment */ u := `a
b`
/* a block comment left open is operators
w := `c
d`
"""
# Tokens that touch are one run: a string, a raw string and a rune.
GO_JOINED = """x := "a"`b
c`'d'
y := `e`
"""
GO_CASES = {
    "raw strings": (GO_RAW, [(3, 5), (7, 8)]),
    "backticks in comments, strings and runes": (GO_TICKS, [(2, 3), (6, 7)]),
    "runes of quotes, a rune of a newline": (GO_RUNES, [(4, 5)]),
    "strings across lines, left open, block comments": (GO_OPEN, [(1, 2), (5, 6), (8, 9)]),
    "touching strings joined": (GO_JOINED, [(1, 2)]),
}


def lexed(text: str, until: int | None = None, lexer: Lexer | None = RUST) -> list[tuple[int, int]]:
    """`string_spans` as it was before the scanner: from Pygments' tokens."""
    scanner = substance.scanner_for
    substance.scanner_for = lambda name: None  # type: ignore[assignment]
    try:
        return string_spans(text, lexer, until)
    finally:
        substance.scanner_for = scanner


def assert_pygments_own(text: str, lexer: Lexer | None, expected: list[tuple[int, int]]) -> None:
    """The scanner's spans are Pygments' and the ones expected, and so for every `until`."""
    assert lexer is not None and scanner_for(lexer.name) is not None
    assert string_spans(text, lexer) == lexed(text, None, lexer) == expected
    for until in range(-1, text.count("\n") + 3):
        assert string_spans(text, lexer, until) == lexed(text, until, lexer), until


@pytest.mark.parametrize("name", CASES)
def test_rust_string_spans_are_pygments_own(name: str) -> None:
    text, expected = CASES[name]
    assert_pygments_own(text, RUST, expected)


@pytest.mark.parametrize("name", GO_CASES)
def test_go_string_spans_are_pygments_own(name: str) -> None:
    text, expected = GO_CASES[name]
    assert_pygments_own(text, GO, expected)


def test_until_keeps_the_strings_begun_by_then_whole() -> None:
    assert string_spans(RAW, RUST, until=1) == [(1, 4)]
    assert string_spans(RAW, RUST, until=4) == [(1, 4)]
    assert string_spans(RAW, RUST, until=5) == [(1, 4), (5, 6)]
    assert string_spans(DOCS, RUST, until=0) == [(1, 4)]  # a string at the very start counts
    assert string_spans(GO_RAW, GO, until=4) == [(3, 5)]
    assert string_spans(GO_RAW, GO, until=6) == [(3, 5)]
    assert string_spans(GO_RAW, GO, until=7) == [(3, 5), (7, 8)]


def test_the_text_is_read_as_pygments_reads_it() -> None:
    """Line breaks of every kind are newlines, a byte order mark is dropped, and a newline ends
    the text: a `\\r\\n` file's lines are the same lines."""
    assert lexer_text("\ufeffa\r\nb\rc") == "a\nb\nc\n"
    crlf = RAW.replace("\n", "\r\n")
    assert string_spans(crlf, RUST) == lexed(crlf) == [(1, 4), (5, 6)]
