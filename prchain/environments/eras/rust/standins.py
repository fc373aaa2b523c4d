"""crates.io stand-ins for a Cargo.lock's git dependencies, laid out as a cargo directory source.

This file runs inside the era build (`python3 - <args> < this file`, Python 3.9 and up: bullseye's)
and is imported by the tests; it uses the standard library only. It is given, as JSON, the git
packages of B_t's Cargo.lock that no local mirror serves, grouped by git source, and the era's
date. For each package it reads crates.io's sparse index (the route cargo itself takes) and, of the
releases not yanked that are semver-compatible with the locked version and not older than it,
takes the newest published by the era's date (the index lines' `pubtime`; a line without one
counts as published by then), else the lowest: a git commit is most like the release nearest its
date, and the git commit of a crate that is released only later is most like that release. The `.crate` is downloaded (its sha256
checked against the index), unpacked into `<out>/<name>-<version>`, and its manifest rewritten so
that cargo accepts it in place of the git package without touching Cargo.lock:

* its version is the locked one (cargo looks the locked version up in the replacing source);
* a dependency on another package of the same git source becomes a path dependency on that
  package's stand-in (the git repository's crates depend on each other by path; crates.io's
  manifests name the registry), with the sibling's locked version;
* a package Cargo.lock lists under the git package but the release does not declare is added at
  its locked version, unused (the git commit used it; without it cargo would rewrite Cargo.lock);
* `.cargo-checksum.json` lists no files and no package checksum (a git package has none in
  Cargo.lock, and cargo refuses a source that now offers one).

A package without such a release stops the build with one `error:` line naming it, the git source
and what crates.io has: the era cannot be built as locked.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sys
import tarfile
import urllib.request
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+.*)?$")
_HEADER = re.compile(r"^\[(.+)\]\s*$")
# Python 3.12+ vets what it extracts ("data"); older ones are vetted above only.
_SAFE: dict[str, Any] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
_DEP_TABLE = re.compile(r"^(?:target\..+\.)?(?:dependencies|build-dependencies|dev-dependencies)\.")


def parse(version: str) -> tuple[int, int, int, str] | None:
    found = _VERSION.match(version.strip())
    if not found:
        return None
    major, minor, patch, pre = found.groups()
    return int(major), int(minor), int(patch), pre or ""


def _order(version: tuple[int, int, int, str]) -> tuple[int, int, int, int, str]:
    return (*version[:3], 0 if version[3] else 1, version[3])  # a pre-release sorts first


def compatible(locked: tuple[int, int, int, str], other: tuple[int, int, int, str]) -> bool:
    """Cargo's caret rule: same major, or for 0.x the same minor, or for 0.0.x the same patch."""
    if locked[0]:
        return other[0] == locked[0]
    if locked[1]:
        return other[:2] == locked[:2]
    return other[:3] == locked[:3]


def choose(locked: str, releases: list[dict[str, object]], cutoff: str = "") -> str:
    """Of the releases not yanked, semver-compatible with `locked` and not older, the newest
    published by `cutoff` (RFC 3339; a release without `pubtime` counts as published by then),
    else the lowest ("" if none). Pre-releases only stand in for a pre-release."""
    want = parse(locked)
    if want is None:
        return ""
    found, by_then = [], []
    for release in releases:
        version = parse(str(release.get("vers", "")))
        if version is None or release.get("yanked"):
            continue
        if version[3] and not want[3]:
            continue
        if compatible(want, version) and _order(version) >= _order(want):
            found.append((_order(version), str(release["vers"])))
            if cutoff and _published_by(release, cutoff):
                by_then.append(found[-1])
    if by_then:
        return max(by_then)[1]
    return min(found)[1] if found else ""


def _published_by(release: dict[str, object], cutoff: str) -> bool:
    stamp = release.get("pubtime")
    if not isinstance(stamp, str) or not stamp:
        return True
    return _moment(stamp) <= _moment(cutoff)


def _moment(text: str) -> datetime:
    found = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return found if found.tzinfo else found.replace(tzinfo=timezone.utc)  # noqa: UP017 (3.9)


def index_path(name: str) -> str:
    """The path of a crate in a sparse index (cargo's layout by the name's length)."""
    lower = name.lower()
    if len(lower) <= 2:
        return f"{len(lower)}/{lower}"
    if len(lower) == 3:
        return f"3/{lower[0]}/{lower}"
    return f"{lower[:2]}/{lower[2:4]}/{lower}"


def rewrite(
    manifest: str,
    version: str,
    siblings: dict[str, tuple[str, str]],
    locked_deps: Sequence[tuple[str, str]] = (),
) -> str:
    """The crate's normalized Cargo.toml with the locked `version`, its dependencies on
    `siblings` (name → (locked version, directory)) made path dependencies on their stand-ins, and
    each of `locked_deps` ((name, locked version): what Cargo.lock lists under the git package)
    that it does not declare added at exactly that version, unused: cargo then resolves the
    stand-in to the lock's own graph instead of rewriting Cargo.lock."""
    sections: list[list[str]] = [[]]
    for line in manifest.splitlines():
        if _HEADER.match(line):
            sections.append([])
        sections[-1].append(line)
    out = []
    for lines in sections:
        header = _HEADER.match(lines[0]) if lines else None
        table = header.group(1).strip() if header else ""
        if table == "package":
            lines = [
                f'version = "{version}"' if re.match(r"\s*version\s*=", line) else line
                for line in lines
            ]
        elif _DEP_TABLE.match(table):
            lines = _sibling(lines, table, siblings)
        out.extend(lines)
    declared = _declared(manifest)
    for name, locked in locked_deps:
        if name in declared:
            continue
        out += ["", f"[dependencies.{json.dumps(name)}]", f'version = "={locked}"']
        if name in siblings:
            out.append(f'path = "../{siblings[name][1]}"')
    return "\n".join(out) + "\n"


