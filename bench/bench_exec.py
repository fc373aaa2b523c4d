"""How often an exec's output is lost, and what each way of reading an exec does about it.

Under CPU load the output of a short exec (`echo x`, `id -u`) sometimes never reaches the caller
while the engine says the command exited 0. The bytes are not lost by the engine: docker-py parses
the exec's `101 UPGRADED` answer with http.client, whose buffered reader may already hold the
first frames when they came in the same read as the headers; docker-py then reads the raw socket
past that buffer (docker/docker-py#3332). Each way below runs `--execs` short execs spread over
`--workers` processes against one container, idle and again beside `--hogs` busy loops:

- sdk: docker-py's `exec_start(stream=True)`, as prchain read execs before;
- trailer: the same, the command wrapped to print a per-exec nonce after it: a missing nonce
  proves the output incomplete (detection only);
- gate: stdin attached, the wrapper reads one byte before the command and the host sends it once
  the stream is attached (prevention of loss of output written before that);
- buffered: frames read through http.client's buffered reader, not the raw socket past it;
- prchain: `DockerClient.exec`, what every exec of prchain goes through.

A lost output is one that differs from what the command prints; `detected` counts those a missing
trailer gave away (or that DockerClient.exec refused with ExecOutputLost).

Usage: python bench/bench_exec.py [--execs 300] [--workers 3] [--hogs 3] [--ways sdk,gate,...]
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.core.errors import EnvironmentFailure  # noqa: E402
from prchain.environments.cleanup import (
    install_handlers,  # noqa: E402
    owner_labels,  # noqa: E402
)
from prchain.environments.config import EnvironmentConfig  # noqa: E402
from prchain.environments.docker_client import ContainerSpec, DockerClient  # noqa: E402
from prchain.environments.images import ensure_base_image  # noqa: E402

COMMANDS = [(["echo", "x"], b"x\n"), (["id", "-u"], b"0\n")]
TRAILER = 'n=$1; shift; "$@"; rc=$?; printf "%s %d\\n" "$n" "$rc"; exit "$rc"'
GATE = 'IFS= read -r _; "$@"'


@dataclass
class Tally:
    execs: int = 0
    lost: int = 0
    detected: int = 0
    seconds: float = 0.0


def _frames(reader: Any) -> Iterator[bytes]:
    """The payloads of an exec's multiplexed stream, read through a file-like reader."""
    while len(header := reader.read(8)) == 8:
        _stream, size = struct.unpack(">BxxxL", header)
        if size:
            yield reader.read(size)


def _sdk(api: Any, cid: str, argv: list[str]) -> tuple[bytes, bool]:
    eid = api.exec_create(cid, argv)["Id"]
    out = b"".join(api.exec_start(eid, stream=True))
    api.exec_inspect(eid)
    return out, False


def _trailer(api: Any, cid: str, argv: list[str]) -> tuple[bytes, bool]:
    nonce = secrets.token_hex(16)
    out, _ = _sdk(api, cid, ["sh", "-c", TRAILER, "sh", nonce, *argv])
    body, found, _rest = out.rpartition(nonce.encode() + b" 0\n")
    return (body, False) if found else (out, True)


def _gate(api: Any, cid: str, argv: list[str]) -> tuple[bytes, bool]:
    from docker.utils.socket import frames_iter

    eid = api.exec_create(cid, ["sh", "-c", GATE, "sh", *argv], stdin=True)["Id"]
    sock = api.exec_start(eid, socket=True)
    sock._sock.sendall(b"\n")  # the stream is attached once exec_start has answered
    out = b"".join(chunk for _stream, chunk in frames_iter(sock, tty=False))
    sock.close()
    api.exec_inspect(eid)
    return out, False


def _buffered(api: Any, cid: str, argv: list[str]) -> tuple[bytes, bool]:
    eid = api.exec_create(cid, argv)["Id"]
    sock = api.exec_start(eid, socket=True)
    out = b"".join(_frames(sock._response.raw._fp.fp))
    sock.close()
    api.exec_inspect(eid)
    return out, False


