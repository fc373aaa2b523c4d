"""Root's rewrite of the hidden Rust tests' standard macros to names no crate of the agent's reaches.

A hidden unit test under `src/` compiles as a module of the agent's crate, and a hidden integration
test is a crate the agent's library is linked into, so an unqualified `assert_eq!` there resolves
through scopes the agent's code fills (issue 77, round 5):

| the agent writes | reaches a hidden `assert_eq!` through |
| --- | --- |
| `macro_rules! assert_eq { ($($t:tt)*) => {}; }` above `mod tests;` | textual scope, searched before the prelude |
| `#[macro_export] macro_rules! assert_eq`, the test saying `#[macro_use] extern crate geo;` | the `macro_use` prelude, searched before the standard one |
| `extern crate self as core;` (or `as std;`) at its crate root | the extern prelude: `::core::assert_eq!`, `std::assert_eq!` then name the agent's crate |

(A glob `use` of such a macro, and an explicit import of the test's beside a textual one, are
ambiguities rustc rejects: they fail the build, which fails the test.)

So after the gold test patch and before any run, root gives every module of a compiled hidden test
file names of its own for the standard library, `extern crate std as __prchain_std_<r>;` and
`extern crate core as __prchain_core_<r>;` (`extern crate` loads a crate by name from `--extern` or
the sysroot, and no `--extern` of the agent's exists: its Cargo.toml never crosses), and rewrites
each invocation of a standard macro (`MACROS`; unqualified, or under `std::`/`core::`) to
`__prchain_std_<r>::assert_eq!` (`core::…` to the core name). A path's first segment is the
module's own item before any glob import or prelude, and `<r>` is drawn per run, so no macro of
the agent's that a test calls can declare the same name in the test's block. The declarations go
after the module's inner attributes on their line and a rewrite stays on its line: line numbers
(`line!()`, panic locations) do not move; columns on a rewritten line do.

| left alone | why |
| --- | --- |
| string, char and byte literals, comments (doc tests included) | text, not code: `"assert_eq!("` is a test's expectation; doc tests are not judged |
| other paths (`$crate::`, `crate::`, `self::`, `pretty_assertions::`), methods, `my_assert_eq!` | not the standard macro, or the test's own choice |
| a name the file imports by `use` or defines by `macro_rules!` (`use pretty_assertions::assert_eq;`) | the test's own macro; beside an outer `macro_rules!` of the same name rustc calls it ambiguous |
| macros inside attributes, a `stringify!`'s input, a `macro_rules!` matcher | not invocations: rewriting them would change a string or a macro's syntax |
| a file in a data directory (`fixtures/`, `ui/`, `snapshots/`, …), a project under `tests/` with its own `src/`, a file below `tests/<dir>/` with no `main.rs` or `mod.rs` there | not compiled into the tests (fixtures read as text, ui tests compared with compiler output) |

Runs with the image's python3 (3.9 and newer, standard library only): `python3 -I -S qualify.py
FILE...` from the tree's root rewrites those files in place. Also imported by `tests verify`,
which rewrites the gold test patch's files the same way, so gold is judged as it is evaluated.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Callable
from typing import NamedTuple

VERSION = 1  # of the rewrite, in `tests verify`'s recipe: a new one verifies Rust stages again
ROOM = "rust"  # the one room whose hidden tests root rewrites (`applies`)
# The standard library's macros a test can name without a path (the std prelude's), except the
# unstable ones and `try!` (a keyword since 2018).
MACROS = frozenset(
    {
        *("assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq"),
        *("debug_assert_ne", "matches", "panic", "unreachable", "todo", "unimplemented"),
        *("vec", "format", "format_args", "write", "writeln", "print", "println"),
        *("eprint", "eprintln", "dbg", "concat", "stringify", "line", "column", "file"),
        *("module_path", "cfg", "env", "option_env", "include", "include_str"),
        *("include_bytes", "compile_error", "thread_local"),
    }
)
# Directories whose .rs files are data a test reads or hands to a compiler, not test code; the
# second set only below a `tests` directory (`src/data/` is as likely a module of the crate).
DATA_DIRS = frozenset(
    {
        *("fixtures", "fixture", "testdata", "test-data", "test_data", "snapshots", "snapshot"),
        *("ui", "compile-fail", "compile_fail", "run-pass", "run_pass", "run-fail", "corpus"),
        "golden",
    }
)
DATA_DIRS_IN_TESTS = frozenset(
    {"data", "expected", "input", "inputs", "output", "outputs", "samples", "cases", "resources"}
)
# Keywords an expression follows: `return ::std::panic!()` is a leading `::`, not a longer path.
KEYWORDS = frozenset(
    {
        *("return", "break", "in", "if", "else", "match", "while", "let", "mut", "ref", "move"),
        *("yield", "loop", "unsafe", "const", "static", "box", "as", "where", "async"),
    }
)
TARGET_DIRS = ("tests", "benches", "examples")  # cargo's directories of crate roots


class Token(NamedTuple):
    kind: str  # ident, punct, literal, lifetime, comment, inner (an inner doc comment)
    start: int
    end: int
    value: str  # an identifier's name (without `r#`), a punctuation's text


def applies(ecosystem: str | None) -> bool:
    """Whether root rewrites the hidden tests of `ecosystem`'s room: the clean room's seal, the
    Harbor verifier and `tests verify` (whose recipe then names VERSION) ask the same."""
    return ecosystem == ROOM


def source() -> str:
    """This file's text: what root runs in the clean room and the Harbor verifier."""
    with open(__file__, encoding="utf-8") as handle:
        return handle.read()


