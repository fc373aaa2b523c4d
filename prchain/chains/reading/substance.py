"""Substance of a stage: changed lines of code, not comments, docstrings, imports, blank lines or
config.

A unified diff only holds the hunks, so each hunk is lexed twice with Pygments (the lexer chosen by
file name): its new side (context and added lines) and its old side (context and removed lines). A
changed line counts when it holds a token that is neither a comment, a docstring nor white space.
Files that are tests, fixtures, documentation, CI, lock or configuration files never count, nor do
stylesheets, markup and shell scripts (`prchain.chains.reading.paths.counts_as_substance`), nor does a Rust
file's test module, nor do generated files and minified lines (`prchain.chains.reading.generated`); a file no lexer
knows counts its non-blank changed lines. A removed line counts half: finding what to remove is
half the work of writing it. A line whose code stays and whose comment changes is no change, nor
is a line that only puts one name for another where the PR renames that name (`renamed`).

Lexing a hunk on its own misreads a hunk that starts inside a long docstring: Python docstrings
span many lines, and a hunk three lines into one reads as code. So where the repository's clone is
at hand, a Python file's whole old and new texts are read (its blobs, named in the diff's `index`
line, read with one `git cat-file --batch` per PR). A hunk that begins or ends inside one of the
file's strings spanning lines is looked up, line by line, in the whole file lexed; any other hunk
lexes alone to the same flags and is lexed alone (`WholeFile`). Other languages mark
documentation per line (`///`, `//`, `#`), which hunks read right.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from prchain.chains.reading.carried import carried_in_patch, flat
from prchain.chains.reading.generated import (
    HEADER_LINES,
    MAX_CODE_LINE_CHARS,
    generated_text,
    marked_generated,
)
from prchain.chains.reading.imports import import_lines, is_import
from prchain.chains.reading.patches import (
    file_sections,
    section_blobs,
    section_path,
)
from prchain.chains.reading.paths import counts_as_substance
from prchain.chains.reading.string_scan import scanned_spans, scanner_for
from prchain.environments.languages import tests_in_file

if TYPE_CHECKING:
    from pygments.lexer import Lexer

    from prchain.chains.evidence.attributes import Attributes


_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
# Lexers whose documentation spans lines a hunk can start inside of (docstrings).
WHOLE_FILE_LEXERS = frozenset({"Python", "Python 2.x", "Cython"})
Blobs = dict[str, str]  # blob id (as the diff abbreviates it) → text
T = TypeVar("T")


@dataclass
class Hunk:
    """One hunk as its two sides; `added`/`removed` are indexes of changed lines in each side,
    `old_start`/`new_start` the file line numbers of each side's first line. `carried` holds the
    changed lines (as ('+', index) or ('-', index)) that are only re-indented, re-wrapped or
    reformatted (`prchain.chains.reading.carried`)."""

    new: list[str]
    old: list[str]
    added: list[int]
    removed: list[int]
    old_start: int = 1
    new_start: int = 1
    body: list[str] = field(default_factory=list)
    carried: set[tuple[str, int]] = field(default_factory=set)

    def mark_carried(self, positions: set[int]) -> None:
        """Record which lines of the body (by position) are only carried."""
        new_at = old_at = 0
        for pos, line in enumerate(self.body):
            mark = line[:1]
            if pos in positions and mark in "+-":
                self.carried.add((mark, old_at if mark == "-" else new_at))
            if mark != "+":
                old_at += 1
            if mark != "-":
                new_at += 1

    def changed(self, side: str) -> list[int]:
        """Indexes of the lines one side changes ('+': added, '-': removed), carried ones left out."""
        lines = self.added if side == "+" else self.removed
        return [i for i in lines if (side, i) not in self.carried]


@lru_cache(maxsize=1 << 16)
def _lexer(name: str) -> Lexer | None:
    """The Pygments lexer for a file name (by name and extension), or None when none fits:
    `get_lexer_for_filename`'s, found from an index of the globs (`prchain.chains.reading.lexer_names`). ruff's
    PRs name more than 512 distinct files, and a smaller cache made the lookup a tenth of the
    time spent reading their names."""
    from prchain.chains.reading.lexer_names import lexer_class_for_filename
    from prchain.chains.reading.lexing import drive

    found = lexer_class_for_filename(name)
    return drive(found(stripnl=False, stripall=False, ensurenl=True)) if found else None


# Suffixes of sources a build step expands: "loops.c.src" is C with template markers (numpy),
# "config.h.in" a header with placeholders.
TEMPLATE_SUFFIXES = (".src", ".in")


def lexer_for(path: str) -> Lexer | None:
    name = path.rsplit("/", 1)[-1]
    stem, dot, suffix = name.rpartition(".")
    if dot and f".{suffix}" in TEMPLATE_SUFFIXES and "." in stem.strip("."):
        return _lexer(stem) or _lexer(name)
    return _lexer(name)


def hunks(section: str) -> Iterator[Hunk]:
    """The hunks of one file section of a unified diff."""
    current: Hunk | None = None
    for line in section.split("\n"):
        if line.startswith("@@"):
            if current is not None:
                yield current
            numbers = _HUNK.match(line)
            old, new = (int(numbers.group(1)), int(numbers.group(2))) if numbers else (1, 1)
            current = Hunk([], [], [], [], old, new)
        elif current is None or line.startswith("\\"):
            continue  # the file header, or "\ No newline at end of file"
        elif line.startswith("+"):
            current.added.append(len(current.new))
            current.new.append(line[1:])
            current.body.append(line)
        elif line.startswith("-"):
            current.removed.append(len(current.old))
            current.old.append(line[1:])
            current.body.append(line)
        elif line.startswith(" ") or line == "":
            current.new.append(line[1:])
            current.old.append(line[1:])
            current.body.append(" " + line[1:])
    if current is not None:
        yield current


def code_line_flags(lines: list[str], lexer: Lexer | None) -> list[bool]:
    """For each line: does it hold code (a token that is not comment, docstring or white space)?"""
    if lexer is None:
        return [bool(line.strip()) for line in lines]
    flags = [False] * len(lines)
    row = 0
    for ttype, value in lexer.get_tokens("\n".join(lines) + "\n"):
        if _is_code(ttype) and value.strip():
            flags[min(row, len(lines) - 1)] = True
            # A multi-line token (a plain string) makes every line it spans code.
            for extra in range(1, value.rstrip("\n").count("\n") + 1):
                flags[min(row + extra, len(lines) - 1)] = True
        row += value.count("\n")
    return flags


def evidence_line_flags(lines: list[str], lexer: Lexer | None) -> list[bool]:
    """For each line: does it hold code another PR can build on? Unlike `code_line_flags`, a
    string literal is no such code, in any language: a line inside a Go raw string, a JS template
    literal or any string spanning lines, and a line of nothing but strings and punctuation
    (`"connection refused",`), hold none (cloudquery's SQL in a Go raw string was read as code
    a later PR rewrote). A name inside a template's `${...}` is code."""
    return EvidenceFlags(lines, lexer).upto(len(lines))


