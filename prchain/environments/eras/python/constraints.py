"""One constraint set per era: what every manifest asks for, reconciled instead of concatenated.

Projects say what their tests need in several places that drift apart: setup.py's `tests_require`,
tox's deps, requirements files (which include other files with `-r`/`-c`), CI workflows. Installed
together they ask for the impossible (`coverage<5` in tox.ini, `coverage>=7` in the test run's
requirements file). Every line is read here with `packaging` and one requirement per package is
kept, by these rules, in order:

1. the source the test run itself installs wins: the requirements files CI installs (tox's own
   `-r` files and deps when CI runs tox, or when there is no CI), then other test requirements files
   and tox deps, then `tests_require` and anything else;
2. within a source's rank, a pin (`==`) wins over a range;
3. two ranges that some version mentioned in either satisfies are both kept; otherwise the later,
   more specific source wins.

Every line left out is said in the plan's notes, with why. Nested files are read like top-level
ones: the project's own line (`-e .[testutil]`) gives its extras to the project's install, never an
editable build of the tree with the era's setuptools.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from packaging.markers import InvalidMarker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from prchain.environments.eras.manifests import Snapshot

OWN = 3  # a file the test run installs
LISTED = 2  # another test requirements file; tox's deps when tox is the test run
OTHER = 1  # tests_require, tox's deps when CI installs its own files

_COMMENT = re.compile(r"(^|\s+)#.*$")
_NESTED = re.compile(r"^(-r|--requirement|-c|--constraint)\s*=?\s*(\S+)")
_EDITABLE = re.compile(r"^(-e|--editable)\s*=?\s*(\S+)")
OWN_TREE = re.compile(r"^(?:file:)?\./?(?:\[([^\]]*)\])?(?:#egg=\S*)?$")
_UNDATED = re.compile(r"://|^(git|hg|svn|bzr)\+|\s@\s|^\.{1,2}/|^/")


@dataclass(frozen=True)
class Line:
    """One requirement as a manifest says it, and where."""

    text: str
    source: str  # e.g. "requirements/tests.txt", "tox.ini [testenv]", "setup.py tests_require"
    rank: int
    constraint: bool = False  # from a `-c` file: limits a version, asks for no install


@dataclass
class ConstraintSet:
    requirements: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)  # for packages nothing here requires
    extras: list[str] = field(default_factory=list)  # of the project, from `-e .[x]` lines
    notes: list[str] = field(default_factory=list)  # every line left out, and why


@dataclass
class _Chosen:
    req: Requirement
    line: Line
    order: int


def read_file(
    snap: Snapshot, path: str, rank: int, found: ConstraintSet, constraint: bool = False
) -> list[Line]:
    """The requirement lines of `path` and of the files it includes (`-r`, `-c`), in order; the
    project's extras and what is left out go to `found`."""
    return _read(snap, path, rank, found, constraint, set())


def _read(
    snap: Snapshot, path: str, rank: int, found: ConstraintSet, constraint: bool, seen: set[str]
) -> list[Line]:
    if path in seen:
        return []
    seen.add(path)
    lines: list[Line] = []
    for raw in _logical_lines(snap.text(path)):
        nested = _NESTED.match(raw)
        if nested:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(path), nested.group(2)))
            if target not in snap.files:
                found.notes.append(f"{path}: `{raw}` left out ({target} is not in the tree)")
                continue
            is_constraint = constraint or nested.group(1) in ("-c", "--constraint")
            lines += _read(snap, target, rank, found, is_constraint, seen)
            continue
        editable = _EDITABLE.match(raw)
        target = editable.group(2) if editable else raw
        own = OWN_TREE.match(target)
        if own:  # `-e .[testutil]`: the project, installed from the tree with these extras
            found.extras += [e.strip() for e in (own.group(1) or "").split(",") if e.strip()]
            continue
        if editable or _UNDATED.search(raw) or raw.startswith("-"):
            why = "an option" if raw.startswith("-") and not editable else "not from the index"
            found.notes.append(f"{path}: `{raw}` left out ({why})")
            continue
        lines.append(Line(raw, path, rank, constraint))
    return lines