def aliases(suffix: str) -> tuple[str, str]:
    """The names of std and core a run's files declare."""
    return f"__prchain_std_{suffix}", f"__prchain_core_{suffix}"


def qualified(text: str, suffix: str) -> str:
    """`text` (a Rust file) with its standard macro invocations through this run's names of std
    and core, declared in every module of the file; `text` itself when it invokes none."""
    tokens = tokenize(text)
    code = [t for t in tokens if t.kind not in ("comment", "inner")]
    pairs = _pairs(code)
    edits = _invocations(code, pairs, suffix)
    if not edits:
        return text
    std, core = aliases(suffix)
    declared = f"extern crate std as {std}; extern crate core as {core}; "
    for body in _module_bodies(text, code):
        at, newline = _after_inner_attributes(text, tokens, body)
        lead = "\n" if newline else " " if at and text[at - 1] != "\n" else ""
        edits.append((at, at, lead + declared))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


# ---- the lexer: enough of Rust's to tell code from literals and comments -----------------------


def tokenize(text: str) -> list[Token]:
    """Rust's tokens as far as the rewrite needs them."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            kind = "inner" if text.startswith("//!", i) else "comment"
            tokens.append(Token(kind, i, end, ""))
            i = end
        elif text.startswith("/*", i):
            end = _block_comment_end(text, i)
            kind = "inner" if text.startswith("/*!", i) else "comment"
            tokens.append(Token(kind, i, end, ""))
            i = end
        elif c.isalpha() or c == "_":
            token = _word(text, i)
            tokens.append(token)
            i = token.end
        elif c.isdigit():
            end = i
            while end < n and (text[end].isalnum() or text[end] == "_"):
                end += 1
            tokens.append(Token("literal", i, end, ""))
            i = end
        elif c == '"':
            end = _quoted_end(text, i + 1, '"')
            tokens.append(Token("literal", i, end, ""))
            i = end
        elif c == "'":
            token = _quote(text, i)
            tokens.append(token)
            i = token.end
        elif text.startswith("::", i):
            tokens.append(Token("punct", i, i + 2, "::"))
            i += 2
        else:
            tokens.append(Token("punct", i, i + 1, c))
            i += 1
    return tokens


def _block_comment_end(text: str, i: int) -> int:
    """The end of the (nested) block comment at `i`."""
    depth, j = 0, i
    while j < len(text):
        if text.startswith("/*", j):
            depth, j = depth + 1, j + 2
        elif text.startswith("*/", j):
            depth, j = depth - 1, j + 2
            if depth == 0:
                return j
        else:
            j += 1
    return len(text)


def _quoted_end(text: str, j: int, quote: str) -> int:
    """The end of a literal whose body starts at `j` and ends with `quote` (escapes skipped)."""
    while j < len(text):
        if text[j] == "\\":
            j += 2
        elif text[j] == quote:
            return j + 1
        else:
            j += 1
    return len(text)


def _word(text: str, i: int) -> Token:
    """An identifier at `i`, or the literal it prefixes: raw strings (`r#"…"#`, `br"…"`,
    `cr"…"`), byte and C strings (`b"…"`, `c"…"`), byte chars (`b'x'`); `r#name` is `name`."""
    end = i
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    word, rest = text[i:end], text[end : end + 1]
    if word in ("r", "br", "cr") and rest in ('"', "#"):
        hashes = end
        while hashes < len(text) and text[hashes] == "#":
            hashes += 1
        if text[hashes : hashes + 1] == '"':
            closing = '"' + "#" * (hashes - end)
            found = text.find(closing, hashes + 1)
            return Token("literal", i, len(text) if found < 0 else found + len(closing), "")
        if word == "r" and hashes == end + 1:  # a raw identifier
            raw = _word(text, end + 1)
            return Token("ident", i, raw.end, raw.value)
    if word in ("b", "c") and rest == '"':
        return Token("literal", i, _quoted_end(text, end + 1, '"'), "")
    if word == "b" and rest == "'":
        return Token("literal", i, _quoted_end(text, end + 1, "'"), "")
    return Token("ident", i, end, word)


def _quote(text: str, i: int) -> Token:
    """A char literal (`'x'`, `'\\n'`, `'\\u{1F600}'`) or a lifetime or label (`'a`) at `i`."""
    if text[i + 1 : i + 2] == "\\":
        return Token("literal", i, _quoted_end(text, i + 1, "'"), "")
    if text[i + 2 : i + 3] == "'":
        return Token("literal", i, i + 3, "")
    end = i + 1
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return Token("lifetime", i, end, "") if end > i + 1 else Token("punct", i, i + 1, "'")


# ---- what to rewrite -------------------------------------------------------------------------


def _pairs(code: list[Token]) -> dict[int, int]:
    """Each opening delimiter's index in `code` → its closing one's."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for k, t in enumerate(code):
        if t.kind == "punct" and t.value in "([{":
            stack.append(k)
        elif t.kind == "punct" and t.value in ")]}" and stack:
            pairs[stack.pop()] = k
    return pairs


