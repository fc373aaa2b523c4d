"""The era build's egress proxy answers a client that hung up before its answer quietly: the user
saw `BrokenPipeError` tracebacks from its threads during numpy's era build."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from prchain.environments import egress
from prchain.environments.egress import _Allowed, answer


def test_a_client_gone_before_its_answer_is_no_error_and_the_upstream_is_closed() -> None:
    upstream = socket.create_server(("127.0.0.1", 0))
    port = upstream.getsockname()[1]
    seen: list[bytes] = []

    def serve() -> None:
        conn, _ = upstream.accept()
        with conn:
            conn.settimeout(10)
            seen.append(conn.recv(100))  # b"": the proxy closed its side

    reader = threading.Thread(target=serve)
    reader.start()
    client, proxy_side = socket.socketpair()
    client.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
    client.close()  # gone before the proxy answers "200 Connection established"
    try:
        answer(proxy_side, _Allowed(frozenset(), frozenset({("127.0.0.1", port)})))
    finally:
        proxy_side.close()
    reader.join(10)
    upstream.close()
    assert seen == [b""]


def test_a_tunnel_relays_bytes_when_the_process_holds_descriptors_past_1024() -> None:
    """The suite's era builds failed with `filedescriptor out of range in select()` once the test
    process held more than 1024 descriptors: the tunnel now waits on a selector."""
    held = []
    with open(os.devnull) as null:
        while not held or held[-1] < 1100:
            held.append(os.dup(null.fileno()))
    upstream = socket.create_server(("127.0.0.1", 0))
    port = upstream.getsockname()[1]

    def echo() -> None:
        conn, _ = upstream.accept()
        with conn:
            conn.settimeout(10)
            conn.sendall(conn.recv(100).upper())

    echoing = threading.Thread(target=echo)
    echoing.start()
    client, proxy_side = socket.socketpair()
    assert proxy_side.fileno() > 1024
    tunnel = threading.Thread(
        target=answer,
        args=(proxy_side, _Allowed(frozenset(), frozenset({("127.0.0.1", port)}))),
    )
    try:
        tunnel.start()
        client.settimeout(10)
        client.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
        assert client.recv(100).startswith(b"HTTP/1.1 200")
        client.sendall(b"ping")
        assert client.recv(100) == b"PING"
    finally:
        client.close()
        tunnel.join(10)
        proxy_side.close()
        echoing.join(10)
        upstream.close()
        for fd in held:
            os.close(fd)


def test_a_name_that_fails_to_resolve_for_a_moment_is_asked_again_and_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host's resolver answered EAI_AGAIN to some of an npm install's parallel lookups; the
    proxy refused those tunnels and npm 6 died on "cb() never called!" (node_pcap, 2020)."""
    calls: list[str] = []
    answers = iter(
        [
            socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"),
            socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"),
            [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 443))],
        ]
    )

    def getaddrinfo(host: str, port: int, **_: object) -> object:
        calls.append(host)
        found = next(answers)
        if isinstance(found, Exception):
            raise found
        return found

    monkeypatch.setattr(egress, "RESOLVE_PAUSE", 0.0)
    monkeypatch.setattr(egress, "_resolved", {})
    monkeypatch.setattr(egress, "_resolving", {})
    monkeypatch.setattr(egress.socket, "getaddrinfo", getaddrinfo)
    assert egress.resolve("registry.example.org", 443) == "93.184.215.14"
    assert egress.resolve("Registry.example.org", 443) == "93.184.215.14"  # kept: not asked
    assert calls == ["registry.example.org"] * 3


def test_a_name_that_does_not_exist_is_refused_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def getaddrinfo(host: str, port: int, **_: object) -> object:
        calls.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(egress, "_resolved", {})
    monkeypatch.setattr(egress, "_resolving", {})
    monkeypatch.setattr(egress.socket, "getaddrinfo", getaddrinfo)
    assert egress.resolve("nowhere.example.org", 443) is None and calls == ["nowhere.example.org"]