class EvidenceFlags:
    """`evidence_line_flags` of a file, lexed only as far as the lines asked about: a flag is
    final once the lexer has passed its line (a token sets the flag of the line it starts on),
    and the token stream is resumed where it stopped when a later line is asked. Lineage asks of
    a few lines of a file: on ruff, lexing whole files for them took a tenth of the build. With
    no lexer, every line that is not blank is evidence."""

    def __init__(self, lines: list[str], lexer: Lexer | None) -> None:
        self._row = 0  # the line the next token starts on (0-based)
        self._tokens: Iterator[tuple[Any, str]] | None = None
        if lexer is None:
            self.flags = [bool(line.strip()) for line in lines]
            return
        self.flags = [False] * len(lines)
        self._tokens = lexer.get_tokens("\n".join(lines) + "\n")

    def upto(self, count: int) -> list[bool]:
        """The flags, final for the first `count` lines at least."""
        from pygments.token import Comment, Punctuation, String, Text, Whitespace

        flags, last = self.flags, len(self.flags) - 1
        while self._tokens is not None and self._row < count:
            token = next(self._tokens, None)
            if token is None:
                self._tokens = None
                break
            ttype, value = token
            if (evidence := _EVIDENCE.get(ttype)) is None:
                inert = ttype in String or ttype in Punctuation or ttype in Text
                inert = inert or ttype in Whitespace
                comment = ttype in Comment and ttype not in Comment.Preproc
                evidence = _EVIDENCE[ttype] = not inert and not comment
            if evidence and value.strip():
                flags[min(self._row, last)] = True
            self._row += value.count("\n")
        return flags