def _is(code: list[Token], k: int, *values: str) -> bool:
    return 0 <= k < len(code) and code[k].kind in ("punct", "ident") and code[k].value in values


def _skipped(code: list[Token], pairs: dict[int, int]) -> set[int]:
    """Token indices that hold no invocation: attributes, `stringify!`'s input, and the matchers
    of a `macro_rules!` (the group before each `=>` at the top of its body)."""
    skipped: set[int] = set()
    for k, t in enumerate(code):
        group: int | None = None
        if t.value == "#" and t.kind == "punct":
            group = k + 2 if _is(code, k + 1, "!") else k + 1
            if not _is(code, group, "["):
                continue
        elif t.kind == "ident" and t.value == "stringify" and _is(code, k + 1, "!"):
            group = k + 2
        elif t.kind == "ident" and t.value == "macro_rules" and _is(code, k + 1, "!"):
            skipped.update(_matchers(code, pairs, k + 3))
            continue
        if group is not None and group in pairs:
            skipped.update(range(group, pairs[group] + 1))
    return skipped


def _matchers(code: list[Token], pairs: dict[int, int], body: int) -> set[int]:
    """The token indices of the matchers (`(pattern) => {transcriber};`) of the `macro_rules!`
    body that opens at `body`."""
    found: set[int] = set()
    j, end = body + 1, pairs.get(body, body)
    while j < end:
        if j in pairs and _is(code, pairs[j] + 1, "=") and _is(code, pairs[j] + 2, ">"):
            found.update(range(j, pairs[j] + 1))
            transcriber = pairs[j] + 3
            j = pairs.get(transcriber, transcriber) + 1
        else:
            j += 1
    return found


def _own_names(code: list[Token]) -> set[str]:
    """The standard macros' names the file imports (`use x::{assert_eq, …}`, `use y as vec`) or
    defines (`macro_rules! assert_eq`): those invocations are the test's own choice."""
    own: set[str] = set()
    for k, t in enumerate(code):
        defined = k + 2 < len(code) and code[k + 2].kind == "ident"
        if t.kind == "ident" and t.value == "macro_rules" and _is(code, k + 1, "!") and defined:
            own.add(code[k + 2].value)
        if t.kind != "ident" or t.value != "use":
            continue
        j = k + 1
        while j < len(code) and not _is(code, j, ";"):
            u = code[j]
            if u.kind == "ident" and u.value in MACROS and not _is(code, j + 1, "::", "as"):
                own.add(u.value)
            j += 1
    return own & MACROS


