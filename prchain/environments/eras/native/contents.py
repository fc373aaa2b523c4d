"""Debian's Contents index (what `apt-file` reads): which package of a suite holds a file.

Per suite and architecture the archive publishes `dists/<suite>/main/Contents-<arch>.gz` and
`Contents-all.gz` (packages of every architecture; header-only libraries are there), each line a
path and the `section/package` list that ships it. Both are fetched once per suite, and the lines
a build can ask for (headers under `usr/include/`, `.pc` files, libraries in the linker's own
directories, programs in a `bin/` directory) are kept in a SQLite file keyed by file name, in
prchain's cache directory: a lookup after that is one indexed query, with no network.

A lookup ranks what it finds, deterministically: the file where the compiler, pkg-config, the
linker or the shell looks first (`usr/include/x.h` before `usr/include/wolfssl/openssl/x.h`), a
`-dev` package before another (for headers, modules and libraries), the shallower path, then the
package name.
"""

from __future__ import annotations

import gzip
import os
import platform
import re
import sqlite3
import tempfile
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from prchain.core.commit_graph import CACHE_VARIABLE
from prchain.core.errors import PrchainError
from prchain.environments.eras.native.missing import Missing

INDEX_VERSION = "1"  # bump when what the index keeps changes: every cached index is rebuilt
_INCLUDE = re.compile(r"^usr/include/(?:[a-z0-9_]+-linux-gnu[a-z0-9_]*/)?")
_PKGCONFIG = re.compile(r"^usr/(?:lib(?:/[a-z0-9_]+-linux-gnu[a-z0-9_]*)?|share)/pkgconfig/")
_LIBRARY = re.compile(r"^(?:usr/)?lib/(?:[a-z0-9_]+-linux-gnu[a-z0-9_]*/)?lib[^/]+\.(?:so|a)$")
_BIN = re.compile(r"^(?:usr/)?s?bin/[^/]+$")
_KEEP_PREFIXES = ("usr/include/", "usr/lib/", "usr/share/pkgconfig/", "lib/", "bin/", "sbin/",
                  "usr/bin/", "usr/sbin/")  # fmt: skip
_KEEP_BYTES = tuple(p.encode() for p in _KEEP_PREFIXES)
_BIN_DIRS = ("usr/bin", "bin", "usr/sbin", "sbin")  # the shell's PATH order
_LOCKS: dict[Path, threading.Lock] = {}
_GUARD = threading.Lock()


class ContentsUnavailable(PrchainError):
    """The suite's Contents index could not be fetched or read (the archive unreachable)."""


@dataclass(frozen=True)
class Provider:
    package: str
    path: str  # the file in the package, as the index names it (no leading slash)


def architecture() -> str:
    """Debian's name of this machine's architecture: the era images run the host's."""
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)


def default_cache() -> Path:
    """`$PRCHAIN_CACHE_DIR/debian-contents`, else `$XDG_CACHE_HOME/prchain/debian-contents`,
    else `~/.cache/prchain/debian-contents`."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE]) / "debian-contents"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "prchain" / "debian-contents"


def kept(path: str) -> bool:
    """Whether a Contents path is one a failed build can ask for."""
    if not path.startswith(_KEEP_PREFIXES):
        return False
    if path.startswith("usr/include/"):
        return True
    if path.endswith(".pc"):
        return bool(_PKGCONFIG.match(path))
    return bool(_LIBRARY.match(path) or _BIN.match(path))


def rows(lines: Iterable[bytes]) -> Iterator[tuple[str, str, str]]:
    """(file name, path, package) of every kept line of a Contents file."""
    for raw in lines:
        if not raw.startswith(_KEEP_BYTES):  # most of the file: skipped before decoding
            continue
        line = raw.decode("utf-8", "replace").rstrip("\n")
        path, _, owners = line.rpartition(" ")
        path = path.rstrip()
        if not path or not kept(path):
            continue
        for owner in owners.split(","):
            yield path.rsplit("/", 1)[-1], path, owner.rsplit("/", 1)[-1]


class ContentsIndex:
    """The Contents index of one suite and architecture, built on first use."""

    def __init__(self, archive: str, suite: str, arch: str, cache: Path) -> None:
        self.urls = [
            f"{archive.rstrip('/')}/dists/{suite}/main/Contents-{name}.gz" for name in (arch, "all")
        ]
        self.path = cache / f"{suite}-{arch}-v{INDEX_VERSION}.sqlite"

    def providers(self, wanted: Missing) -> list[Provider]:
        """The packages holding what `wanted` names, best first (see the module's ranking)."""
        file = wanted.file.rsplit("/", 1)[-1]
        names = [file] + ([f"lib{wanted.name}.a"] if wanted.kind == "library" else [])
        with sqlite3.connect(self._ensure()) as db:
            found = db.execute(
                f"SELECT path, package FROM files WHERE name IN ({','.join('?' * len(names))})",
                names,
            ).fetchall()
        fits = [Provider(package, path) for path, package in found if _fits(wanted, path)]
        return sorted(set(fits), key=lambda p: _rank(wanted, p))

    def _ensure(self) -> Path:
        with _GUARD:
            lock = _LOCKS.setdefault(self.path, threading.Lock())
        with lock:
            if not self.path.exists():
                self._build()
        return self.path

    def _build(self) -> None:
        import requests

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=self.path.name, suffix=".part", dir=self.path.parent)
        os.close(fd)
        try:
            with sqlite3.connect(tmp) as db:
                db.execute("CREATE TABLE files (name TEXT, path TEXT, package TEXT)")
                for url in self.urls:
                    try:
                        with requests.get(url, stream=True, timeout=120) as response:
                            response.raise_for_status()
                            response.raw.decode_content = False
                            with gzip.GzipFile(fileobj=response.raw) as unpacked:
                                db.executemany("INSERT INTO files VALUES (?, ?, ?)", rows(unpacked))
                    except (requests.RequestException, OSError, EOFError) as exc:
                        raise ContentsUnavailable(f"cannot read {url}: {exc}") from exc
                db.execute("CREATE INDEX files_name ON files (name)")
            db.close()
            os.replace(tmp, self.path)  # whole or not at all: a killed build leaves only a .part
        finally:
            Path(tmp).unlink(missing_ok=True)


def _fits(wanted: Missing, path: str) -> bool:
    if wanted.kind == "header":
        return path.startswith("usr/include/") and ("/" + path).endswith("/" + wanted.name)
    if wanted.kind == "pkgconfig":
        return path.endswith(".pc")
    if wanted.kind == "library":
        return bool(_LIBRARY.match(path))
    return bool(_BIN.match(path))


def _rank(wanted: Missing, found: Provider) -> tuple[int, int, int, str, str]:
    path = found.path
    if wanted.kind == "header":
        where = 0 if _INCLUDE.sub("", path) == wanted.name else 1
    elif wanted.kind == "library":
        where = 0 if path.endswith(".so") else 1
    elif wanted.kind == "program":
        where = _BIN_DIRS.index(path.rsplit("/", 1)[0])
    else:
        where = 0
    dev = 0 if wanted.kind == "program" or found.package.endswith("-dev") else 1
    return where, dev, path.count("/"), found.package, path
