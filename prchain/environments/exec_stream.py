"""An exec's output as it comes off the engine's stream: read whole, bounded, and proved complete.

Every exec runs in WRAPPER: the command, then one line `<nonce> <exit status>` that only the
wrapper's own end prints, so an output without it did not arrive whole. The command's stderr joins
its stdout (callers read them merged anyway): on one pipe nothing it wrote can arrive after that
line. The nonce comes in the environment (readable by the exec's uid alone) and leaves it before
the command starts. No docker import here: this works on the socket docker-py hands back.
"""

from __future__ import annotations

import contextlib
import io
import re
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Literal

NONCE_VAR = "PRCHAIN_EXEC_END"
WRAPPER = (
    f'n=${NONCE_VAR}; unset {NONCE_VAR}; "$@" 2>&1; rc=$?; printf "%s %d\\n" "$n" "$rc"; exit "$rc"'
)
TRAILER_ROOM = 64  # bytes the tail keeps beyond its share of the limit, for the trailer line
_STATUS = re.compile(rb"\d{1,3}\n")

NotStarted = Literal["no shell", "no user", "too long"]
# What the engine writes in the stream, as the whole output, when it could not start the exec at
# all: no `sh` for the wrapper (exit 126 or 127; runc: exec: "sh": executable file not found in
# $PATH; crun: executable file `sh` not found), no `user` (name[:group]) in the image's /etc/passwd
# or /etc/group (the engine's own lookup: unable to find user X: no matching entries in passwd
# file), or an argument longer than the kernel takes (E2BIG: one argument past MAX_ARG_STRLEN,
# 128 KiB on 4 KiB pages, or all of them past ARG_MAX; runc 1.1: exec /usr/bin/sh: argument list
# too long, exit 1).
_NOT_STARTED: dict[NotStarted, re.Pattern[bytes]] = {
    "no shell": re.compile(
        rb'OCI runtime exec failed: .*["`]sh["`].*(?:not found|no such file)', re.I
    ),
    "no user": re.compile(
        rb"unable to find (?:user|group) \S+: no matching entries in (?:passwd|group) file"
    ),
    "too long": re.compile(rb"exec\b.*\bsh\b.*: argument list too long", re.I),
}


def wrapped(argv: list[str]) -> list[str]:
    return ["sh", "-c", WRAPPER, "prchain-exec", *argv]


def not_started(output: bytes) -> tuple[NotStarted, str] | None:
    """Why the engine could not start the exec, and its message, when `output` is that message
    (one line: the engine's answer, nothing of a command's) and else None."""
    said = output.decode("utf-8", "replace").strip()
    if "\n" in said:
        return None
    for why, message in _NOT_STARTED.items():
        if message.search(output):
            return why, said
    return None


@dataclass
class Bounded:
    """Keeps the head and the tail of a stream, dropping the middle past `limit` bytes.

    The tail holds `reserve` bytes more while the stream runs, so the wrapper's trailer never
    pushes the command's own last bytes out; `settle` gives them back once it is stripped."""

    limit: int
    reserve: int = 0
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def feed(self, chunk: bytes) -> None:
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        self._trim(self.limit - self.limit // 2 + self.reserve)

    def _trim(self, keep: int) -> None:
        excess = len(self.tail) - keep
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def settle(self) -> None:
        self._trim(self.limit - self.limit // 2)

    def strip_trailer(self, nonce: str) -> bool:
        """Remove the wrapper's `<nonce> <status>` line from what was kept; whether it was there.

        The tail is searched first (the line is the last the wrapper wrote), then the head, then
        the seam between them; nothing of a large output is copied."""
        key = nonce.encode() + b" "
        for part in (self.tail, self.head):
            at = part.rfind(key)
            found = _STATUS.match(part, at + len(key)) if at >= 0 else None
            if found:
                del part[at : found.end()]
                return True
        return self._strip_at_seam(key)

    def _strip_at_seam(self, key: bytes) -> bool:
        width = len(key) + 4
        left = bytes(self.head[-width:])
        seam = left + bytes(self.tail[:width])
        at = seam.rfind(key)
        found = _STATUS.match(seam, at + len(key)) if at >= 0 else None
        if not found or at >= len(left) or found.end() <= len(left):
            return False
        del self.head[len(self.head) - (len(left) - at) :]
        del self.tail[: found.end() - len(left)]
        return True


def reader(sock: Any) -> IO[bytes]:
    """The exec's stream as the buffered reader http.client parsed the `101 UPGRADED` answer with.

    docker-py reads the raw socket under it, past its buffer; when the command's first frames came
    in the same read as the headers they sit in that buffer and were lost (docker/docker-py#3332).
    """
    response = getattr(sock, "_response", None)
    fp = getattr(getattr(getattr(response, "raw", None), "_fp", None), "fp", None)
    return fp if fp is not None else io.BufferedReader(sock)


def frames(stream: IO[bytes]) -> Iterator[bytes]:
    """The payloads of a multiplexed exec stream: 8-byte headers (stream, size), then the bytes."""
    while len(header := stream.read(8)) == 8:
        _stream, size = struct.unpack(">BxxxL", header)
        yield stream.read(size)


def close(sock: Any) -> None:
    """Close the stream; a reader still blocked on it (a deadline passed) wakes up and stops."""
    raw = getattr(sock, "_sock", sock)
    with contextlib.suppress(OSError):
        raw.shutdown(socket.SHUT_RDWR)
    sock.close()
