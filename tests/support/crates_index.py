"""A crates.io look-alike on 127.0.0.1: a sparse index and `.crate` downloads of made-up crates.

The layout is crates.io's: `<url>/index/<index path>` holds one JSON line per release (`vers`,
`cksum`, `yanked`, and `pubtime` when given), `<url>/index/config.json` names the downloads,
`<url>/crates/<name>/<name>-<version>.crate` the gzipped tar of `<name>-<version>/` with its
normalized Cargo.toml, as `cargo package` uploads it.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import tarfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from prchain.environments.eras.rust.standins import index_path


def publish(
    root: Path,
    name: str,
    version: str,
    files: dict[str, str],
    yanked: bool = False,
    pubtime: str = "",
) -> str:
    """One release of `name` (its files by path, Cargo.toml among them) into the index, published
    at `pubtime` (RFC 3339; none: the line has no time, as crates.io's oldest had); its line."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-{version}/{path}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    crate = buffer.getvalue()
    target = root / "crates" / name / f"{name}-{version}.crate"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(crate)
    line = {"name": name, "vers": version, "deps": [], "features": {}, "yanked": yanked}
    line["cksum"] = hashlib.sha256(crate).hexdigest()
    if pubtime:
        line["pubtime"] = pubtime
    index = root / "index" / index_path(name)
    index.parent.mkdir(parents=True, exist_ok=True)
    with index.open("a") as out:
        out.write(json.dumps(line) + "\n")
    return json.dumps(line) + "\n"


class CratesIndex:
    """Serves `root` on an ephemeral port of 127.0.0.1 while in the `with` block."""

    def __init__(self, root: Path) -> None:
        handler = functools.partial(_Quiet, directory=str(root))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        (root / "index").mkdir(parents=True, exist_ok=True)
        config = {"dl": f"{self.url}/crates"}
        (root / "index" / "config.json").write_text(json.dumps(config))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> CratesIndex:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass
