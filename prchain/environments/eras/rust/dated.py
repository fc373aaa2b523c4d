"""crates.io's sparse index as of a date, served on 127.0.0.1 to the cargo that resolves an era.

This file runs inside the era build (`python3 - serve <args> < this file`, Python 3.9 and up:
bullseye's) and is imported by the tests; it uses the standard library only. A tree without a
Cargo.lock pins nothing, and cargo resolves to the newest releases, which are years newer than the
era's toolchain (a 2019 crate's `cargo generate-lockfile` takes releases of the `2021` or `2024`
edition). Each line of a sparse index file is one release, and crates.io writes its publication
time into it (`pubtime`, UTC, RFC 3339; the field cargo's own unstable `-Zpublish-time` resolve
reads). The server proxies the upstream index and answers:

* `/config.json`: the upstream's `dl` (the `.crate` downloads), nothing else (no `api`: nothing
  publishes here);
* `/<index path>`: the upstream file with every line published after the cutoff removed, each
  kept line byte for byte; a line without `pubtime` is kept (no date says it is newer); a crate
  with no release left is 404, as for a crate that does not exist. One change to a kept line:
  where every release of a semver-compatible series (`0.2.*`, `1.*`) kept is yanked, those
  releases are served unyanked. The index keeps no time of a yank, and a series yanked whole
  leaves a requirement in it nothing to resolve to, which the era's own builds did (tokio 0.2's
  `security-framework = "0.2"`, every 0.2 release yanked since); where one release of the series
  stands, cargo takes it, as it did then.

The cargo that reads it (`registry = "sparse+http://127.0.0.1:<port>/"`, in place of crates-io)
writes Cargo.lock with crates.io's own source and checksums, so the vendoring that follows fetches
exactly those releases from crates.io. Upstream files are cached under `<cache>/<index path>`:
a copy fetched after the cutoff holds every release published by then, so it serves that cutoff
for good (a release yanked since stays yanked in it, as it would upstream).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The sparse index's paths by a crate name's length (cargo lowercases the name).
_PATH = re.compile(
    r"^(?:1/[a-z0-9_-]|2/[a-z0-9_-]{2}|3/[a-z0-9_-]/[a-z0-9_-]{3}"
    r"|[a-z0-9_-]{2}/[a-z0-9_-]{2}/[a-z0-9_-]{4,64})$"
)
_TRIES = 3
_MISSING = (404, 410, 451)  # what cargo reads as "no such crate"


def moment(text: str) -> datetime:
    """An RFC 3339 UTC time (`2014-11-23T01:18:11Z`, or with an offset) as an aware datetime."""
    found = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return found if found.tzinfo else found.replace(tzinfo=timezone.utc)  # noqa: UP017 (3.9)


def entry(line: str) -> dict[str, object]:
    """One index line as its JSON object; {} when it is none."""
    try:
        found = json.loads(line)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def published(release: dict[str, object]) -> datetime | None:
    """The `pubtime` of one index line's object; None when it has none."""
    stamp = release.get("pubtime")
    return moment(stamp) if isinstance(stamp, str) and stamp else None


def dated(text: str, cutoff: datetime) -> str:
    """The lines of an index file published by `cutoff` (a line without a time kept), unchanged
    but for a series yanked whole, whose releases are served unyanked."""
    kept = []  # (line, its object)
    for line in text.splitlines(keepends=True):
        if not line.strip():
            continue
        release = entry(line)
        when = published(release)
        if when is None or when <= cutoff:
            kept.append((line if line.endswith("\n") else line + "\n", release))
    return "".join(unyank_whole_series(kept))


_YANKED = re.compile(r'"yanked"\s*:\s*true')
_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")  # a release, not a pre-release (1.0.0-beta)


def series(version: str) -> tuple[int, ...] | None:
    """The semver-compatible series of a release (what a caret requirement stays within): 1.4.2 →
    (1,), 0.2.4 → (0, 2), 0.0.3 → (0, 0, 3); None for a pre-release."""
    found = _RELEASE.match(version)
    if found is None:
        return None
    major, minor, patch = (int(part) for part in found.groups())
    return (major,) if major else (0, minor) if minor else (0, 0, patch)