# Per token type, whether a token of it is code (`code_line_flags`) and evidence
# (`evidence_line_flags`): the hierarchy's `in` is a Python call, asked of every token of every
# file lexed, and there are a few hundred types.
_CODE: dict[object, bool] = {}
_EVIDENCE: dict[object, bool] = {}


# Where a file holds none of its language's openers, no string of it spans lines (a language's
# plain strings may too, where it allows a raw newline in them, as Rust does: those are read as
# code, as before). A backtick opens a string only in Go and JavaScript's family: elsewhere (a
# Rust doc comment's `name`) it would make every file be lexed whole for nothing.
STRING_OPENERS = ('"""', "'''", 'r#"', 'R"(', '@"')
BACKTICK_STRINGS = frozenset({"Go", "JavaScript", "TypeScript", "JSX", "TSX", "Kotlin"})


def string_openers(lexer: Lexer | None) -> tuple[str, ...]:
    """What may open a string spanning lines in `lexer`'s language."""
    tick = ("`",) if lexer is not None and lexer.name in BACKTICK_STRINGS else ()
    return STRING_OPENERS + tick


def string_spans(text: str, lexer: Lexer | None, until: int | None = None) -> list[tuple[int, int]]:
    """(first, last) line (1-based) of every string literal of `text` that spans lines: Python's
    triple-quoted strings by a plain scan, Rust's and Go's by a scanner that reads what their
    Pygments lexer reads (`string_scan.py`), another language's by its lexer (JS template
    literals, Kotlin's and Java's text blocks). With `until`, the lexer (or scanner) stops at the
    first token past that line outside a string: every string that begins by then is found whole,
    and the rest of the file, which a hunk that ends there never needs, is not read (ruff's PRs
    touch files of 400,000 characters)."""
    if lexer is None or lexer.name in WHOLE_FILE_LEXERS:
        return multiline_strings(text)
    if not any(opener in text for opener in string_openers(lexer)):
        return []
    if (scanner := scanner_for(lexer.name)) is not None:
        return scanned_spans(text, scanner, until)
    from pygments.token import String

    spans: list[tuple[int, int]] = []
    row, start, end = 1, 0, 0  # start: first line of the string being read (0: none)
    # A token type's place in the hierarchy, looked up once per type: the test is a Python call
    # per token, and this loop runs over every token of a whole file.
    literal: dict[object, bool] = {}
    for ttype, value in lexer.get_tokens(text):
        if (is_string := literal.get(ttype)) is None:
            is_string = literal[ttype] = ttype in String and ttype not in String.Interpol
        if is_string:
            start = start or row
            # The line it ends on: a token that takes its line's newline with it (Rust's `///`
            # doc comment) ends there, not on the next line, which is code.
            end = row + value.count("\n") - value.endswith("\n")
            row += value.count("\n")
            continue
        if start and end > start:
            spans.append((start, end))
        start = 0
        row += value.count("\n")
        if until is not None and row > until:
            break
    if start and end > start:
        spans.append((start, end))
    return spans


# Comments, then strings, scanned in one pass: a quote inside a comment opens nothing, a `#` inside
# a string is no comment. A triple-quoted string left open runs to the end of the file.
_PY_STRINGS = re.compile(
    r"#[^\n]*"
    r"|(?P<triple>[rRuUbBfFtT]{0,2}(?:\"\"\"[\s\S]*?(?:\"\"\"|\Z)|'''[\s\S]*?(?:'''|\Z)))"
    r"|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
)


