"""Known native dependencies: the names a commit's lock files and manifests give, per room, matched
against `known.toml` (plus `eras.native_packages`) to the Debian packages their builds need."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterable
from importlib.resources import files

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from prchain.environments.eras.manifests import Snapshot

Table = dict[str, dict[str, list[str]]]
ROOMS = ("rust", "python", "node", "go")  # the sections of the table


def shipped() -> Table:
    """The table shipped with prchain (`known.toml` beside this module)."""
    text = files("prchain.environments.eras.native").joinpath("known.toml").read_text()
    return {room: dict(names) for room, names in tomllib.loads(text).items()}


def table(additions: Table) -> Table:
    """The shipped table with a user's additions (`eras.native_packages`): an entry there replaces
    the shipped one of the same name; an empty list removes it."""
    merged = shipped()
    for room, names in additions.items():
        merged.setdefault(room, {}).update(names)
    if "python" in merged:  # compared normalized, as the index and pip compare them
        merged["python"] = {canonicalize_name(k): v for k, v in merged["python"].items()}
    return merged


def needed(snap: Snapshot, known: Table) -> list[tuple[str, list[str]]]:
    """(name, Debian packages) of every known native dependency the commit's manifests name, in
    the table's order (one room per manifest kind; a tree of several rooms gets each)."""
    found: list[tuple[str, list[str]]] = []
    for room, reader in _READERS.items():
        names = set(reader(snap))
        found += [(n, pkgs) for n, pkgs in known.get(room, {}).items() if n in names and pkgs]
    return found


def _named(snap: Snapshot, pattern: str) -> Iterable[tuple[str, str]]:
    return ((p, t) for p, t in snap.files.items() if re.search(pattern, p) and t)


_CARGO_NAME = re.compile(r'^name = "([^"]+)"', re.M)
_LINKS = re.compile(r'^links\s*=\s*"([^"]+)"', re.M)


def rust_names(snap: Snapshot) -> Iterable[str]:
    """Cargo.lock's packages, else every Cargo.toml's dependency keys; the `links =` keys of
    the workspace's own packages either way."""
    locked = snap.text("Cargo.lock")
    for _, text in _named(snap, r"(^|/)Cargo\.toml$"):
        yield from _LINKS.findall(text)
        if not locked:
            yield from _cargo_dependencies(text)
    yield from _CARGO_NAME.findall(locked)


def _cargo_dependencies(text: str) -> Iterable[str]:
    try:
        manifest = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    tables = [manifest, manifest.get("workspace", {}), *manifest.get("target", {}).values()]
    for table in tables:
        for kind in ("dependencies", "dev-dependencies", "build-dependencies"):
            for key, spec in table.get(kind, {}).items():
                yield spec.get("package", key) if isinstance(spec, dict) else key


_LOCK_NAME = re.compile(r'^\s*name = "([^"]+)"', re.M)  # poetry, uv and pdm locks
_REQUIREMENT_FILE = r"(^|/)([^/]*requirements[^/]*|requirements/[^/]+)\.(txt|in)$"


_OWN_NAME = re.compile(r"""^\s*name\s*=\s*['"]?([A-Za-z0-9][\w.-]*)""", re.M)


def python_names(snap: Snapshot) -> Iterable[str]:
    """Distributions of the lock files, requirements files and `pyproject.toml`, normalized, and
    the project's own name (a project that is a known native package, pycurl/pycurl, builds the
    same C code its users do)."""
    for path in ("setup.py", "setup.cfg"):
        yield from map(canonicalize_name, _OWN_NAME.findall(snap.text(path))[:1])
    for _, text in _named(snap, r"(^|/)(poetry|uv|pdm)\.lock$"):
        yield from map(canonicalize_name, _LOCK_NAME.findall(text))
    lines = [line for _, t in _named(snap, _REQUIREMENT_FILE) for line in t.splitlines()]
    try:
        project = tomllib.loads(snap.text("pyproject.toml")).get("project", {})
    except tomllib.TOMLDecodeError:
        project = {}
    if isinstance(project.get("name"), str):
        yield canonicalize_name(project["name"])
    lines += project.get("dependencies", [])
    lines += [line for group in project.get("optional-dependencies", {}).values() for line in group]
    lines += re.findall(r"^\s+([A-Za-z][\w.-]*\s*[<>=!~;\[]?.*)$", _setup_cfg_requires(snap), re.M)
    for line in lines:
        try:
            yield canonicalize_name(Requirement(line.split("#")[0].strip()).name)
        except InvalidRequirement:
            continue


def _setup_cfg_requires(snap: Snapshot) -> str:
    found = re.search(r"^install_requires\s*=\s*\n((?:[ \t]+.*\n?)+)", snap.text("setup.cfg"), re.M)
    return found.group(1) if found else ""


_YARN_ENTRY = re.compile(r'^"?(@?[^@\s",]+)@', re.M)
_PNPM_ENTRY = re.compile(r"^\s+'?/?(@?[^@\s'(]+)@", re.M)


def node_names(snap: Snapshot) -> Iterable[str]:
    """Packages of the npm, yarn and pnpm lock files and of every package.json's dependencies,
    and every package.json's own name (Automattic/node-canvas is the `canvas` addon itself); a
    root `binding.gyp` (the project builds an addon of its own) is a name of the table too."""
    if "binding.gyp" in snap.paths:
        yield "binding.gyp"
    for path, text in _named(snap, r"(^|/)(package-lock|npm-shrinkwrap|package)\.json$"):
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if path.rsplit("/", 1)[-1] == "package.json" and isinstance(data.get("name"), str):
            yield data["name"]
        for key in data.get("packages", {}):  # lock v2/v3: node_modules/a/node_modules/@s/b
            yield key.rsplit("node_modules/", 1)[-1]
        for kind in ("dependencies", "devDependencies", "optionalDependencies"):
            yield from data.get(kind, {}) if isinstance(data.get(kind), dict) else ()
    for _, text in _named(snap, r"(^|/)yarn\.lock$"):
        yield from _YARN_ENTRY.findall(text)
    for _, text in _named(snap, r"(^|/)pnpm-lock\.yaml$"):
        yield from _PNPM_ENTRY.findall(text)


_GO_REQUIRE = re.compile(r"^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]{2,}/\S+)\s+v\S+", re.M)


def go_names(snap: Snapshot) -> Iterable[str]:
    """Modules every go.mod requires."""
    for _, text in _named(snap, r"(^|/)go\.mod$"):
        yield from _GO_REQUIRE.findall(text)


_READERS: dict[str, Callable[[Snapshot], Iterable[str]]] = {
    "rust": rust_names,
    "python": python_names,
    "node": node_names,
    "go": go_names,
}
