"""Tests a package's default features leave out, and the features that build them.

A test module can be compiled only with a feature: uutils/coreutils declares each utility's tests
in `tests/tests.rs` as `#[cfg(feature = "kill")] #[path = "by-util/test_kill.rs"] mod test_kill;`,
and `kill` is in its `unix` feature set, not in `default`. `cargo test` with the default features
never compiles them, so a stage whose PR adds `kill` tests found none of them in any run
(coreutils #12326: "no test fails before the gold code patch and passes after it"). The stage's
command then names the features (`--features coreutils/kill`), as the project's CI does
(`--features unix`).

A test file is gated when
  - it starts with an inner `#![cfg(feature = "x")]` (an integration test of its own), or
  - its declaration, `mod <name>;` or a `#[path = "<its path>"]` module, in a file of its directory
    or the directory above, carries `#[cfg(feature = "x")]` among the attributes right above it, or
  - it is the path of a `[[test]]` target with `required-features`,
and the feature (a `[features]` key, or an optional dependency's implicit one) is outside what
`default` enables in its package's Cargo.toml (followed through the features it names). A
`cfg(all(…))`, `cfg(any(…))` or `not(…)` is not read: only a plain gate.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from typing import Any

from prchain.environments.eras.rust.report import on_cargo

_GATE = re.compile(r'^#\[cfg\(\s*feature\s*=\s*"([^"]+)"\s*\)\]$')
_INNER_GATE = re.compile(r'^\s*#!\[cfg\(\s*feature\s*=\s*"([^"]+)"\s*\)\]', re.M)
_PATH = re.compile(r'^#\[path\s*=\s*"([^"]+)"\]$')

Read = Callable[[str], str | None]  # a path of the checkout → its text, None when absent
Listing = Callable[[str], list[str]]  # a directory → the .rs files in it (paths of the checkout)


def needed(test_files: Iterable[str], read: Read, listing: Listing) -> list[str]:
    """`package/feature` for each feature a test file needs and its package's default leaves
    off, sorted."""
    found: set[str] = set()
    for path in test_files:
        if not path.endswith(".rs"):
            continue
        package = _package(path, read)
        if package is None:
            continue
        directory, manifest = package
        name = str((manifest.get("package") or {}).get("name") or "")
        on = _defaults(manifest)
        relative = str(PurePosixPath(path).relative_to(directory)) if directory else path
        for feature in _gates(path, relative, manifest, read, listing):
            if name and feature not in on and feature in _features(manifest):
                found.add(f"{name}/{feature}")
    return sorted(found)


def with_features(command: str, features: list[str]) -> str:
    """`command` with `--features a/x,b/y` before its `--` (libtest's own options), if any; none
    under a cargo older than 1.51."""
    if not features:
        return command
    flag = " " + on_cargo("", f"--features {','.join(features)}")
    head, separator, tail = command.partition(" -- ")
    return f"{head}{flag}{separator}{tail}"


def _gates(
    path: str, relative: str, manifest: dict[str, Any], read: Read, listing: Listing
) -> set[str]:
    gates = set(_INNER_GATE.findall(read(path) or ""))
    for target in manifest.get("test") or []:
        if isinstance(target, dict) and target.get("path") == relative:
            gates |= {str(f) for f in target.get("required-features") or []}
    file = PurePosixPath(path)
    stem = file.parent.name if file.name == "mod.rs" else file.stem
    for directory in {file.parent, file.parent.parent}:
        for candidate in listing(str(directory)):
            if candidate != path:
                home = PurePosixPath(candidate).parent
                target = str(file.relative_to(home)) if file.is_relative_to(home) else ""
                gates |= _declared(read(candidate) or "", stem, target)
    return gates


def _declared(text: str, stem: str, target: str) -> set[str]:
    """The feature gates on the declaration of module `stem` (or of the module at `target`)."""
    lines = [line.strip() for line in text.splitlines()]
    declaration = re.compile(rf"^(pub(\([^)]*\))?\s+)?mod\s+{re.escape(stem)}\s*;")
    gates: set[str] = set()
    for i, line in enumerate(lines):
        if not declaration.match(line):
            continue
        above, j, named = [], i - 1, False
        while j >= 0 and lines[j].startswith("#["):
            above.append(lines[j])
            j -= 1
        for attribute in above:
            path = _PATH.match(attribute)
            named = named or bool(path and path.group(1) == target)
        declares = named or not any(_PATH.match(a) for a in above)
        if declares:
            gates |= {g.group(1) for a in above if (g := _GATE.match(a))}
    return gates


def _package(path: str, read: Read) -> tuple[str, dict[str, Any]] | None:
    """(directory, parsed Cargo.toml) of the nearest package above `path`."""
    directory = PurePosixPath(path).parent
    while True:
        where = "" if str(directory) == "." else str(directory)
        text = read(f"{where}/Cargo.toml" if where else "Cargo.toml")
        if text is not None:
            try:
                manifest = tomllib.loads(text)
            except tomllib.TOMLDecodeError:
                manifest = {}
            if "package" in manifest:
                return where, manifest
        if not where:
            return None
        directory = directory.parent


def _features(manifest: dict[str, Any]) -> set[str]:
    """The package's features: its `[features]`, and an optional dependency's implicit one (its
    name: coreutils' `kill` is `uu_kill`, optional, under that name)."""
    found = set(manifest.get("features") or {})
    tables = [manifest.get("dependencies") or {}]
    tables += [t.get("dependencies") or {} for t in (manifest.get("target") or {}).values()]
    for table in tables:
        found |= {n for n, spec in table.items() if isinstance(spec, dict) and spec.get("optional")}
    return found


def _defaults(manifest: dict[str, Any]) -> set[str]:
    """The features `default` turns on, through the features it names (`dep:` and `crate/feat`
    entries turn on no feature of the package's own)."""
    table = manifest.get("features") or {}
    on: set[str] = set()
    todo = list(table.get("default") or [])
    while todo:
        feature = str(todo.pop())
        if feature in on or "/" in feature or feature.startswith("dep:"):
            continue
        on.add(feature)
        todo.extend(table.get(feature) or [])
    return on
