"""Symbol use: the newer PR's added code or tests use identifiers the older PR introduced.

A PR that calls the function, matches the variant or reads the field another PR added depends on it
even when it rewrites none of its lines (lineage sees nothing then). Evidence that is hard to get by
accident:

1. the identifiers in the older PR's added code lines (a Pygments lexer reads each hunk's added
   lines, so comments and strings do not count; names under 5 characters, single lowercase words,
   test files and a Rust file's test module are skipped);
2. of those, the ones no code held before the older PR (one `git grep -w -E` of all of them at
   its base, prose files such as Markdown left out; a name that stood only in comments or
   strings there was not in the code yet): names the older PR brought into the code, not names
   it merely used;
3. of those, the ones the newer PR's added code or test lines use, not counting the names it
   declares itself (a sibling's own `k_components` uses nothing of the older PR's).

Without a clone step 2 cannot be told, and the answer is 0 (unknown, as good as none). Each PR's
names and each older PR's new names are computed once (one PR is an end of many pairs).
"""

from __future__ import annotations

import copy
import re
import weakref
from collections.abc import Callable, Iterable, Mapping
from contextlib import closing
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from sqlalchemy import select

from prchain.chains.evidence.changes import read_blobs
from prchain.chains.evidence.presence import name_lines, names_in_history
from prchain.chains.reading.foreign import added_text, own_roots, section_foreign
from prchain.chains.reading.generated import generated_text
from prchain.chains.reading.imports_foreign import go_modules
from prchain.chains.reading.patches import (
    file_sections,
    is_test_path,
    section_blobs,
    section_path,
)
from prchain.chains.reading.substance import (
    WHOLE_FILE_LEXERS,
    lexer_for,
    line_spans,
    multiline_strings,
    string_spans,
)
from prchain.core import git
from prchain.core.errors import GitError
from prchain.environments.languages import tests_in_file
from prchain.store.models import PRPatch

if TYPE_CHECKING:
    from pygments.lexer import Lexer
    from sqlalchemy import Engine

    from prchain.chains.evidence.nodes import PRNode

# Names shorter than this are too common to tell one PR's symbol from another's ("Max", "new").
MIN_NAME_CHARS = 5
_NEW_START = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)")
GREP_TIMEOUT = 120.0


class SymbolOracle(Protocol):
    def used(self, newer: PRNode, older: PRNode) -> int: ...


class Block(NamedTuple):
    """One hunk's new side: its text (context and added lines, as they stand in the new file),
    which of its lines (0-based) the diff adds to code and which to tests, and the new file's line
    (1-based) it starts at."""

    path: str
    text: str
    added: frozenset[int]
    first: int = 1
    tested: frozenset[int] = frozenset()


class Names(NamedTuple):
    """The distinctive identifiers of a diff's added lines: those in code, those in tests, and
    those the diff declares (in either; see `lexed_names`)."""

    code: set[str]
    tests: set[str]
    own: set[str]


def added_blocks(
    diff: str,
    tests_from: Callable[[str, str], int | None] | None = None,
    new_text: Callable[[str], str | None] | None = None,
) -> list[Block]:
    """The new side of every hunk that adds lines. The context lines are
    kept for the lexer: a docstring whose closing quotes are context would otherwise run on, and
    read its words as names. A Python hunk may still begin or end inside a string spanning lines
    (networkx #816's begins in a docstring, whose closing quotes then open one: "Kleitman" and
    "Valences" read as names); where one of its lines holds triple quotes, the lines inside such
    strings are blanked, as the new file (`new_text(blob)`, where the clone gives it) has them.

    A test file's added lines are `tested`, not `added`; so are those from the line
    `tests_from(path, blob)` gives on, where the new file (its blob id, from the diff's `index`
    line) holds a test module (a Rust file's `#[cfg(test)] mod tests`). A file whose new text
    marks it generated (`prchain.chains.reading.generated`) adds no block: its names are its generator's."""
    blocks: list[Block] = []
    for section in file_sections(diff):
        path = section_path(section)
        if not path:
            continue
        blobs = section_blobs(section)
        blob = blobs[1] if blobs else ""
        if new_text and blob and generated_text(new_text(blob)):
            continue
        start = 0 if is_test_path(path) else tests_from(path, blob) if tests_from and blob else None
        hunks: list[Block] = []
        lines: list[str] = []
        added: set[int] = set()
        tested: set[int] = set()
        at = first = 0
        for line in [*section.split("\n"), "@@"]:
            if line.startswith("@@"):
                if added or tested:
                    hunks.append(
                        Block(path, "\n".join(lines), frozenset(added), first, frozenset(tested))
                    )
                lines, added, tested = [], set(), set()
                hunk = _NEW_START.match(line)
                at = first = int(hunk.group(1)) if hunk else 0
            elif line.startswith("+") and not line.startswith("+++"):
                (added if start is None or at < start else tested).add(len(lines))
                lines.append(line[1:])
                at += 1
            elif line.startswith(" ") or line == "":
                lines.append(line[1:])
                at += 1
        if new_text and blob and _quoted(path, hunks):
            hunks = _strings_blanked(hunks, new_text(blob))
        blocks.extend(hunks)
    return blocks