@dataclass
class WholeFile:
    """One side of a file, lexed whole only for the hunks that cut through one of its multi-line
    strings: lexing such a hunk alone misreads it (three lines into a docstring it reads as code),
    while a hunk that holds every string it touches lexes alone to the same flags. mypy's
    `checker.py` has 8,000 lines; lexing it whole for every PR that touched it took 20 of the 24
    minutes of a chains build."""

    text: str
    lexer: Lexer | None
    _spans: list[tuple[int, int]] | None = None
    _flags: list[bool] | None = None
    _lines: list[str] | None = None
    _evidence: EvidenceFlags | None = None

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    def cut(self, start: int, count: int) -> bool:
        """Whether lines `start`..`start + count - 1` (1-based) begin or end on a line of a string
        that spans lines. Its first and last lines count as inside: a hunk side read from a diff
        may end in one more empty line than the file has there, so a hunk that seems to end just
        on a string's last line may end inside it (dask #1681's hunk of `core.py`)."""
        if self._spans is None:
            self._spans = multiline_strings(self.text)
        end = start + count - 1
        return any(first <= start <= last or first <= end <= last for first, last in self._spans)

    @property
    def flags(self) -> list[bool]:
        if self._flags is None:
            self._flags = code_line_flags(self.lines, self.lexer)
        return self._flags

    @property
    def evidence_flags(self) -> list[bool]:
        return self._evidence_upto(len(self.lines))

    def _evidence_upto(self, count: int) -> list[bool]:
        """`evidence_line_flags` of the file, final for its first `count` lines at least."""
        if self._evidence is None:
            self._evidence = EvidenceFlags(self.lines, self.lexer)
        return self._evidence.upto(count)

    def line_is_evidence(self, line: int) -> bool:
        """Whether line `line` (1-based) holds code that is evidence of one PR building on
        another: no comment, docstring or string literal (`evidence_line_flags`). A line past the
        end is taken for code."""
        if not 0 < line <= len(self.lines):
            return True
        python = self.lexer is not None and self.lexer.name in WHOLE_FILE_LEXERS
        if python and not self.cut(line, 1):
            return evidence_line_flags([self.lines[line - 1]], self.lexer)[0]
        return self._evidence_upto(line)[line - 1]

    def line_is_code(self, line: int) -> bool:
        """Whether line `line` (1-based) holds code; a line past the end is taken for code. A
        Python line outside every string spanning lines lexes alone; any other line is looked up
        in the whole file lexed (a block comment of another language)."""
        if not 0 < line <= len(self.lines):
            return True
        python = self.lexer is not None and self.lexer.name in WHOLE_FILE_LEXERS
        if python and not self.cut(line, 1):
            return code_line_flags([self.lines[line - 1]], self.lexer)[0]
        return self.flags[line - 1]


def multiline_strings(text: str) -> list[tuple[int, int]]:
    """(first, last) line of every triple-quoted string that spans lines."""
    return line_spans(text, (m for m in _PY_STRINGS.finditer(text) if m.group("triple")))


def line_spans(text: str, matches: Iterable[re.Match[str]]) -> list[tuple[int, int]]:
    """(first, last) line (1-based) of every match in `text` that spans lines."""
    starts = [0] + [newline.end() for newline in re.finditer("\n", text)]
    spans: list[tuple[int, int]] = []
    for match in matches:
        if "\n" in match.group():
            first = bisect_right(starts, match.start())
            spans.append((first, first + match.group().count("\n")))
    return spans


def _whole_file_ids(section: str, lexer: Lexer | None) -> tuple[str, str] | None:
    """(old blob, new blob) of a section worth lexing whole, else None."""
    if lexer is None or lexer.name not in WHOLE_FILE_LEXERS:
        return None
    return section_blobs(section)


def _blob_text(blob: str, blobs: Blobs | None) -> str | None:
    """A blob's text, where the clone gave it (never for the all-zero id of an absent side)."""
    return blobs.get(blob) if blobs and blob.strip("0") else None


