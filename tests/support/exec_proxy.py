"""A fault-injecting proxy between docker-py and the Docker engine, for the exec output tests.

It listens on a unix socket of its own and passes every byte through to the engine's, except the
streams of the execs a rule names (by a word of their argv, as the engine reports it):

- `drop`: the `101 UPGRADED` answer arrives, then nothing; the command still runs to its end and
  the engine says it exited 0: the lost output of moby/moby#27289, docker/docker-py#2042;
- `cut`: only the first `keep` bytes of the stream arrive;
- `coalesce`: the answer's headers are held back until the command has finished, then sent in one
  write with all its output, so the client's first read takes both (docker/docker-py#3332).

Requests are parsed only as far as needed to find exec starts (request line, headers, a body of
known length); a connection that sends a chunked body is passed through untouched from then on.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import socket
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

EXEC_START = re.compile(rb"^POST /(?:v[\d.]+/)?exec/([0-9a-f]+)/start ")
MODES = ("drop", "cut", "coalesce")


@dataclass
class Rule:
    word: str  # spoil an exec whose argv, joined by spaces, contains this
    mode: str  # one of MODES
    times: int = 1  # how many matching execs to spoil
    keep: int = 0  # `cut`: bytes of the stream (frame headers included) that still arrive


@dataclass
class _Connection:
    rule: Rule | None = None  # set while the exec start it spoils is in flight
    lock: threading.Lock = field(default_factory=threading.Lock)


class _EngineConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost")
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


class ExecProxy:
    """Start it, point a docker client at `url`, add rules; `spoiled` lists what it spoiled."""

    def __init__(self, engine: str = "/var/run/docker.sock") -> None:
        self.engine = engine
        self.path = os.path.join(tempfile.mkdtemp(prefix="prchain-exectest-"), "docker.sock")
        self.rules: list[Rule] = []
        self.spoiled: list[tuple[str, str]] = []  # (mode, argv) of each spoiled exec
        self.starts: list[str] = []  # argv of every exec started through the proxy
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    @property
    def url(self) -> str:
        return f"unix://{self.path}"

    def add(self, word: str, mode: str, times: int = 1, keep: int = 0) -> None:
        assert mode in MODES, mode
        with self._lock:
            self.rules.append(Rule(word, mode, times, keep))

    def start(self) -> ExecProxy:
        self._server.bind(self.path)
        self._server.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.close()
        Path(self.path).unlink(missing_ok=True)
        os.rmdir(os.path.dirname(self.path))

    # ---- plumbing ------------------------------------------------------------------------------

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return  # stopped
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        engine.connect(self.engine)
        state = _Connection()
        answers = threading.Thread(target=self._answers, args=(engine, client, state), daemon=True)
        answers.start()
        with contextlib.suppress(OSError):
            self._requests(client, engine, state)
        answers.join()
        client.close()
        engine.close()

    def _requests(self, client: socket.socket, engine: socket.socket, state: _Connection) -> None:
        """Client to engine: request by request until one upgrades the connection or is chunked."""
        pending = b""
        while True:
            while b"\r\n\r\n" not in pending:
                chunk = client.recv(65536)
                if not chunk:
                    engine.shutdown(socket.SHUT_WR)
                    return
                pending += chunk
            head, _, pending = pending.partition(b"\r\n\r\n")
            headers = _headers(head)
            if "chunked" in headers.get("transfer-encoding", ""):
                engine.sendall(head + b"\r\n\r\n" + pending)
                return _pipe(client, engine)
            size = int(headers.get("content-length", "0"))
            while len(pending) < size:
                chunk = client.recv(65536)
                if not chunk:
                    break
                pending += chunk
            body, pending = pending[:size], pending[size:]
            found = EXEC_START.match(head)
            if found:
                with state.lock:
                    state.rule = self._rule_for(found.group(1).decode())
            engine.sendall(head + b"\r\n\r\n" + body)
            if "upgrade" in headers:
                engine.sendall(pending)
                return _pipe(client, engine)  # stdin, then its end

    def _rule_for(self, exec_id: str) -> Rule | None:
        argv = self._argv(exec_id)
        with self._lock:
            self.starts.append(argv)
            for rule in self.rules:
                if rule.times > 0 and rule.word in argv:
                    rule.times -= 1
                    self.spoiled.append((rule.mode, argv))
                    return rule
        return None

    def _argv(self, exec_id: str) -> str:
        conn = _EngineConnection(self.engine)
        conn.request("GET", f"/exec/{exec_id}/json")
        found = json.loads(conn.getresponse().read())
        conn.close()
        process = found.get("ProcessConfig") or {}
        return " ".join([process.get("entrypoint", ""), *(process.get("arguments") or [])])

    def _answers(self, engine: socket.socket, client: socket.socket, state: _Connection) -> None:
        """Engine to client: passed through, except the answer to a spoiled exec start."""
        try:
            while chunk := engine.recv(65536):
                with state.lock:
                    rule = state.rule
                if rule is not None:
                    return _spoil(rule, chunk, engine, client)
                client.sendall(chunk)
        except OSError:
            pass
        finally:
            _shutdown(client)


def _spoil(rule: Rule, first: bytes, engine: socket.socket, client: socket.socket) -> None:
    data = first
    while b"\r\n\r\n" not in data and (chunk := engine.recv(65536)):
        data += chunk
    head, _, stream = data.partition(b"\r\n\r\n")
    head += b"\r\n\r\n"
    if rule.mode != "coalesce":
        client.sendall(head)
    while chunk := engine.recv(65536):  # the command runs to its end either way
        stream += chunk
    if rule.mode == "coalesce":
        client.sendall(head + stream)
    elif rule.mode == "cut":
        client.sendall(stream[: rule.keep])


def _pipe(source: socket.socket, target: socket.socket) -> None:
    while chunk := source.recv(65536):
        target.sendall(chunk)
    _shutdown(target)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)


def _headers(head: bytes) -> dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    pairs = (line.split(":", 1) for line in lines if ":" in line)
    return {name.strip().lower(): value.strip().lower() for name, value in pairs}
