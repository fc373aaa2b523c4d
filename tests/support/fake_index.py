"""A package index on 127.0.0.1 that serves made-up wheels with upload times (PEP 691 JSON + 700).

uv reads `upload-time` from the JSON simple API to apply `--exclude-newer`, so the era planner's
dated resolution can be tested without PyPI.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


@dataclass(frozen=True)
class Release:
    name: str
    version: str
    uploaded: str  # ISO 8601, e.g. 2020-06-01T00:00:00Z
    wheel: Path  # or an sdist (make_failing_sdist)
    yanked: str = ""  # the reason of a yanked file (PEP 592); "" when it is not


def make_wheel(
    folder: Path,
    name: str,
    version: str,
    modules: dict[str, str],
    tag: str = "py3-none-any",
    requires: tuple[str, ...] = (),
) -> Path:
    """A wheel holding `modules` (path in the wheel → source), tagged `tag` (a platform tag makes
    it look like a compiled one; the content stays Python), depending on `requires`."""
    dist = f"{name.replace('-', '_')}-{version}"
    target = folder / f"{dist}-{tag}.whl"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {
        **modules,
        f"{dist}.dist-info/METADATA": metadata,
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: prchain-tests\n"
        f"Root-Is-Purelib: true\nTag: {tag}\n",
    }
    record = [
        f"{path},{_digest(text.encode())},{len(text.encode())}" for path, text in files.items()
    ]
    record.append(f"{dist}.dist-info/RECORD,,")
    files[f"{dist}.dist-info/RECORD"] = "\n".join(record) + "\n"
    with zipfile.ZipFile(target, "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
    return target


def make_failing_sdist(folder: Path, name: str, version: str, message: str) -> Path:
    """An sdist whose build always fails with `message` (an in-tree backend that raises): an old C
    extension that does not compile on today's interpreter, without a compiler or setuptools."""
    import io
    import tarfile

    dist = f"{name.replace('-', '_')}-{version}"
    files = {
        "PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "broken"\n'
        'backend-path = ["."]\n',
        "broken.py": f"def build_wheel(*args, **kwargs):\n    raise RuntimeError({message!r})\n",
    }
    target = folder / f"{dist}.tar.gz"
    with tarfile.open(target, "w:gz") as archive:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{dist}/{path}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return target


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


@dataclass
class FakeIndex:
    releases: list[Release]
    server: ThreadingHTTPServer | None = None
    requests: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/simple"

    def __enter__(self) -> FakeIndex:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()

    def project(self, name: str) -> dict[str, object] | None:
        mine = [r for r in self.releases if r.name == name]
        if not mine:
            return None
        return {
            "meta": {"api-version": "1.1"},
            "name": name,
            "versions": [r.version for r in mine],
            "files": [
                {
                    "filename": r.wheel.name,
                    "url": f"../../files/{r.wheel.name}",
                    "hashes": {"sha256": hashlib.sha256(r.wheel.read_bytes()).hexdigest()},
                    **({"upload-time": r.uploaded} if r.uploaded else {}),
                    "size": r.wheel.stat().st_size,
                    **({"yanked": r.yanked} if r.yanked else {}),
                }
                for r in mine
            ],
        }


def _handler(index: FakeIndex) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:  # noqa: N802 (http.server's name); uv asks before a download
            self.do_GET(head=True)

        def do_GET(self, head: bool = False) -> None:  # noqa: N802
            index.requests.append(self.path)
            parts = [p for p in self.path.split("?")[0].split("/") if p]
            if parts[:1] == ["files"] and len(parts) == 2:
                found = [r.wheel for r in index.releases if r.wheel.name == parts[1]]
                if found:
                    return self._send(found[0].read_bytes(), "application/octet-stream", head)
            if parts[:1] == ["simple"] and len(parts) == 2:
                page = index.project(parts[1])
                if page is not None:
                    return self._send(json.dumps(page).encode(), JSON_TYPE, head)
            self.send_error(404)

        def _send(self, body: bytes, kind: str, head: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

    return Handler
