"""Which Rust toolchain an era gets: the project's own declaration, else the stable of its date,
and of the toolchains Debian's suites ship the nearest one not older than that.

rustup's servers are not reachable from here, so exact toolchains cannot be had; Debian's suites
give rustc of several ages (the `-web` packages are newer rustc backported for browsers). Newer
rustc compiles older code (Rust's stability promise) except where old crates break under newer
inference (`time` < 0.3.35 under 1.80), so the nearest newer one is chosen, never the newest.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime

from prchain.environments.eras.manifests import Snapshot


@dataclass(frozen=True)
class Toolchain:
    version: str  # rustc's minor version as "1.NN", for the record
    suite: str  # the Debian suite that ships it
    packages: tuple[str, str]  # (rustc, cargo) package names
    fetcher: str = (
        ""  # a newer cargo package of the suite that fetches (cargo < 1.68: no sparse index)
    )


# Checked with apt in each suite (November 2026); a point release may move a -web package forward.
TOOLCHAINS = (
    Toolchain("1.48", "bullseye", ("rustc", "cargo"), fetcher="cargo-web"),
    Toolchain("1.63", "bookworm", ("rustc", "cargo"), fetcher="cargo-web"),
    Toolchain("1.78", "bullseye", ("rustc-web", "cargo-web")),
    Toolchain("1.85", "trixie", ("rustc", "cargo")),
    Toolchain("1.96", "trixie", ("rustc-web", "cargo-web")),
)
# Rust 1.0 came out on 2015-05-15 and a stable release follows every six weeks.
_FIRST = datetime(2015, 5, 15, tzinfo=UTC)
_EDITIONS = {"2015": 0, "2018": 31, "2021": 56, "2024": 85}
_LOCK_VERSIONS = {3: 53, 4: 78}  # the first cargo that reads each Cargo.lock version
_MINOR = re.compile(r"^1\.(\d+)")
_NIGHTLY = re.compile(r"^(nightly|beta)(?:-(\d{4}-\d{2}-\d{2}))?")


def minor(version: str) -> int:
    found = _MINOR.match(version.strip())
    return int(found.group(1)) if found else 0


def stable_on(when: datetime) -> int:
    """The minor version of the newest stable rustc released by `when`."""
    return max(0, (when - _FIRST).days // 42)


def _toml(text: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def channel(snap: Snapshot) -> str:
    """The channel of rust-toolchain.toml or of the legacy one-line rust-toolchain file."""
    found = _toml(snap.text("rust-toolchain.toml")).get("toolchain")
    if isinstance(found, dict) and found.get("channel"):
        return str(found["channel"])
    legacy = snap.text("rust-toolchain").strip()
    found = _toml(legacy).get("toolchain")
    if isinstance(found, dict) and found.get("channel"):
        return str(found["channel"])
    return legacy.splitlines()[0].strip() if legacy else ""


def _packages(snap: Snapshot) -> list[dict[str, object]]:
    tables = []
    for path, text in snap.files.items():
        if path == "Cargo.toml" or path.endswith("/Cargo.toml"):
            tree = _toml(text)
            for key in ("package", "workspace"):
                table = tree.get(key)
                if isinstance(table, dict):
                    tables.append(table.get("package", table) if key == "workspace" else table)
    return [t for t in tables if isinstance(t, dict)]


def floor(snap: Snapshot) -> tuple[int, str]:
    """(minor, why): the oldest rustc the manifests allow: rust-version, edition, lock version."""
    found = [(0, "")]
    for table in _packages(snap):
        version, edition = table.get("rust-version"), table.get("edition")
        if isinstance(version, str) and minor(version):
            found.append((minor(version), f"rust-version {version}"))
        if isinstance(edition, str) and edition in _EDITIONS:
            found.append((_EDITIONS[edition], f"edition {edition}"))
    lock = _toml(snap.text("Cargo.lock")).get("version")
    if isinstance(lock, int) and lock in _LOCK_VERSIONS:
        found.append((_LOCK_VERSIONS[lock], f"Cargo.lock version {lock}"))
    return max(found)


def wanted(snap: Snapshot) -> tuple[int, bool, str]:
    """(minor, nightly, why): what the era asks for: the pinned channel, else the date's stable
    (its dependencies were locked against it), never below the manifests' floor."""
    pinned, why = channel(snap), ""
    nightly = _NIGHTLY.match(pinned)
    if minor(pinned):
        want, why = minor(pinned), f"rust-toolchain {pinned}"
    elif nightly and nightly.group(2):
        day = datetime.fromisoformat(nightly.group(2)).replace(tzinfo=UTC)
        want, why = stable_on(day), f"rust-toolchain {pinned} (stable of that date)"
    else:
        want = stable_on(snap.date)
        why = f"stable of {snap.date.date().isoformat()} is 1.{want}"
    low, reason = floor(snap)
    if low > want:
        want, why = low, f"{why}; {reason}"
    return want, bool(nightly), why


def choose(want: int, suites: dict[str, str]) -> tuple[Toolchain, str]:
    """The nearest toolchain not older than 1.`want` among the configured suites (the newest when
    none is new enough), with what was given up."""
    usable = [t for t in TOOLCHAINS if t.suite in suites] or list(TOOLCHAINS)
    newer = [t for t in usable if minor(t.version) >= want]
    if newer:
        chosen = newer[0]
        gap = "" if minor(chosen.version) == want else f"1.{want} is not packaged; nearest newer"
        return chosen, gap
    return usable[-1], f"1.{want} is newer than any packaged rustc; the newest"


def after(current: Toolchain, suites: dict[str, str], at_least: int = 0) -> Toolchain | None:
    """The next newer toolchain than `current` (and not older than 1.`at_least`), if any."""
    usable = [t for t in TOOLCHAINS if t.suite in suites]
    later = [
        t
        for t in usable
        if minor(t.version) > minor(current.version) and minor(t.version) >= at_least
    ]
    return later[0] if later else None