def _declared(manifest: str) -> set[str]:
    """The packages a manifest depends on, in any dependency table (dev ones aside: cargo does
    not resolve them for a dependency)."""
    found, table = set(), ""
    for line in manifest.splitlines():
        header = _HEADER.match(line)
        if header:
            table = header.group(1).strip()
            if _DEP_TABLE.match(table) and "dev-dependencies" not in table:
                found.add(table.rsplit(".", 1)[-1].strip('"'))
            continue
        key = re.match(r'\s*"?([A-Za-z0-9_-]+)"?\s*=', line)
        renamed = re.match(r'\s*package\s*=\s*"([^"]+)"', line)
        if renamed and _DEP_TABLE.match(table):
            found.add(renamed.group(1))
        elif key and re.match(r"^(?:target\..+\.)?(?:dependencies|build-dependencies)$", table):
            inline = re.search(r'package\s*=\s*"([^"]+)"', line)
            found.add(inline.group(1) if inline else key.group(1))
    return found


def _sibling(lines: list[str], table: str, siblings: dict[str, tuple[str, str]]) -> list[str]:
    name = table.rsplit(".", 1)[-1].strip('"')
    for line in lines[1:]:
        renamed = re.match(r'\s*package\s*=\s*"([^"]+)"', line)
        if renamed:
            name = renamed.group(1)
    if name not in siblings:
        return lines
    locked, directory = siblings[name]
    kept = [line for line in lines if not re.match(r"\s*(version|path)\s*=", line)]
    return [kept[0], f'version = "={locked}"', f'path = "../{directory}"', *kept[1:]]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=300) as response:
        return response.read()


def _releases(index: str, name: str) -> list[dict[str, object]]:
    try:
        text = _get(f"{index.rstrip('/')}/{index_path(name)}").decode()
    except OSError as exc:
        print(f"{name}: not in the index ({exc})")
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def stand_in(
    index: str, download: str, out: str, source: dict[str, object], cutoff: str = ""
) -> list[tuple[str, str, str]]:
    """(name, locked version, stand-in version) of each package of one git source as of `cutoff`,
    unpacked into `out`; exits with an `error:` line when one has no stand-in."""
    packages = [(str(p[0]), str(p[1])) for p in source["packages"]]  # type: ignore[attr-defined]
    depends = source.get("dependencies") or {}
    chosen = []
    for name, locked in packages:
        releases = _releases(index, name)
        version = choose(locked, releases, cutoff)
        if not version:
            listed = ", ".join(str(r.get("vers")) for r in releases[-5:]) or "nothing"
            sys.exit(
                f"error: git dependency {name} {locked} ({source['url']}"
                f"{' ' + str(source['reference']) if source['reference'] else ''}) has no "
                f"crates.io release semver-compatible with {locked} and not older "
                f"(crates.io has {listed})"
            )
        cksum = next(str(r.get("cksum", "")) for r in releases if r.get("vers") == version)
        chosen.append((name, locked, version, cksum))
    siblings = {name: (locked, f"{name}-{locked}") for name, locked, _, _ in chosen}
    for name, locked, version, cksum in chosen:
        locked_deps = [(str(d[0]), str(d[1])) for d in depends.get(name, [])]  # type: ignore[attr-defined]
        _unpack(download, out, name, locked, version, cksum, siblings, locked_deps)
        print(f"git dependency {name} {locked} ({source['url']}): crates.io {name} {version}")
    return [(name, locked, version) for name, locked, version, _ in chosen]


def _unpack(
    download: str,
    out: str,
    name: str,
    locked: str,
    version: str,
    cksum: str,
    siblings: dict[str, tuple[str, str]],
    locked_deps: list[tuple[str, str]],
) -> None:
    data = _get(f"{download.rstrip('/')}/{name}/{name}-{version}.crate")
    if cksum and hashlib.sha256(data).hexdigest() != cksum:
        sys.exit(f"error: {name}-{version}.crate does not match the index's checksum")
    target = os.path.join(out, f"{name}-{locked}")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        prefix = f"{name}-{version}/"
        for member in archive.getmembers():
            if not member.name.startswith(prefix) or ".." in member.name.split("/"):
                continue
            if not (member.isfile() or member.isdir()):
                continue
            member.name = member.name[len(prefix) :]
            if member.name:
                archive.extract(member, target, **_SAFE)
    manifest = os.path.join(target, "Cargo.toml")
    with open(manifest) as handle:
        text = handle.read()
    with open(manifest, "w") as handle:
        handle.write(rewrite(text, locked, siblings, locked_deps))
    with open(os.path.join(target, ".cargo-checksum.json"), "w") as handle:
        handle.write('{"files":{},"package":null}')


def main(argv: list[str]) -> int:
    index, download, out, sources = argv[1], argv[2], argv[3], json.loads(argv[4])
    cutoff = argv[5] if len(argv) > 5 else ""
    os.makedirs(out, exist_ok=True)
    for source in sources:
        stand_in(index, download, out, source, cutoff)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
