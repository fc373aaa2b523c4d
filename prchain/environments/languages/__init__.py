"""What the rest of the pipeline knows of each language, as data its room supplies: the suffixes of
its source files, its lock files, its manifests under other names, the names the setup agent's
prompt gives it, and the version of the chain side's reading of it.

A room's era facts, plans and report reader live under `prchain/environments/eras/<name>/`; its
facts here are one module, `prchain/environments/languages/<name>.py`, that imports nothing of
ours: the code reading of `prchain.chains.reading` (pure: no store, no git) and the clean room's
allow-list read them without loading any room's builder. `LANGUAGES` is the one registry line.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

LANGUAGES = ("python", "rust", "go", "java", "node", "c")
"""The rooms, one word each (`prchain.environments.eras.ecosystems` loads the same names)."""


@dataclass(frozen=True)
class LanguageFacts:
    """One language's facts for the chain side, the clean room and the setup agent."""

    name: str
    source_suffixes: frozenset[str]  # its source files: they cross into the clean room
    lock_files: frozenset[str] = frozenset()  # lower-case names of its package managers' locks
    # Lower-case names of its manifests under other names, whose lines are no code and whose
    # `.sum` twins are locks (Go's `go_test.mod`, `go.work.sum`): a pattern, '' for none.
    module_files: str = ""
    setup_agent: tuple[str, str] = ("", "")  # the setup agent's words: language, registries
    # Its test files' names (a pattern searched in a file's name): the test side of a gold patch.
    test_file_names: str = ""
    # Directories whose files of this language are test side wherever they are, besides the test
    # directories of every language (`prchain.chains.reading.patches.TEST_DIRS`): a pattern
    # searched in a source file's path, '' for none.
    test_dirs: str = ""
    # Where a source file's own tests begin (a line from 1, None: it has none), for a language that
    # writes unit tests inside its source files (Rust's `#[cfg(test)] mod tests`).
    tests_in_file: Callable[[str], int | None] | None = None
    # The version of the chain side's reading of this language's files (lexing, imports, test
    # regions): bump it when that reading changes what it answers, and only the kept evidence of
    # pairs that touch its files is asked again (`prchain.chains.evidence.kept`).
    evidence_version: int = 0


@cache
def language_facts(name: str) -> LanguageFacts:
    """The facts of language `name` (an unknown name lists the valid ones)."""
    if name not in LANGUAGES:
        raise KeyError(f"unknown language {name!r}; known: {', '.join(LANGUAGES)}")
    facts: LanguageFacts = importlib.import_module(f"{__name__}.{name}").FACTS
    return facts


@cache
def all_facts() -> tuple[LanguageFacts, ...]:
    """Every language's facts, in `LANGUAGES` order."""
    return tuple(language_facts(name) for name in LANGUAGES)


@cache
def source_suffixes() -> frozenset[str]:
    """The source suffixes of every language with a room."""
    return frozenset().union(*(f.source_suffixes for f in all_facts()))


@cache
def lock_files() -> frozenset[str]:
    """The lock files of every language with a room (lower-case names)."""
    return frozenset().union(*(f.lock_files for f in all_facts()))


@cache
def module_file() -> re.Pattern[str]:
    """A manifest under another name of any language (`LanguageFacts.module_files`)."""
    return re.compile("|".join(f"(?:{f.module_files})" for f in all_facts() if f.module_files))


@cache
def _by_suffix() -> dict[str, str]:
    return {suffix: f.name for f in all_facts() for suffix in f.source_suffixes}


@cache
def test_file_names() -> str:
    """The test-file names of every language with a room, as one pattern."""
    return "|".join(f"(?:{f.test_file_names})" for f in all_facts() if f.test_file_names)


@cache
def test_dir_paths() -> str:
    """The source files in each language's own test directories (`LanguageFacts.test_dirs`), as
    one pattern searched in a path: its directories, then one of its suffixes at the end."""
    return "|".join(
        f"(?:(?:{f.test_dirs}).*(?:{'|'.join(map(re.escape, sorted(f.source_suffixes)))})$)"
        for f in all_facts()
        if f.test_dirs
    )


def tests_in_file(path: str) -> Callable[[str], int | None] | None:
    """The reader of where `path`'s own tests begin, if its language writes tests inside source
    files (`LanguageFacts.tests_in_file`)."""
    language = language_of(path)
    return language_facts(language).tests_in_file if language else None


def language_of(path: str) -> str | None:
    """The language whose source file `path` is, by its suffix (None: no room's)."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return _by_suffix().get(name[dot:].lower()) if dot > 0 else None