def unyank_whole_series(kept: list[tuple[str, dict[str, object]]]) -> list[str]:
    """The lines of `kept` (each with its object), a series whose every release is yanked served
    unyanked."""
    releases = []  # (line, series, yanked)
    for line, release in kept:
        version = release.get("vers")
        key = series(version) if isinstance(version, str) else None
        releases.append((line, key, release.get("yanked") is True))
    standing = {key for _, key, yanked in releases if key is not None and not yanked}
    return [
        _YANKED.sub('"yanked":false', line) if key is not None and key not in standing else line
        for line, key, _ in releases
    ]


def view_config(upstream: bytes) -> bytes:
    """The view's config.json: the upstream's downloads, no API."""
    found = json.loads(upstream.decode())
    return json.dumps({"dl": found["dl"]}).encode()


class Upstream:
    """The upstream index over HTTP(S), with a file cache that serves a cutoff it was fetched after."""

    def __init__(self, url: str, cache: str, cutoff: datetime) -> None:
        self.url = url.rstrip("/")
        self.cache = cache
        self.cutoff = cutoff.timestamp()

    def get(self, path: str) -> bytes | None:
        """The upstream file at `path`, None when the index has no such crate."""
        local = os.path.join(self.cache, path)
        if os.path.isfile(local) and os.path.getmtime(local) > self.cutoff:
            with open(local, "rb") as handle:
                return handle.read()
        data = self._fetch(path)
        if data is not None and path != "config.json":
            self._store(local, data)
        return data

    def _fetch(self, path: str) -> bytes | None:
        for attempt in range(_TRIES):
            try:
                with urllib.request.urlopen(f"{self.url}/{path}", timeout=120) as response:
                    return response.read()
            except urllib.error.HTTPError as exc:
                if exc.code in _MISSING:
                    return None
                if exc.code < 500 or attempt == _TRIES - 1:
                    raise
            except OSError:
                if attempt == _TRIES - 1:
                    raise
            time.sleep(2**attempt)
        return None

    def _store(self, local: str, data: bytes) -> None:
        os.makedirs(os.path.dirname(local), exist_ok=True)
        handle, staged = tempfile.mkstemp(dir=os.path.dirname(local))
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(staged, local)  # readers see the whole file or none


class View:
    """What the server answers for a request path: (status, body)."""

    def __init__(self, upstream: Upstream, cutoff: datetime) -> None:
        self.upstream = upstream
        self.cutoff = cutoff

    def answer(self, path: str) -> tuple[int, bytes]:
        path = path.split("?", 1)[0].lstrip("/")
        if path == "config.json":
            found = self.upstream.get(path)
            return (200, view_config(found)) if found is not None else (404, b"no config.json\n")
        if not _PATH.match(path):
            return 404, b"not an index path\n"
        try:
            found = self.upstream.get(path)
        except OSError as exc:
            return 502, f"upstream index: {exc}\n".encode()
        if found is None:
            return 404, b"no such crate\n"
        kept = dated(found.decode(), self.cutoff)
        return (200, kept.encode()) if kept else (404, b"no release by the cutoff\n")


def handler(view: View) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = view.answer(self.path)
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            # quiet but for what the upstream failed on (the build's log says why cargo stopped)
            if len(args) > 1 and str(args[1]).startswith("5"):
                sys.stderr.write(f"dated index: {format % args}\n")

    return Handler


def server(upstream: str, cutoff: str, cache: str) -> ThreadingHTTPServer:
    """The view of `upstream` at `cutoff`, bound to an ephemeral port of 127.0.0.1 (not started)."""
    when = moment(cutoff)
    view = View(Upstream(upstream, cache, when), when)
    return ThreadingHTTPServer(("127.0.0.1", 0), handler(view))


def cargo_config(port: int) -> str:
    """Config text pointing crates-io at the view on `port`."""
    return (
        '[source.crates-io]\nreplace-with = "prchain-dated"\n\n'
        f'[source.prchain-dated]\nregistry = "sparse+http://127.0.0.1:{port}/"\n'
    )


def main(argv: list[str]) -> int:
    """`serve <upstream index> <cutoff> <cache dir> <config out>`: serves until killed, once bound
    writing the cargo config that reads it to `<config out>`."""
    if len(argv) != 6 or argv[1] != "serve":
        sys.exit("usage: dated.py serve <upstream index> <cutoff> <cache dir> <config out>")
    running = server(argv[2], argv[3], argv[4])
    staged = argv[5] + ".part"
    with open(staged, "w") as out:
        out.write(cargo_config(running.server_address[1]))
    os.replace(staged, argv[5])
    running.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
