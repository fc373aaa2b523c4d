"""The setup box's only way out: a proxy that reaches the package registries and nothing else.

The box has no network of its own (`--network none`: not the host, not the bridge, not the LAN).
A relay inside it listens on 127.0.0.1:3128 and forwards each connection to a Unix socket that is
bind-mounted from the host, where `EgressProxy` (a thread of prchain) answers: `CONNECT host:443`
and plain `GET http://host/...` (apt) for allow-listed host names only, connected to an address
that is none of loopback, private, link-local, shared or multicast (so a name that resolves to the
host or the LAN is refused too). uv, pip, apt, cargo, go and npm read HTTP(S)_PROXY; Maven reads
only its settings (`<proxies>`, written by `PROXIED` for the run and removed at its end) and
Gradle the JVM's proxy properties.

The registry endpoints prchain is configured with (`index_url`, `npm_registry`, `go_proxy`) are
admitted by exact host and port, whatever their address: an operator's local index on the host's
127.0.0.1 (as the tests use) is reached, and nothing else on the host.

Era builds run the same way (prchain/environments/eras/build.py): a build backend runs as root there.
"""

from __future__ import annotations

import ipaddress
import os
import selectors
import shlex
import shutil
import socket
import socketserver
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Self
from urllib.parse import urlsplit

INSIDE = "/opt/prchain/egress"  # where the socket's directory is mounted in the box
SOCKET = "proxy.sock"
PORT = 3128
_BLOCKED = [
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "172.16.0.0/12", "192.168.0.0/16", "224.0.0.0/3", "::/128", "::1/128", "fc00::/7",
        "fe80::/10", "ff00::/8", "::ffff:0:0/96",
    )
]  # fmt: skip
RESOLVE_TRIES = 5
RESOLVE_PAUSE = 0.2  # seconds before the second try, doubled for each after
RESOLVE_TTL = 60.0
# (host, port) → (when, its addresses), and the lock of its lookup
_resolved: dict[tuple[str, int], tuple[float, list[str]]] = {}
_resolving: dict[tuple[str, int], threading.Lock] = {}
RELAY = f"""
import socket, threading
def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", {PORT}))
server.listen(64)
while True:
    client, _ = server.accept()
    upstream = socket.socket(socket.AF_UNIX)
    try:
        upstream.connect("{INSIDE}/{SOCKET}")
    except OSError:
        client.close()
        continue
    threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
"""
# Started in the box after each launch; it survives as a child of the container's init.
_LISTENING = f"import socket; socket.create_connection(('127.0.0.1', {PORT}), 1)"
START_RELAY = (
    f"nohup python3 -c {shlex.quote(RELAY)} >/dev/null 2>&1 &\n"
    f"for _ in $(seq 100); do python3 -c {shlex.quote(_LISTENING)} 2>/dev/null && break; "
    "sleep 0.05; done"
)


_PROXY_PROPERTIES = " ".join(
    f"-D{scheme}.proxyHost=127.0.0.1 -D{scheme}.proxyPort={PORT}" for scheme in ("http", "https")
)
_MAVEN_PROXIES = "".join(
    f"<proxy><id>prchain-{scheme}</id><active>true</active><protocol>{scheme}</protocol>"
    f"<host>127.0.0.1</host><port>{PORT}</port></proxy>"
    for scheme in ("https", "http")
)
# Maven reads no proxy variable: root's user settings name the proxy.
MAVEN_SETTINGS = (
    "mkdir -p /root/.m2 && printf '%s\\n' "
    + shlex.quote(f"<settings><proxies>{_MAVEN_PROXIES}</proxies></settings>")
    + " > /root/.m2/settings.xml"
)
JVM_VARIABLES = {"JAVA_TOOL_OPTIONS": _PROXY_PROPERTIES}  # Gradle and other JVM tools
# A build script's first lines in a proxied container: the relay, and the proxy for the JVM's
# tools (Maven's settings are deleted when the script ends, so no image keeps them).
PROXIED = (
    f"{START_RELAY}\n{MAVEN_SETTINGS}\n"
    + "trap 'rm -f /root/.m2/settings.xml; rmdir /root/.m2 2>/dev/null || true' EXIT\n"
    + f"export JAVA_TOOL_OPTIONS={shlex.quote(_PROXY_PROPERTIES)}\n"
)


def proxy_variables() -> dict[str, str]:
    url = f"http://127.0.0.1:{PORT}"
    return {k: url for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")} | {
        "NO_PROXY": "",
        "no_proxy": "",
    }


def blocked(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return any(ip in network for network in _BLOCKED if network.version == ip.version)


def resolve(host: str, port: int) -> str | None:
    """The first address of `host` that is not the host, the LAN or loopback; None if none."""
    return next((a for a in addresses(host, port) if not blocked(a)), None)


def addresses(host: str, port: int) -> list[str]:
    """The addresses of `host`, in the resolver's order ([] if it has none).

    One lookup per name at a time, its answer kept for RESOLVE_TTL seconds, and a resolver that
    fails for the moment (EAI_AGAIN) asked again, RESOLVE_TRIES times in all: the host's resolver
    timed out on a third of an npm install's parallel lookups, the proxy refused those tunnels
    and npm 6 (node 12) died on "cb() never called!" (node-pcap/node_pcap's 2020 eras)."""
    key = (host.lower(), port)
    with _resolving.setdefault(key, threading.Lock()):
        kept = _resolved.get(key)
        if kept is not None and time.monotonic() - kept[0] < RESOLVE_TTL:
            return kept[1]
        for attempt in range(RESOLVE_TRIES):
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except socket.gaierror as error:
                if error.errno != socket.EAI_AGAIN or attempt == RESOLVE_TRIES - 1:
                    return []
                time.sleep(RESOLVE_PAUSE * 2**attempt)
                continue
            except OSError:
                return []
            found = list(dict.fromkeys(str(i[4][0]) for i in infos))
            _resolved[key] = (time.monotonic(), found)
            return found
    return []


def endpoints(urls: Iterable[str]) -> frozenset[tuple[str, int]]:
    """(host, port) of each URL: the configured registries, admitted whatever their address."""
    found = set()
    for url in urls:
        parts = urlsplit(url.strip())
        if parts.scheme in ("http", "https") and parts.hostname:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            found.add((parts.hostname.lower(), port))
    return frozenset(found)


class EgressProxy:
    """The host side: a threaded proxy on a Unix socket in a directory the box mounts."""

    def __init__(self, hosts: Iterable[str], exact: Iterable[tuple[str, int]] = ()) -> None:
        self.hosts = frozenset(h.lower().strip(".") for h in hosts if h)
        self.exact = frozenset(exact)  # (host, port) admitted at any address
        self.directory = ""
        self._server: socketserver.ThreadingUnixStreamServer | None = None

    def __enter__(self) -> Self:
        self.directory = tempfile.mkdtemp(prefix="prchain-egress-")
        os.chmod(self.directory, 0o755)
        allowed = _Allowed(self.hosts, self.exact)

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                answer(self.request, allowed)

        self._server = socketserver.ThreadingUnixStreamServer(
            str(Path(self.directory, SOCKET)), Handler
        )
        self._server.daemon_threads = True
        os.chmod(Path(self.directory, SOCKET), 0o777)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        shutil.rmtree(self.directory, ignore_errors=True)


@dataclass(frozen=True)
class _Allowed:
    hosts: frozenset[str]  # by name, on the scheme's port, at a public address
    exact: frozenset[tuple[str, int]]  # by name and port, at any address


def answer(client: socket.socket, allowed: _Allowed) -> None:
    """One client's request; a client that hung up before its answer (a build tool's timeout, a
    resolver that raced two connections) is nobody to tell, not a traceback on the user's screen."""
    try:
        _serve(client, allowed)
    except ConnectionError:
        return


def _serve(client: socket.socket, allowed: _Allowed) -> None:
    head = _read_head(client)
    if head is None:
        return
    line, _, rest = head.partition(b"\r\n")
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        return
    method, target, version = parts
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        upstream = _open(host, int(port) if port.isdigit() else 0, 443, allowed)
        if upstream is None:
            client.sendall(b"HTTP/1.1 403 Forbidden\r\n\r\n")
            return
        try:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        except ConnectionError:
            upstream.close()
            raise
    else:
        url = urlsplit(target)
        upstream = _open(url.hostname or "", url.port or 80, 80, allowed)
        if url.scheme != "http" or upstream is None:
            client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        path = url.path or "/"
        path += f"?{url.query}" if url.query else ""
        headers = [h for h in rest.split(b"\r\n") if not h.lower().startswith(b"proxy-")]
        upstream.sendall(f"{method} {path} {version}\r\n".encode() + b"\r\n".join(headers))
    _pipe(client, upstream)


def _open(host: str, port: int, only: int, allowed: _Allowed) -> socket.socket | None:
    name = host.lower().strip(".")
    if (name, port) in allowed.exact:
        candidates = addresses(name, port)  # a configured registry: at any of its addresses
    elif name in allowed.hosts and port == only:
        candidates = [a for a in [resolve(name, port)] if a is not None]
    else:
        return None
    for address in candidates:
        try:
            return socket.create_connection((address, port), timeout=30)
        except OSError:
            continue
    return None


def _read_head(sock: socket.socket) -> bytes | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk or len(data) > 65536:
            return None
        data += chunk
    return data


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until one side closes or both are idle for 300 s. A selector, not
    select(): a long process (the test suite, a rollout) holds descriptors past select's 1024."""
    with selectors.DefaultSelector() as selector:
        selector.register(a, selectors.EVENT_READ, b)
        selector.register(b, selectors.EVENT_READ, a)
        try:
            while ready := selector.select(300):
                for key, _ in ready:
                    data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                    if not data:
                        return
                    key.data.sendall(data)
        except OSError:
            return
        finally:
            b.close()