def _sides(
    ids: tuple[str, str] | None, blobs: Blobs | None, read: Callable[[str], T]
) -> tuple[T | None, T | None]:
    """`read` of the old and of the new file's text (blob ids as the section's `index` line
    gives them), None for a side the clone did not give."""

    def side(blob: str) -> T | None:
        text = _blob_text(blob, blobs)
        return None if text is None else read(text)

    return (side(ids[0]), side(ids[1])) if ids else (None, None)


def _code(
    whole: WholeFile | None, side: list[str], changed: list[int], start: int, lexer: Lexer | None
) -> list[str]:
    """The changed lines of one hunk side that hold code, as written."""
    if not changed:
        return []
    if whole is None or not whole.cut(start, len(side)):  # the hunk's side lexes on its own
        local = code_line_flags(side, lexer)
        return [side[i] for i in changed if local[i]]
    flags = whole.flags
    return [side[i] for i in changed if 0 <= start - 1 + i < len(flags) and flags[start - 1 + i]]


def section_code_lines(
    section: str,
    blobs: Blobs | None = None,
    moved: frozenset[str] = frozenset(),
    parsed: list[Hunk] | None = None,
) -> tuple[list[str], list[str]]:
    """The changed lines of code in one file section, as (added, removed) lines as written (none
    for a file that never counts); `blobs` holds whole files for the sections `blob_ids` asked
    for; `moved` the texts (`carried.flat`) the diff moves from one place to another and
    `parsed` its hunks with their carried lines marked, neither of which count."""
    path = section_path(section)
    if not path or not counts_as_substance(path):
        return [], []
    lexer = lexer_for(path)
    old_file, new_file = _sides(
        _whole_file_ids(section, lexer), blobs, lambda text: WholeFile(text, lexer)
    )
    pair = section_blobs(section)
    old_imports, new_imports = _sides(pair, blobs, import_lines)
    tests_at = tests_in_file(path)
    old_tests, new_tests = (
        _sides(pair, blobs, lambda text: tests_at(text) or NO_TESTS)
        if tests_at
        else (NO_TESTS, NO_TESTS)
    )
    added_code: list[str] = []
    removed_code: list[str] = []
    for hunk in parsed if parsed is not None else hunks(section):
        added = [i for i in hunk.changed("+") if _written(hunk.new[i], moved)]
        removed = [i for i in hunk.changed("-") if _written(hunk.old[i], moved)]
        added = _not_imports(hunk.new, added, hunk.new_start, new_imports)
        removed = _not_imports(hunk.old, removed, hunk.old_start, old_imports)
        added = _not_tests(hunk.new, added, hunk.new_start, new_tests, tests_at)
        removed = _not_tests(hunk.old, removed, hunk.old_start, old_tests, tests_at)
        added_code += _code(new_file, hunk.new, added, hunk.new_start, lexer)
        removed_code += _code(old_file, hunk.old, removed, hunk.old_start, lexer)
    return added_code, removed_code


def _not_imports(
    side: list[str], changed: list[int], start: int, spans: frozenset[int] | None
) -> list[int]:
    """Those of the `changed` lines of a hunk side that are no import. The lines a long import
    spans are read from the whole file when at hand, else from the hunk, which shows them only
    with the import's first line (bevy #4653 rewrites the imports of eleven files)."""
    if spans is None:
        local = import_lines("\n".join(side))
        inside = {i for i in changed if i + 1 in local}
    else:
        inside = {i for i in changed if start + i in spans}
    return [i for i in changed if i not in inside and not is_import(side[i])]


# A file's tests start past its end: it has no test module.
NO_TESTS = sys.maxsize


def _not_tests(
    side: list[str],
    changed: list[int],
    start: int,
    tests: int | None,
    tests_at: Callable[[str], int | None] | None,
) -> list[int]:
    """Those of the `changed` lines of a hunk side that come before the file's own tests, for a
    language that writes them in its source files (`tests_at`). A unit test written inside a Rust
    source file is a test all the same: bevy #22425 fixes one line and adds a 54-line test to the
    module's `mod test`. Without the whole file, the hunk tells only where it shows the tests'
    start."""
    if tests is None:
        local = tests_at("\n".join(side)) if tests_at else None
        tests = NO_TESTS if local is None else start + local - 1
    return [i for i in changed if start + i < tests]