def _quoted(path: str, hunks: list[Block]) -> bool:
    """Whether a hunk may begin or end inside a string spanning lines: a Python hunk that holds
    triple quotes, another language's that holds an opener of such a string (a Go raw string's
    or a JS template literal's backtick), or whose lines the lexer reads as code where the file
    may hold one (a hunk inside a Go raw string shows no backtick: any hunk of such a file)."""
    lexer = lexer_for(path)
    if lexer is None:
        return False
    if lexer.name in WHOLE_FILE_LEXERS:
        return any('"""' in b.text or "'''" in b.text for b in hunks)
    return True  # the new file says (`string_spans` reads it only where it holds an opener)


def _strings_blanked(hunks: list[Block], text: str | None) -> list[Block]:
    """The hunks with every line inside a string that spans lines of the new file blanked."""
    if text is None or not hunks:
        return hunks
    last = max(b.first + b.text.count("\n") for b in hunks)  # the hunks' last line
    spans = string_spans(text, lexer_for(hunks[0].path), until=last)
    if not spans:
        return hunks
    inside = {line for first, last in spans for line in range(first, last + 1)}
    return [
        b._replace(
            text="\n".join(
                "" if b.first + i in inside else line for i, line in enumerate(b.text.split("\n"))
            )
        )
        for b in hunks
    ]


# Keywords whose next name is declared there, not used: a PR that declares a name of its own
# (arrow-go #574's local `const maxPreAlloc`, like #557's) uses nothing of another PR's by it.
DECLARING = frozenset(
    {"const", "var", "val", "let", "static", "func", "function", "fn", "def", "class", "struct"}
    | {"enum", "trait", "interface", "type", "union"}
)
VARIABLES = frozenset({"const", "var", "val", "let", "static"})  # of DECLARING: variables
# ... but in the `TYPED` languages these qualify a type (`const ArrowSchema& schema`, Java's
# `static final Layout LAYOUT`): the name after the type declares.
QUALIFIERS = frozenset({"const", "static"})
_MODIFIERS = frozenset({"mut", "ref"})  # between the keyword and its name: `let mut x`
# C's and C++'s type tags name a type where it is used as well (`struct ArrowInterval* out`): the
# name declares only when a body, a base, generics or the statement's end follows.
_TAGS = frozenset({"struct", "enum", "union"})
_TAG_DECLARES = frozenset({"{", ";", ":", "<", "("})
_CALLED = frozenset({"(", "["})  # after a Go receiver: a method's name, then its (type) parameters
# Languages that declare a variable by its type (`List<NameIdentifier> groupIdents = ...`):
# gravitino #10868 declares a local of the name its sibling #10867 declared, and uses nothing
# of it. There a name right after a type declares when an assignment, a statement's end or the
# next parameter follows.
TYPED = frozenset({"Java", "C", "C++", "C#", "Objective-C", "Objective-C++", "Dart", "CUDA"})
_TYPED_DECLARES = frozenset({"=", ";", ":", ",", ")"})
# A pointer or a reference between the type and the name (`QkTranspileLayout *layout = ...`,
# `const Schema& schema`); spaced on both sides it multiplies (`count * factor;`).
_POINTERS = frozenset({"*", "&", "**", "&&"})
# A name read as a member is somebody's field, whatever local variable shares its name
# (arrow-nanoarrow #208 reads #207's `layout.buffer_data_type` beside a local of that name);
# a method the PR defines is its own, called as a member as it must be (bevy #11681's
# `rotate_by`, defined alike by its sibling #11675).
_MEMBER = frozenset({".", "->", "::"})


class _Kind(NamedTuple):
    """What `_Declarations` and `_lexed` ask of a token's type, looked up once per type: the
    hierarchy's `in` is a Python call, asked several times of every token lexed for names."""

    name: bool  # a name, not a builtin
    blank: bool  # white space or a comment
    keyword: bool
    keyword_type: bool
    operator: bool
    punctuation: bool
    function: bool  # a name the lexer marks as a function's


_KINDS: dict[object, _Kind] = {}