def _prchain(client: DockerClient, cid: str, argv: list[str]) -> tuple[bytes, bool]:
    try:
        raw = client.exec(cid, argv, user="root", workdir="/", env={}, limit=1 << 20)
    except EnvironmentFailure:  # ExecOutputLost: the loss was detected and refused
        return b"", True
    return raw.output, False


WAYS: dict[str, Callable[[Any, str, list[str]], tuple[bytes, bool]]] = {
    "sdk": _sdk,
    "trailer": _trailer,
    "gate": _gate,
    "buffered": _buffered,
    "prchain": _prchain,
}


def _worker(way: str, cid: str, execs: int) -> Tally:
    """One process's share; processes, not threads: the GIL would space the execs out."""
    client = DockerClient()
    target = client if way == "prchain" else client.api
    tally = Tally()
    for i in range(execs):
        argv, expected = COMMANDS[i % len(COMMANDS)]
        out, detected = WAYS[way](target, cid, argv)
        tally.execs += 1
        tally.lost += out != expected
        tally.detected += detected
    return tally


def _measure(way: str, cid: str, execs: int, workers: int) -> Tally:
    start = time.monotonic()
    with ProcessPoolExecutor(workers) as pool:
        shares = [pool.submit(_worker, way, cid, execs // workers) for _ in range(workers)]
        parts = [share.result() for share in shares]
    return Tally(
        sum(p.execs for p in parts),
        sum(p.lost for p in parts),
        sum(p.detected for p in parts),
        time.monotonic() - start,
    )


def _hogs(count: int, seconds: int) -> list[subprocess.Popen[bytes]]:
    """Busy loops on the host, each ended by `timeout` should this script die first."""
    loop = ["timeout", str(seconds), "sh", "-c", "while :; do :; done"]
    return [subprocess.Popen(loop, start_new_session=True) for _ in range(count)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--execs", type=int, default=300, help="execs per way and load")
    parser.add_argument("--workers", type=int, default=3, help="processes running execs at once")
    parser.add_argument("--hogs", type=int, default=3, help="busy loops for the loaded runs")
    parser.add_argument("--ways", default="sdk,trailer,gate,buffered,prchain")
    args = parser.parse_args()
    client = DockerClient()
    config = EnvironmentConfig()
    ensure_base_image(client, config, lambda _m: None)
    name = f"prchain-bench-exec-{secrets.token_hex(4)}"
    spec = ContainerSpec(config.base_image, name, {**owner_labels(), "prchain.kind": "bench"}, {})
    cid = client.run(spec)
    print(f"{'way':<10} {'load':<8} {'execs':>6} {'lost':>5} {'detected':>9} {'exec/s':>7}")
    failed = False
    try:
        for label, hogs in (("idle", 0), (f"{args.hogs} hogs", args.hogs)):
            for key in args.ways.split(","):
                loops = _hogs(hogs, 900)
                try:
                    tally = _measure(key, cid, args.execs, args.workers)
                finally:
                    for loop in loops:  # the whole group: the loop too, not only `timeout`
                        os.killpg(loop.pid, signal.SIGKILL)
                        loop.wait()
                rate = tally.execs / tally.seconds
                print(
                    f"{key:<10} {label:<8} {tally.execs:>6} {tally.lost:>5} "
                    f"{tally.detected:>9} {rate:>7.1f}",
                    flush=True,
                )
                failed |= key == "prchain" and tally.lost > tally.detected
    finally:
        client.remove_container(cid)
    print("prchain: every lost output detected: " + ("NO" if failed else "yes"))
    return 1 if failed else 0


if __name__ == "__main__":
    install_handlers()  # a SIGTERM then runs the `finally` that removes what the bench made
    sys.exit(main())