def _written(line: str, moved: frozenset[str]) -> bool:
    """Whether a changed line is one somebody wrote here: not moved, not minified."""
    return len(line) <= MAX_CODE_LINE_CHARS and flat(line) not in moved


def code_hunks(sections: list[str]) -> dict[int, list[Hunk]]:
    """The hunks of the sections that count as code (by index), their carried lines marked:
    reformatting and moves are read over the whole diff (`prchain.chains.reading.carried`)."""
    found = {
        i: list(hunks(section))
        for i, section in enumerate(sections)
        if (path := section_path(section)) and counts_as_substance(path)
    }
    every = [hunk for parsed in found.values() for hunk in parsed]
    for hunk, positions in zip(every, carried_in_patch([h.body for h in every]), strict=True):
        hunk.mark_carried(positions)
    return found


def moved_texts(parsed: dict[int, list[Hunk]]) -> frozenset[str]:
    """Texts (`carried.flat`) a diff both removes and adds among its code files: lines moved from
    one place or file to another. Short ones too: a stage's lines are counted once per text, so a
    `}`, `else:` or `urls = []` on both sides is no change whether or not it moved with the code
    around it (pip #6913 moves `_sort_locations` out of its class as `group_locations`: its
    `else:` and `)` lines counted twice, 17 lines where the rename and its calls are 7)."""
    sides: dict[str, set[str]] = {"+": set(), "-": set()}
    for hunk in (h for found in parsed.values() for h in found):
        sides["+"].update(flat(hunk.new[i]) for i in hunk.added)
        sides["-"].update(flat(hunk.old[i]) for i in hunk.removed)
    return frozenset(t for t in sides["+"] & sides["-"] if t)


def blob_ids(diff: str) -> list[str]:
    """The blobs read when the clone is at hand: those of the diff's sections that are lexed
    whole, and each code file's new blob, whose first lines may say it is generated."""
    ids: list[str] = []
    for section in file_sections(diff):
        path = section_path(section)
        if path and counts_as_substance(path):
            found = _whole_file_ids(section, lexer_for(path)) or section_blobs(section)
            ids += [b for b in found or () if b.strip("0")]
    return ids


def generated_sections(
    sections: list[str],
    parsed: dict[int, list[Hunk]],
    blobs: Blobs | None,
    attributes: Attributes | None,
) -> set[int]:
    """Indexes of the code sections whose file is generated: by the repository's attributes, or
    by a mark in its first lines (the new blob's, else those a hunk shows)."""
    paths = {i: section_path(sections[i]) or "" for i in parsed}
    marked = attributes.generated(paths.values()) if attributes else set()
    found = set()
    for i, hunk_list in parsed.items():
        ids = section_blobs(sections[i])
        text = (blobs or {}).get(ids[1]) if ids else None
        if text is not None:
            generated = generated_text(text)
        else:  # the lines a hunk shows of the file's top
            head = [
                line for h in hunk_list for line in h.new[: max(0, HEADER_LINES + 1 - h.new_start)]
            ]
            generated = marked_generated(head)
        if paths[i] in marked or generated:
            found.add(i)
    return found


# A line holding none of these has no comment (line or block, in the languages lexed) to strip.
COMMENT_MARKERS = ("#", "//", "/*", "--", "<!--")


