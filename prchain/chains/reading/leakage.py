"""Which identifiers a gold patch adds or changes, and whether a query names any of them.

A query must say why and where, never the literal names the solution uses, or the agent is
handed the answer. Extraction is deliberately precise: code-shaped names (snake_case, camelCase,
PascalCase, CONSTANTS) on changed lines and hunk headers always count; a plain word counts only
when the patch defines it (`def multiply`, `struct Parser`) and it is not a common word; names
shorter than four characters, dunders, language builtins and documentation files never count.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path, PurePosixPath

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

MIN_LENGTH = 4
DOC_SUFFIXES = frozenset(
    {".md", ".rst", ".txt", ".adoc", ".html", ".svg", ".json", ".lock", ".csv"}
)

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEFINITION = re.compile(
    r"\b(?:def|class|fn|func|function|struct|enum|trait|interface|type|const|let|var|static|mod|module|macro_rules!)"
    r"\s+(?:mut\s+)?([A-Za-z_][A-Za-z0-9_]*)"
)
# Possessive quantifiers: a long annotation (`x:` and a minified tail) must not backtrack.
_ASSIGNMENT = re.compile(r"^\s*+(?:self\.|this\.)?([A-Za-z_][A-Za-z0-9_]*+)\s*+(?::[^=]++)?=(?!=)")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
# Paths and file names are allowed in a query: "crates/ruff/src/rules/mod.rs", "ops.py".
# A pattern like `[\w.-]*/` rescans a long run from every start, so a 3 MB reply took minutes
# (finding 7 of issue 16). Here a match is a maximal run of path characters holding a dot or a
# slash: the lookbehind pins it to the start of a run and possessive quantifiers never give back,
# so each character is looked at a bounded number of times.
_PATH_RUN = re.compile(r"(?<![\w./\-])[\w\-]*+[./][\w./\-]*+")
FILE_SUFFIXES = [
    "py",
    "rs",
    "go",
    "js",
    "ts",
    "tsx",
    "jsx",
    "java",
    "kt",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "rb",
    "toml",
    "yaml",
    "yml",
    "json",
    "md",
]
# A file name inside such a run: pinned to the start of a name, never backtracking.
_FILE_NAME = re.compile(rf"(?<![\w\-])[\w\-]*+\.(?:{'|'.join(FILE_SUFFIXES)})(?![\w])")

# Standard-library names a patch merely uses; naming them is not naming the project's code.
STANDARD_NAMES = frozenset(
    {name for name in dir(builtins)}
    | {
        "HashMap",
        "HashSet",
        "BTreeMap",
        "BTreeSet",
        "VecDeque",
        "String",
        "Option",
        "Result",
        "Some",
        "None",
        "Box",
        "Arc",
        "Rc",
        "RefCell",
        "Mutex",
        "RwLock",
        "Cow",
        "Vec",
        "Default",
        "Debug",
        "Clone",
        "Copy",
        "PartialEq",
        "PartialOrd",
        "Display",
        "Iterator",
        "IntoIterator",
        "FromStr",
        "TryFrom",
        "AsRef",
        "Self",
        "self",
        "JSON",
        "Promise",
        "Array",
        "Object",
        "Error",
        "TODO",
        "FIXME",
        "NOTE",
        "XXX",
        "Optional",
        "Union",
        "Any",
        "List",
        "Dict",
        "Tuple",
        "Callable",
        "Iterable",
        "Sequence",
        "Mapping",
        "TypeVar",
        "Protocol",
        "dataclass",
        "pytest",
        "unittest",
        "typing",
        "__future__",
        "annotations",
    }
)


@cache
def common_words() -> frozenset[str]:
    """Words every codebase and every English sentence share (prchain/chains/reading/common_words.txt)."""
    lines = Path(__file__).with_name("common_words.txt").read_text().splitlines()
    return frozenset(
        line.strip().lower() for line in lines if line.strip() and not line.startswith("#")
    )


def is_code_shaped(name: str) -> bool:
    """snake_case, camelCase, PascalCase with two humps, CONSTANT_CASE or a name with digits."""
    inner = name.strip("_")
    return (
        "_" in inner
        or bool(_CAMEL.search(name))
        or (any(c.isdigit() for c in name) and any(c.isalpha() for c in name))
    )


def is_ignored(name: str) -> bool:
    return (
        len(name) < MIN_LENGTH
        or (name.startswith("__") and name.endswith("__"))
        or name in STANDARD_NAMES
        or is_common(name)
    )


def is_common(name: str) -> bool:
    """A common word, or a plural of one (`mod tests`, `fn checks`): the list holds base forms."""
    word, words = name.lower(), common_words()
    return (
        word in words
        or (word.endswith("s") and word[:-1] in words)
        or (word.endswith("es") and word[:-2] in words)
        or (word.endswith("ies") and word[:-3] + "y" in words)
    )


def _changed_lines(diff: str) -> Iterator[str]:
    """Added and removed lines and hunk headers of non-documentation files."""
    try:
        patch = PatchSet(diff)
    except (UnidiffParseError, UnicodeError):
        yield from _changed_lines_raw(diff)
        return
    for file in patch:
        if PurePosixPath(file.path).suffix.lower() in DOC_SUFFIXES:
            continue
        for hunk in file:
            yield hunk.section_header or ""
            yield from (line.value for line in hunk if line.is_added or line.is_removed)


def _changed_lines_raw(diff: str) -> Iterator[str]:
    """Fallback for diffs unidiff refuses: +/- lines and @@ headers, read line by line."""
    skipping = False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            skipping = PurePosixPath(line.rsplit(" ", 1)[-1]).suffix.lower() in DOC_SUFFIXES
        elif skipping or line.startswith(("+++", "---")):
            continue
        elif line.startswith("@@"):
            yield line.rsplit("@@", 1)[-1]
        elif line.startswith(("+", "-")):
            yield line[1:]


def names_in_line(line: str) -> set[str]:
    defined = set(_DEFINITION.findall(line))
    assigned = _ASSIGNMENT.match(line)
    if assigned:
        defined.add(assigned.group(1))
    shaped = {token for token in _TOKEN.findall(line) if is_code_shaped(token)}
    return {name for name in defined | shaped if not is_ignored(name)}


def changed_identifiers(diffs: Iterable[str]) -> set[str]:
    """Every identifier the given diffs add, remove or change (see the module docstring)."""
    names: set[str] = set()
    for diff in diffs:
        for line in _changed_lines(diff):
            names |= names_in_line(line)
    return names


def find_leaks(text: str, identifiers: Iterable[str]) -> list[str]:
    """The identifiers `text` names as whole words (any case), file paths excepted; sorted."""
    prose = _PATH_RUN.sub(_without_paths, text)
    words = {token.lower() for token in _TOKEN.findall(prose)}
    return sorted(name for name in identifiers if name.lower() in words)


def _without_paths(run: re.Match[str]) -> str:
    """A run of path characters minus its paths (any run with a slash) and file names (x.py)."""
    token = run.group()
    return " " if "/" in token else _FILE_NAME.sub(" ", token)