def _kind(token: Any) -> _Kind:
    from pygments.token import Comment, Keyword, Name, Operator, Punctuation, Text

    found = _KINDS[token] = _Kind(
        name=token in Name and token not in Name.Builtin,
        blank=token in Text or token in Comment,
        keyword=token in Keyword,
        keyword_type=token in Keyword.Type,
        operator=token in Operator,
        punctuation=token in Punctuation,
        function=token in Name.Function,
    )
    return found


class _Declarations:
    """Reads a lexer's tokens and says which names they declare: the name after a declaring
    keyword (after a type tag, only where a definition follows it), a Go method's name after its
    receiver (`func (m *Map) Grow(`: not an anonymous function's result type), each name of a Go
    group (`const ( a = 1; b = 2 )`), and the names left of Go's `:=`; in `TYPED` languages, a
    name right after a type; in Python, the names a statement assigns (`in_deg, out_deg = ...`:
    networkx #816 and #817, siblings on one issue, name their locals alike) and a `for` loop's."""

    def __init__(self, typed: bool = False, assigns: bool = False) -> None:
        self.typed = typed
        self.assigns = assigns  # Python: a statement's `a, b = ...` and `for a, b in` declare
        self.after_type = False  # the last token may end a type: a name, `int`, `<...>` or `[]`
        self.spaced = False  # whitespace came before this token
        self.pointer = ""  # `*` or `&` after a type: "spaced" when whitespace came before it
        self.angles = 0  # open `<` of a generic type
        self.last = ""  # the last token's text
        self.last_was_name = False
        self.pending = False  # a declaring keyword was read; its name comes next
        self.func = False  # ... and it was `func`, whose receiver may come first
        self.confirm: frozenset[str] = frozenset()  # what must follow the name for it to declare
        self.tentative = ""  # a name read, declared or not by what follows it
        self.depth = 0  # open parentheses of a receiver or a group
        self.group = False  # inside `const (` ... `)`, where each line declares a name
        self.line_start = True
        self.run: list[str] = []  # the names of `a, b` read since the last other token
        self.run_starts = False  # ... and they began a statement (or followed `for`)
        self.after_for = False
        self.variable = False  # the pending keyword declares a variable (`VARIABLES`)
        self.tentative_variable = False
        self.variables: set[str] = set()  # every variable declared so far

    def _ends_type(self, kind: _Kind, value: str, is_name: bool) -> bool:
        """Whether this token may end a type (a name, a builtin type, the `>` closing a generic,
        the `]` of an array type), keeping count of generic brackets: `<` right after a name
        opens one (a comparison has spaces: `a < b`)."""
        was_name, self.last_was_name = self.last_was_name, is_name
        if value == "<" and was_name and not self.spaced:
            self.angles += 1
            return False
        if value in (">", ">>") and self.angles:
            self.angles = max(0, self.angles - len(value))
            return not self.angles
        if value == "]":
            return self.last == "["
        return is_name or kind.keyword_type

    def _assigned(self, value: str) -> bool:
        """Whether this operator declares the names just read: Go's `:=`, or in Python the `=`
        of a statement that began with them, or the `in` of a `for` loop."""
        return value == ":=" or (self.assigns and value in ("=", "in") and self.run_starts)

    def see(self, kind: _Kind, value: str, is_name: bool) -> list[str]:
        if kind.blank:
            self.line_start = self.line_start or "\n" in value
            self.spaced = True
            return []
        declared: list[str] = []
        if self.tentative:
            if value in self.confirm:
                declared.append(self.tentative)
                if self.tentative_variable:
                    self.variables.add(self.tentative)
            self.tentative = ""
        after_type = self.after_type
        multiplies = self.pointer == "spaced" and self.spaced
        self.after_type = self.typed and self._ends_type(kind, value, is_name)
        self.pointer = ""
        if self.typed and after_type and value in _POINTERS and kind.operator:
            self.after_type, self.pointer = True, "spaced" if self.spaced else "tight"
        self.spaced, self.last = False, value
        if self.typed and is_name and after_type and not self.pending and not multiplies:
            self.tentative, self.confirm = value, _TYPED_DECLARES
            self.tentative_variable = True
        elif self.pending and is_name:
            if self.confirm:
                self.tentative, self.tentative_variable = value, False
            else:
                declared.append(value)
                if self.variable:
                    self.variables.add(value)
            self.pending = self.func = False
        elif self.pending and kind.keyword and value in _MODIFIERS:
            pass
        elif self.pending and value == "(" and kind.punctuation:
            self.pending, self.depth = False, 1
            self.group = not self.func  # `func (recv)` names the method after; `const (` a group
            self.line_start = self.group
        elif self.depth and value in ("(", ")") and kind.punctuation:
            self.depth += 1 if value == "(" else -1
            if not self.depth:
                self.pending, self.group = self.func, False
                self.confirm = _CALLED if self.func else frozenset()
        elif self.group and self.depth == 1 and self.line_start and is_name:
            declared.append(value)
            if self.variable:
                self.variables.add(value)
        elif kind.keyword and value in DECLARING and not (self.typed and value in QUALIFIERS):
            self.pending, self.func = True, value == "func"
            self.variable = value in VARIABLES
            self.confirm = _TAG_DECLARES if value in _TAGS else frozenset()
        elif kind.operator and self._assigned(value):
            declared.extend(self.run)
            self.variables.update(self.run)
        elif self.assigns and value == "for" and kind.keyword:
            self.after_for = True
        else:
            self.pending = self.pending and self.depth > 0
        starts_line, self.line_start = self.line_start, False
        if is_name:
            if not self.run:
                self.run_starts, self.after_for = starts_line or self.after_for, False
            self.run.append(value)
        elif value != "," and value != ":=":
            self.run = []
        return declared