@dataclass
class _Side:
    """One side of a PR's code lines: the texts (`carried.flat`) of its changed lines of code,
    each with its line as written and, where the line holds a comment, its code alone
    (`_bare`); and every text the side changes in its code files, carried lines included."""

    written: dict[str, str] = field(default_factory=dict)
    bare: dict[str, str] = field(default_factory=dict)
    every: set[str] = field(default_factory=set)

    @property
    def texts(self) -> set[str]:
        return set(self.written)

    def add(self, lines: Iterable[str], lexer: Lexer | None, every: Iterable[str]) -> None:
        for line in lines:
            text = flat(line)
            self.written.setdefault(text, line)
            if (
                lexer is not None
                and any(marker in line for marker in COMMENT_MARKERS)
                and (code := _bare(line, lexer))
                and flat(code) != text
            ):
                self.bare[text] = code
        self.every.update(flat(line) for line in every)

    def code(self, text: str) -> str:
        """A text's code alone, comments stripped (`carried.flat`)."""
        return flat(self.bare[text]) if text in self.bare else text

    def comment_only(self, other: _Side) -> set[str]:
        """This side's texts that differ from a line of the other side in comments only: a
        comment edited, added or dropped beside code that stays (syn #1356 drops the `///`
        comment closing 101 lines of a macro's input, and writes one line)."""
        theirs = other.every | {other.code(text) for text in other.written}
        return {text for text in self.written if self.code(text) in theirs}

    def left(self, done: set[str]) -> dict[str, str]:
        """The texts not in `done`, each with its code as written (comments stripped)."""
        return {
            text: self.bare.get(text, line)
            for text, line in self.written.items()
            if text not in done
        }


@lru_cache(maxsize=1 << 14)
def _bare(line: str, lexer: Lexer) -> str:
    """A line's code without its comments, lexed alone."""
    return "".join(value for ttype, value in lexer.get_tokens(line) if _is_code(ttype))


def _is_code(ttype: Any) -> bool:
    """Is a token of this type code: neither a comment nor a docstring?"""
    if (code := _CODE.get(ttype)) is None:
        from pygments.token import Comment, String

        # Preprocessor directives (`#define`, `#include`) are code, though the lexers file them
        # under Comment.Preproc.
        comment = ttype in Comment and ttype not in Comment.Preproc
        code = _CODE[ttype] = not comment and ttype not in String.Doc
    return code


_WORD = re.compile(r"\w+|\S")
_NAME_TOKEN = re.compile(r"[A-Za-z_]\w*")
# A name put for another on this many lines is a rename: its definition and a use.
MIN_RENAMED_LINES = 2
MAX_RENAME_TOKENS = 64  # longer lines are looked at for renames no further


def renamed(added: Mapping[str, str], removed: Mapping[str, str]) -> set[str]:
    """The texts of lines, added or removed, that only put one name for another, where the same
    name is put for the same other, and for no other, on at least `MIN_RENAMED_LINES` lines: a
    rename, mechanical work, whatever else the PR does. `prchain.chains.reading.carried` finds an edit repeated
    on three lines or more within the diff; a rename of many names, each defined and used once,
    it cannot: syn #1355 renames 13 punctuation tokens (`Add` to `Plus`, `Colon2` to
    `PathSep`), each on its definition and its macro arm, the lines sorted anew. Both maps give a
    text's line as written (comments stripped)."""
    slots: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for text, line in removed.items():
        for key, name in _name_slots(line):
            slots.setdefault(key, []).append((text, name))
    pairs: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for text, line in added.items():
        for key, name in _name_slots(line):
            for old_text, old_name in slots.get(key, ()):
                if old_name != name:
                    pairs.setdefault((old_name, name), set()).add((old_text, text))
    # A rename puts one name for one other: a name lined up with several (lines of a lone name
    # each, `HPE_CB_body,` beside `HPE_CB_STATUS,`; four builders made one) is no rename.
    olds = Counter(old for old, _ in pairs)
    news = Counter(new for _, new in pairs)
    found: set[str] = set()
    for (old, new), lines in pairs.items():
        if len(lines) >= MIN_RENAMED_LINES and olds[old] == news[new] == 1:
            found.update(text for pair in lines for text in pair)
    return found


def _name_slots(line: str) -> Iterator[tuple[tuple[str, ...], str]]:
    """For each name of a line: the line's tokens with that name blanked wherever it stands, and
    the name. Two lines with one such key in common differ by that name only."""
    words = _WORD.findall(line.replace("'", '"'))
    if len(words) > MAX_RENAME_TOKENS:
        return
    for name in {word for word in words if _NAME_TOKEN.fullmatch(word)}:
        yield tuple("\0" if word == name else word for word in words), name