def _invocations(
    code: list[Token], pairs: dict[int, int], suffix: str
) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of each invocation of a standard macro to rewrite."""
    std, core = aliases(suffix)
    skipped, own = _skipped(code, pairs), _own_names(code)
    edits = []
    for k, t in enumerate(code):
        if t.kind != "ident" or t.value not in MACROS or t.value in own or k in skipped:
            continue
        if not (_is(code, k + 1, "!") and _is(code, k + 2, "(", "[", "{")):
            continue
        start, crate = t.start, std
        if _is(code, k - 1, "::"):
            if not _is(code, k - 2, "std", "core") or code[k - 2].kind != "ident":
                continue  # another path: the test's own
            if _is(code, k - 3, "::"):
                before = code[k - 4] if k >= 4 else None
                if before is not None and (
                    (before.kind == "ident" and before.value not in KEYWORDS)
                    or before.value in (">", "$")
                ):
                    continue  # `a::std::assert_eq!`: not the standard library
                start = code[k - 3].start
            else:
                start = code[k - 2].start
            crate = core if code[k - 2].value == "core" else std
        elif _is(code, k - 1, ".", "$"):
            continue
        edits.append((start, t.end, f"{crate}::{t.value}"))
    return edits


def _module_bodies(text: str, code: list[Token]) -> list[int]:
    """Where each module's body starts: the file's, and each inline `mod name {` (`mod $m {` in
    a macro's transcriber too)."""
    start = 1 if text.startswith("\ufeff") else 0
    if text.startswith("#!", start) and not text[start + 2 :].lstrip().startswith("["):
        newline = text.find("\n", start)  # a shebang line
        start = len(text) if newline < 0 else newline + 1
    bodies = [start]
    for k, t in enumerate(code):
        if t.kind == "ident" and t.value == "mod":
            name = k + 2 if _is(code, k + 1, "$") else k + 1
            if name < len(code) and code[name].kind == "ident" and _is(code, name + 1, "{"):
                bodies.append(code[name + 1].end)
    return bodies


def _after_inner_attributes(text: str, tokens: list[Token], at: int) -> tuple[int, bool]:
    """Where a module body starting at `at` may take items: after its inner attributes and
    inner doc comments (rustc wants them first); and whether that is after a line comment with no
    newline after it (the declarations then need a line of their own)."""
    k = next((k for k, t in enumerate(tokens) if t.start >= at), len(tokens))
    place = at
    while k < len(tokens):
        t = tokens[k]
        if t.kind == "comment":
            k += 1
        elif t.kind == "inner":
            place, k = t.end, k + 1
            if text.startswith("//", t.start):
                if text[place : place + 1] != "\n":
                    return place, True
                place += 1
        elif t.value == "#" and _is(tokens, k + 1, "!") and _is(tokens, k + 2, "["):
            depth, j = 0, k + 2
            while j < len(tokens):
                if tokens[j].kind == "punct" and tokens[j].value in "[]":
                    depth += 1 if tokens[j].value == "[" else -1
                    if depth == 0:
                        break
                j += 1
            if j >= len(tokens):
                return place, False
            place, k = tokens[j].end, j + 1
        else:
            break
    return place, False


# ---- which files -----------------------------------------------------------------------------


def compiled(path: str, exists: Callable[[str], bool]) -> bool:
    """Whether a hidden `*.rs` file is compiled into the tests as code (rather than read as data
    or handed to a compiler by a test): under a crate's `src/`, a crate root in `tests/`,
    `benches/` or `examples/`, or below `tests/<dir>/` when that directory holds a `main.rs` or
    `mod.rs`; never in a data directory."""
    parts = path.split("/")
    dirs = parts[:-1]
    below = dirs[dirs.index("tests") :] if "tests" in dirs else []
    if any(p in DATA_DIRS for p in dirs) or any(p in DATA_DIRS_IN_TESTS for p in below):
        return False
    if not path.endswith(".rs"):
        return False
    if "src" in dirs:
        at = len(dirs) - 1 - dirs[::-1].index("src")
        return not any(p in TARGET_DIRS for p in dirs[:at])  # not a project a test builds
    for at in range(len(dirs) - 1, -1, -1):
        if dirs[at] in TARGET_DIRS:
            if at == len(dirs) - 1:
                return True
            top = "/".join(parts[: at + 2])
            return exists(f"{top}/main.rs") or exists(f"{top}/mod.rs")
    name = parts[-1]
    return name in ("tests.rs", "test.rs") or name.endswith(("_test.rs", "_tests.rs"))


def rewrite(
    paths: list[str],
    read: Callable[[str], str],
    write: Callable[[str, str], None],
    exists: Callable[[str], bool],
    suffix: str = "",
) -> list[str]:
    """Rewrite each compiled one of `paths` through `read` and `write`, one suffix for all (a
    macro a hidden file defines expands in another's modules); the paths rewritten."""
    suffix = suffix or secrets.token_hex(8)
    done = []
    for path in dict.fromkeys(paths):
        if not (compiled(path, exists) and exists(path)):
            continue
        text = read(path)
        new = qualified(text, suffix)
        if new != text:
            write(path, new)
            done.append(path)
    return done


def _read(path: str) -> str:
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def main(argv: list[str]) -> int:
    """Root's step in the room: rewrite the files named (relative to the working directory);
    a file that is a link, or no UTF-8, is left as it is (rustc reads no such file either)."""

    def exists(path: str) -> bool:
        return os.path.isfile(path) and not os.path.islink(path)

    def read(path: str) -> str:
        try:
            return _read(path)
        except UnicodeDecodeError:
            return ""

    rewrite(argv[1:], read, _write, exists)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