def lexed_names(
    text: str, lexer: Lexer | None, only: frozenset[int] | None = None
) -> tuple[set[str], set[str]]:
    """The identifiers a lexer reads as names in `text` (not builtins, keywords, comments or
    strings), and those among them it declares.

    One lowercase word ("graph", "items") is left out: such local names recur by chance, while a
    compound or capitalised name ("reachable_packages", "MarkerTree") is somebody's symbol. A
    declaration is a name a declaring keyword introduces (`def`, `fn`, `func`, `class`, `const`,
    `let`, ...; `_Declarations`), or a function the lexer marks as defined (C's and Java's
    signatures). A variable also read as a member (after `.`, `->` or `::`) is no declaration;
    a function or a type a PR defines is its own however it is called.
    `only`: the lines (0-based) whose names count; the others are read for context."""
    seen = _lexed(text, lexer, only)
    return seen.found, seen.defined - (seen.accessed & seen.variables)


class _Lexed(NamedTuple):
    found: set[str]  # the names on the lines that count
    tests: set[str]  # ... on the test lines
    defined: set[str]  # the names declared on either
    accessed: set[str]  # the names read as a member (`layout.buffer_data_type`)
    variables: set[str]  # the variables declared anywhere


def _lexed(
    text: str,
    lexer: Lexer | None,
    only: frozenset[int] | None,
    tested: frozenset[int] = frozenset(),
) -> _Lexed:
    """The names of `lexed_names`, read on the lines of `only` and apart on those of `tested`."""
    seen = _Lexed(set(), set(), set(), set(), set())
    if lexer is None:
        return seen
    declarations = _Declarations(lexer.name in TYPED, lexer.name in WHOLE_FILE_LEXERS)
    line = 0
    before = ("", "")  # the last two tokens' texts, whitespace left out
    for token, value in lexer.get_tokens(text):
        kind = _KINDS.get(token) or _kind(token)
        is_name = kind.name
        declared = declarations.see(kind, value, is_name)
        counted = only is None or line in only
        if counted or line in tested:
            seen.defined.update(d for d in declared if _distinctive(d))
            if is_name and _distinctive(value):
                (seen.found if counted else seen.tests).add(value)
                if kind.function:
                    seen.defined.add(value)
                if before[1] in _MEMBER or "".join(before) in _MEMBER:  # C's lexer splits `->`
                    seen.accessed.add(value)
        line += value.count("\n")
        before = before if not value.strip() else (before[1], value)
    seen.variables.update(declarations.variables)
    return seen


def _distinctive(name: str) -> bool:
    return (
        len(name) >= MIN_NAME_CHARS
        and name.isidentifier()
        and (not name.islower() or "_" in name.strip("_"))
    )


def code_names(
    diff: str,
    tests_from: Callable[[str, str], int | None] | None = None,
    new_text: Callable[[str], str | None] | None = None,
) -> Names:
    """The identifiers in a diff's added code lines, those in its added test lines (see
    `added_blocks`), and those it declares in either (`lexed_names`)."""
    names = Names(set(), set(), set())
    accessed: set[str] = set()
    variables: set[str] = set()
    for block in added_blocks(diff, tests_from, new_text):
        seen = _lexed(block.text, lexer_for(block.path), block.added, block.tested)
        names.code.update(seen.found)
        names.tests.update(seen.tests)
        names.own.update(seen.defined)
        accessed |= seen.accessed
        variables |= seen.variables
    names.own.difference_update(accessed & variables)
    return names


