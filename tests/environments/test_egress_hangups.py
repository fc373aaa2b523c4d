"""The era build's egress proxy answers a client that hung up before its answer quietly: the user
saw `BrokenPipeError` tracebacks from its threads during numpy's era build."""

from __future__ import annotations

import socket
import threading

from environments.egress import _Allowed, answer


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