def _logical_lines(text: str) -> list[str]:
    """pip's reading: continuations joined, comments and `--hash` options stripped."""
    joined = re.sub(r"\\\r?\n", " ", text)
    found = []
    for line in joined.splitlines():
        line = _COMMENT.sub("", line)
        line = re.sub(r"\s--hash[=\s]\S+", "", line).strip()
        if line:
            found.append(line)
    return found


def reconcile(lines: list[Line], own_name: str, env: dict[str, str], found: ConstraintSet) -> None:
    """One requirement per package from `lines` into `found` (see the module's rules)."""
    chosen: dict[str, _Chosen] = {}
    own = str(canonicalize_name(own_name)) if own_name else ""
    for order, line in enumerate(lines):
        try:
            req = Requirement(line.text)
        except InvalidRequirement:
            found.notes.append(f"{line.source}: `{line.text}` left out (not a requirement)")
            continue
        name = canonicalize_name(req.name)
        if name == own:
            found.notes.append(f"{line.source}: `{line.text}` left out (the project itself)")
            continue
        if req.marker is not None and not _applies(req, env):
            continue  # for another interpreter or platform: it would not install anyway
        new = _Chosen(req, line, order)
        old = chosen.get(name)
        chosen[name] = new if old is None else _merge(old, new, found)
    requires = {n for n, c in chosen.items() if not c.line.constraint}
    for key, item in chosen.items():
        target = found.requirements if key in requires else found.constraints
        target.append(str(item.req))


def _applies(req: Requirement, env: dict[str, str]) -> bool:
    try:
        return req.marker is None or req.marker.evaluate(env)
    except (InvalidMarker, ValueError, KeyError):
        return True


def _merge(old: _Chosen, new: _Chosen, found: ConstraintSet) -> _Chosen:
    """One requirement for a package two lines name; the loser said in the notes when it asked
    for something the winner does not give."""
    win, lose = (new, old) if _strength(new) >= _strength(old) else (old, new)
    merged = Requirement(str(win.req))
    merged.extras = set(win.req.extras) | set(lose.req.extras)
    keep = _Chosen(merged, _joined(win.line, lose.line), win.order)
    lose_spec, win_spec = lose.req.specifier, win.req.specifier
    if not lose_spec or str(lose_spec) == str(win_spec):
        return keep
    if _compatible(win_spec, lose_spec):
        if _pinned(win_spec):
            return keep  # the pin satisfies the range
        merged.specifier = SpecifierSet(f"{win_spec},{lose_spec}".strip(","))
        return keep
    found.notes.append(
        f"{lose.line.source}: `{lose.line.text}` left out for `{win.line.text}` of "
        f"{win.line.source} ({_why(win, lose)})"
    )
    return keep


def _joined(win: Line, lose: Line) -> Line:
    """A package some source requires is a requirement even when the winner is a constraint."""
    return Line(win.text, win.source, win.rank, win.constraint and lose.constraint)


def _strength(item: _Chosen) -> tuple[int, bool, int]:
    return item.line.rank, _pinned(item.req.specifier), item.order


def _pinned(spec: SpecifierSet) -> bool:
    return any(s.operator in ("==", "===") and "*" not in s.version for s in spec)


def _why(win: _Chosen, lose: _Chosen) -> str:
    if win.line.rank != lose.line.rank:
        return "the test run installs that" if win.line.rank == OWN else "the nearer source wins"
    if _pinned(win.req.specifier) and not _pinned(lose.req.specifier):
        return "a pin wins over a range"
    return "the later, more specific source wins"


def _compatible(a: SpecifierSet, b: SpecifierSet) -> bool:
    """Whether a version either names satisfies both (`>=3` and `<5`: 3 does; `<5` and `>=7`:
    neither 5 nor 7 does)."""
    versions: list[Any] = []
    for spec in (*a, *b):
        try:
            versions.append(Version(spec.version.removesuffix(".*")))
        except InvalidVersion:
            continue
    return any(
        a.contains(v, prereleases=True) and b.contains(v, prereleases=True) for v in versions
    )


def marker_env(version: str) -> dict[str, str]:
    """The environment markers of CPython `version` on Linux (the era image's)."""
    return {
        "python_version": version,
        "python_full_version": f"{version}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
    }