# Prose, where a name may stand before any code has it: gravitino's design document named
# `MetadataObject.Type.FUNCTION` and the privileges before #10811 brought them into the code.
PROSE = ("md", "markdown", "rst", "txt", "adoc")
PROSE_EXCLUDES = tuple(f":(exclude,glob)**/*.{suffix}" for suffix in PROSE)
_PROSE_ENDINGS = tuple(f".{suffix}" for suffix in PROSE)


def present_at(clone: str, rev: str, names: set[str]) -> set[str] | None:
    """Which of `names` the code at `rev` holds: as a whole word outside comments and strings,
    prose files left out (None if git could not).

    A name that stood only in a comment or a string was not in the code yet: delta-rs #1206
    brought `IsolationLevel` in, which a commented-out sketch named before; iceberg-cpp #746
    brought `SchemaField::initial_default`, which a TODO named. So where a name occurs in at most
    `READ_FILES` files, the lines it stands on are read (`_Read`); a name in more files is taken
    to be in the code.

    One extended regex of all names, not one fixed pattern each: git grep tries every pattern on
    every line, so 250 names took 250 passes (minutes on uv); the alternation takes one (0.5 s)."""
    if not names:
        return set()
    pattern = "(" + "|".join(sorted(names)) + ")"  # identifiers: nothing to escape
    try:
        done = git.run(
            clone, "grep", "-z", "-o", "-n", "-w", "-I", "-E", "-e", pattern, rev,
            "--", ".", *PROSE_EXCLUDES,
            check=False,
            timeout=GREP_TIMEOUT,
        )  # fmt: skip
    except GitError:
        return None
    if done.returncode not in (0, 1):
        return None
    hits: dict[str, dict[str, set[int]]] = {}  # name → file → lines
    # "rev:path\0line\0name\n", once per match: the path as it is (`-z`), not quoted as git
    # quotes a path with a space or a non-ASCII letter.
    hit = re.compile(re.escape(rev.encode()) + rb":([^\0]*)\0(\d+)\0(\w+)\n")
    for raw, line, word in hit.findall(done.stdout):
        path, name = raw.decode(errors="replace"), word.decode()
        if name in names:
            hits.setdefault(name, {}).setdefault(path, set()).add(int(line))
    few = _in_few_files(hits)
    texts = read_blobs(clone, [f"{rev}:{path}" for path in few])
    read = {path: _Read(path, texts.get(f"{rev}:{path}")) for path in few}
    return _in_code(hits, read)


