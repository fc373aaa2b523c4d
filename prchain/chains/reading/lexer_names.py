"""Pygments' lexer for a file name, found from an index of its file-name globs.

`pygments.lexers.find_lexer_class_for_filename` tries every glob of every lexer on the name (about
a thousand `fnmatch` patterns): 1.5 ms a name, and a cold build of ruff asks of 4,400 names.
Nearly all globs are `*.ext` or a whole name, so they are looked up here by the name's endings
and by the name itself; the few others (`*.[ch]pp`, `Makefile.*`) are tried as Pygments tries
them. The matches are then rated as Pygments rates them without code (priority, a half more for a
glob without `*`, then the class's name; the last of a stable sort in Pygments' order wins): the
same class for every name (a test compares them on every name of the mined histories' files).
"""

from __future__ import annotations

import fnmatch
import re
from functools import cache
from typing import NamedTuple

from pygments.lexer import Lexer

_GLOB = re.compile(r"[*?\[]")


class _Glob(NamedTuple):
    order: int  # its place in Pygments' walk over the lexers and their globs
    lexer: str  # the lexer's name (`LEXERS`), or "" for a plugin's class
    glob: str
    plugin: type[Lexer] | None


class _Index(NamedTuple):
    whole: dict[str, list[_Glob]]  # a glob without wildcards: the name itself
    endings: dict[str, list[_Glob]]  # `*` and then no wildcard: what the name ends with
    others: list[tuple[_Glob, re.Pattern[str]]]


@cache
def _index() -> _Index:
    from pygments.lexers import find_plugin_lexers
    from pygments.lexers._mapping import LEXERS

    globs = [
        (name, glob, None)
        for _mod, name, _aliases, names, _types in LEXERS.values()
        for glob in names
    ]
    globs += [("", glob, cls) for cls in find_plugin_lexers() for glob in cls.filenames]
    index = _Index({}, {}, [])
    for order, (name, glob, plugin) in enumerate(globs):
        entry = _Glob(order, name, glob, plugin)
        if not _GLOB.search(glob):
            index.whole.setdefault(glob, []).append(entry)
        elif glob.startswith("*") and not _GLOB.search(glob[1:]):
            index.endings.setdefault(glob[1:], []).append(entry)
        else:
            index.others.append((entry, re.compile(fnmatch.translate(glob))))
    return index


def lexer_class_for_filename(name: str) -> type[Lexer] | None:
    """`find_lexer_class_for_filename(name)` (no code given) of a file's base name."""
    from pygments.lexers import find_lexer_class

    index = _index()
    found = list(index.whole.get(name, ()))
    for at in range(len(name) + 1):
        found += index.endings.get(name[at:], ())
    found += [entry for entry, pattern in index.others if pattern.match(name)]
    if not found:
        return None
    found.sort(key=lambda entry: entry.order)
    classes = [entry.plugin or find_lexer_class(entry.lexer) for entry in found]

    def rating(at: int) -> tuple[float, str]:
        cls, glob = classes[at], found[at].glob
        return cls.priority + (0.5 if "*" not in glob else 0), cls.__name__  # type: ignore[union-attr]

    return classes[sorted(range(len(found)), key=rating)[-1]]