def present_along(clone: str, asked: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """`present_at` of many commits at once (commit → names), read in one walk of the history
    (`prchain.chains.evidence.presence`) rather than one `git grep` of a whole tree per commit. A commit off the
    clone's first-parent history is left out of the answer.

    Consecutive bases mostly hold a name in the same files at the same blobs: each such
    (name, files) is decided once, and each blob read (`_Read`) once, whatever the number of
    bases it stands under. A blob is read, and its lines of the names found, only when a
    decision asks for it: the first file that holds a name in code decides for the others."""
    found = names_in_history(clone, asked, _is_prose, PROSE_EXCLUDES)
    needed: dict[str, set[str]] = {}  # blob → the names whose lines in it may be read
    for where in found.values():
        for name, files in where.items():
            if len(files) <= READ_FILES:
                for blob in files.values():
                    needed.setdefault(blob, set()).add(name)
    texts: dict[str, str | None] = {}  # blob → its text (None: git lacks it), read when asked
    lines: dict[str, dict[str, set[int]]] = {}  # blob → name → the lines that hold it
    reads: dict[tuple[str, str], _Read] = {}  # (path, blob) → the file read
    decided: dict[tuple[str, str, str], bool] = {}  # (name, path, blob) → code there

    with closing(git.CatFile(clone)) as reader:

        def at(name: str, path: str, blob: str) -> bool:
            if (name, path, blob) not in decided:
                if blob not in texts:
                    text = texts[blob] = read_blobs(clone, [blob], reader).get(blob)
                    lines[blob] = {} if text is None else name_lines(text, needed[blob])
                if (path, blob) not in reads:
                    reads[path, blob] = _Read(path, texts[blob])
                on = lines[blob].get(name, set())
                decided[name, path, blob] = reads[path, blob].in_code(name, on)
            return decided[name, path, blob]

        return {
            rev: {name for name, files in where.items() if _stands_in_code(name, files, at)}
            for rev, where in found.items()
        }


def _in_few_files(hits: Mapping[str, Mapping[str, set[int]]]) -> list[str]:
    """The files to read: those holding a name that stands in at most `READ_FILES` files."""
    return sorted({path for files in hits.values() if len(files) <= READ_FILES for path in files})


def _in_code(hits: Mapping[str, Mapping[str, set[int]]], read: Mapping[str, _Read]) -> set[str]:
    """The names of `hits` (name → file → lines) that stand in code (`_stands_in_code`), each file
    of a name in few files `read`."""

    def at(name: str, path: str, lines: set[int]) -> bool:
        return read[path].in_code(name, lines)

    return {name for name, files in hits.items() if _stands_in_code(name, files, at)}


T = TypeVar("T")


def _stands_in_code(name: str, files: Mapping[str, T], at: Callable[[str, str, T], bool]) -> bool:
    """Whether `name`, found in `files` (path → what `at` needs of it), stands in code: in more
    than `READ_FILES` files (none is read), or as code in one of them (`at(name, path, ...)`)."""
    return len(files) > READ_FILES or any(at(name, path, held) for path, held in files.items())


def _is_prose(path: str) -> bool:
    """A prose file, which `present_at`'s grep leaves out (`:(exclude,glob)**/*.md`)."""
    return path.rsplit("/", 1)[-1].endswith(_PROSE_ENDINGS)


# Fewer bases than this in a clone are grepped one by one: a walk of the history costs about what
# `git log -p` of it does (40 s on ruff), a grep of one tree 0.2-0.6 s.
WALK_MIN_BASES = 64

# A name found in more files than this is taken to be in the code without reading them.
READ_FILES = 3


class _Read:
    """A file read to tell whether a name on some of its lines is code.

    Each such line is lexed alone first (`code_words`). A line that reads as code there is taken
    for code, unless it may lie inside a string or comment spanning lines: below the first line
    of a Python triple-quoted string (`multiline_strings`) or, in a language with `/* ... */`
    comments, of such a comment (a plain text scan, which may also see one inside a string).
    Only where no line of the name reads as code that way is the whole file lexed, and it
    decides: a name is never taken for absent on a line read alone. Lexing every such file whole
    cost mypy's build two minutes (`checker.py` and `semanal.py` have 200,000 characters each);
    most names stand on a plain line of code.
    """

    def __init__(self, path: str, text: str | None) -> None:
        self.text = text
        self.lexer = lexer_for(path)

    def in_code(self, name: str, lines: set[int]) -> bool:
        """Whether `name` is code in this file, one of whose `lines` (1-based) holds it. A file
        that cannot be read, or that no lexer reads, is taken to hold it in code."""
        if self.text is None or self.lexer is None:
            return True
        for line in lines:
            row = self._rows[line - 1] if 0 < line <= len(self._rows) else ""
            if not self._maybe_inside(line) and name in _line_code_words(row, self.lexer):
                return True
        return name in self._whole

    @cached_property
    def _rows(self) -> list[str]:
        return (self.text or "").split("\n")

    @cached_property
    def _spans(self) -> list[tuple[int, int]]:
        """Strings and comments spanning lines, as (first, last) line."""
        if self.lexer is not None and self.lexer.name in WHOLE_FILE_LEXERS:
            return multiline_strings(self.text or "")
        if self.lexer is not None and _block_commented(self.lexer):
            return line_spans(self.text or "", _BLOCK_COMMENT.finditer(self.text or ""))
        return []

    @cached_property
    def _whole(self) -> frozenset[str]:
        return _file_code_words(self.text or "", self.lexer) if self.lexer else frozenset()

    def _maybe_inside(self, line: int) -> bool:
        """Whether the line may lie inside a string or comment that began on an earlier line."""
        return any(first < line <= last for first, last in self._spans)


# A `/* ... */` comment as plain text (one left open runs to the end).
_BLOCK_COMMENT = re.compile(r"/\*[\s\S]*?(?:\*/|\Z)")


def _block_commented(lexer: Lexer) -> bool:
    """Whether a language comments in `/* ... */` blocks (a Dockerfile does not)."""
    if lexer.name not in _BLOCK_COMMENTED:
        from pygments.token import Comment

        tokens = [(ttype, text) for ttype, text in lexer.get_tokens("/* a\nb */\n") if text.strip()]
        _BLOCK_COMMENTED[lexer.name] = bool(tokens) and all(t in Comment for t, _ in tokens)
    return _BLOCK_COMMENTED[lexer.name]


_BLOCK_COMMENTED: dict[str, bool] = {}


def code_words(text: str, lexer: Lexer) -> set[str]:
    """The words of a text's code, comments and strings left out."""
    from pygments.token import Comment, String

    words: set[str] = set()
    code: dict[object, bool] = {}  # per token type, looked up once (see `string_spans`)
    for ttype, value in lexer.get_tokens(text):
        if (is_code := code.get(ttype)) is None:
            # A macro is code, though the C lexers file it with comments.
            is_code = code[ttype] = (
                ttype not in Comment or ttype in Comment.Preproc
            ) and ttype not in String
        if is_code:
            words.update(_WORD.findall(value))
    return words


_WORD = re.compile(r"\w+")


@lru_cache(maxsize=1 << 16)
def _line_code_words(row: str, lexer: Lexer) -> frozenset[str]:
    """`code_words` of one line read alone, by its text: the versions of a file under
    consecutive bases share most of their lines, and a name is looked for on the same line of
    each."""
    return frozenset(code_words(row, lexer))


@lru_cache(maxsize=256)
def _file_code_words(text: str, lexer: Lexer) -> frozenset[str]:
    """`code_words` of a whole file, by its text: one version of a file sits under the bases of
    many PRs, and is lexed once."""
    return frozenset(code_words(text, lexer))


class Symbols:
    """Counts the older PR's new identifiers the newer PR uses, reading patches from the store."""

    def __init__(self, engine: Engine, clones: Mapping[int, str | None] | None = None) -> None:
        self.engine = engine
        self.clones = dict(clones or {})
        self._names: dict[int, Names] = {}
        # Per older PR, its code names no code held at its base (its foreign names still in).
        self._new: dict[int, set[str]] = {}
        # Per PR, the foreign names of each file section read so far (`prchain.chains.reading.foreign`), by
        # the section's index in its diff.
        self._foreign_names: dict[int, dict[int, set[str]]] = {}
        self._texts: dict[int, dict[str, str]] = {}  # PR id → its new blobs (one read per PR)
        self._own: dict[str, set[str]] = {}  # clone → the names its own modules go by
        self._go_modules: dict[str, tuple[str, ...]] = {}  # clone → its go.mod module paths
        # One running `git cat-file` per clone reads each PR's new blobs (`_new_texts`), ended
        # with this object (its planning twin shares them).
        self._readers = git.CatFiles()
        weakref.finalize(self, self._readers.close)
        self.grep_calls = 0
        # A planning twin's record of the older PRs whose names at base a pass asks about.
        self._planned: dict[int, PRNode] | None = None

    def planner(self) -> Symbols:
        """A twin that shares this one's caches and runs no `git grep`: it records the older PRs
        a pass asks about (answering that none of their names is new), so that `prefetch` can
        answer them all in one walk of the history beforehand."""
        twin = copy.copy(self)
        twin._planned = {}
        return twin

    @property
    def planned(self) -> list[PRNode]:
        return list((self._planned or {}).values())

    def prefetch(self, olders: Iterable[PRNode]) -> None:
        """Which of each older PR's names are new at its base, for many PRs at once: where a
        clone has at least `WALK_MIN_BASES` bases to ask about, one walk of its history
        (`present_along`) answers them, not one `git grep` each. The answers are those of
        `present_at`, so no decision changes; a base the walk leaves out is grepped when asked."""
        asked: dict[str, dict[str, set[str]]] = {}  # clone → base → names
        todo: list[tuple[PRNode, str, set[str]]] = []
        for older in olders:
            clone = self.clones.get(older.repo_id)
            if older.id in self._new or not clone or not older.base_sha:
                continue
            names = self._code_names(older.id, older.repo_id).code
            if names:
                asked.setdefault(clone, {}).setdefault(older.base_sha, set()).update(names)
                todo.append((older, clone, names))
        answers = {}
        for clone, bases in asked.items():
            if len(bases) >= WALK_MIN_BASES:
                answers[clone] = present_along(clone, bases)
        for older, clone, names in todo:
            present = answers.get(clone, {}).get(older.base_sha or "")
            if present is not None:
                self._new[older.id] = names - present

    def _code_names(self, pr_id: int, repo_id: int) -> Names:
        if pr_id not in self._names:
            with self.engine.connect() as conn:
                diff = conn.scalar(select(PRPatch.diff).where(PRPatch.pr_id == pr_id)) or ""
            clone = self.clones.get(repo_id)
            # The new files a hunk may need to be read in (`_quoted`), in one git call per PR.
            texts = self._new_texts(pr_id, clone, diff) if clone else {}
            self._names[pr_id] = code_names(
                diff,
                (lambda path, blob: _tests_from(texts.get(blob), path)) if clone else None,
                texts.get if clone else None,
            )
        return self._names[pr_id]

    def _uses(self, newer: PRNode) -> set[str]:
        """The names the newer PR's code and tests use (a test that calls the older PR's new
        function needs it: iceberg-go #1432's tests read #1418's `udf.Definition`). Those it
        declares itself are its own, even where the older PR defined one alike (networkx #1415
        writes an approximate `k_components` beside #1414's exact one; lancedb #3551 writes its
        own `compute_min_timestamp`)."""
        names = self._code_names(newer.id, newer.repo_id)
        return (names.code | names.tests) - names.own

    def _new_texts(self, pr_id: int, clone: str, diff: str) -> dict[str, str]:
        """The new blobs of a PR's files that a lexer reads, read once for its names and its
        foreign names."""
        if pr_id not in self._texts:
            self._texts[pr_id] = read_blobs(clone, _new_blobs(diff), self._readers.of(clone))
        return self._texts[pr_id]

    def _new_at_base(self, older: PRNode) -> set[str]:
        """The older PR's code names that no code held at its base (one `git grep` of them all,
        cached; empty: unknown), its foreign names still among them."""
        if older.id not in self._new:
            if self._planned is not None:
                self._planned[older.id] = older
                return set()
            clone = self.clones.get(older.repo_id)
            names = self._code_names(older.id, older.repo_id).code
            found: set[str] = set()
            if clone and older.base_sha and names:
                self.grep_calls += 1
                present = present_at(clone, older.base_sha, names)
                found = set() if present is None else names - present
            self._new[older.id] = found
        return self._new[older.id]

    def introduced(self, older: PRNode, among: set[str] | None = None) -> set[str]:
        """The identifiers the older PR's code brought into the repository (empty: unknown), not
        counting those it took from other packages (`prchain.chains.reading.foreign`); of `among` only, when
        given. Foreign names are read only for the names asked about, from the files whose added
        lines hold one (whole new files lexed: the dearest question, asked last)."""
        found = self._new_at_base(older)
        if among is not None:
            found = found & among
        clone = self.clones.get(older.repo_id)
        return found - self._foreign(older, clone, found) if found and clone else found

    def _foreign(self, pr: PRNode, clone: str, wanted: set[str]) -> set[str]:
        """Those of the `wanted` names the PR's added lines take from other packages. A file's
        imports are read (its whole new text lexed) only where its added lines hold one of them
        as a word: no other file can make one foreign (`prchain.chains.reading.foreign.section_foreign`)."""
        if clone not in self._own:
            listed = git.run(clone, "ls-tree", "-r", "--name-only", "HEAD", check=False)
            paths = listed.text.splitlines() if listed.ok else []
            self._own[clone] = own_roots(paths)
            mods = [f"HEAD:{p}" for p in paths if p.rsplit("/", 1)[-1] == "go.mod"]
            self._go_modules[clone] = go_modules(list(read_blobs(clone, mods).values()))
        with self.engine.connect() as conn:
            diff = conn.scalar(select(PRPatch.diff).where(PRPatch.pr_id == pr.id)) or ""
        texts = self._new_texts(pr.id, clone, diff)
        read = self._foreign_names.setdefault(pr.id, {})
        words = all(_WORD.fullmatch(name) for name in wanted)  # where `\b` finds what `_WORD` reads
        found: set[str] = set()
        for at, section in enumerate(file_sections(diff)):
            if words and not wanted & set(_WORD.findall(added_text(section))):
                continue
            if at not in read:
                own, modules = self._own[clone], self._go_modules[clone]
                read[at] = section_foreign(section, texts.get, own, modules)
            found |= read[at] & wanted
        return found

    def used(self, newer: PRNode, older: PRNode) -> int:
        """How many identifiers the older PR introduced appear in the newer PR's added lines."""
        return len(self._shared(newer, older))

    def shared(self, newer: PRNode, older: PRNode) -> list[str]:
        """The identifiers themselves (for the record), sorted."""
        return sorted(self._shared(newer, older))

    def _shared(self, newer: PRNode, older: PRNode) -> set[str]:
        if not self._new_at_base(older):
            return set()  # nothing new at its base: the newer PR need not be read
        return self.introduced(older, self._uses(newer))


def _tests_from(text: str | None, path: str) -> int | None:
    """Where a source file's own tests start (Rust's test module), read from its new text."""
    tests_at = tests_in_file(path)
    return tests_at(text) if tests_at and text is not None else None


def _new_blobs(diff: str) -> list[str]:
    """The new-side blob ids of a diff's files that a lexer reads."""
    found = []
    for section in file_sections(diff):
        blobs = section_blobs(section)
        if blobs and blobs[1].strip("0") and lexer_for(section_path(section)) is not None:
            found.append(blobs[1])
    return found


def _blob(clone: str, blob: str) -> str | None:
    """A blob's text from the clone (None for the all-zero id of a deleted file, or where git
    could not show it)."""
    if not blob.strip("0"):
        return None
    shown = git.run(clone, "cat-file", "blob", blob, check=False)
    return shown.text if shown.ok else None
