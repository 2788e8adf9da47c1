"""Slow clients cannot lock others out, and a body declared too large is refused at once
(issue 13, item 7).

Before: 150 clients sending a header byte per second left 0 of 30 normal requests served
(waitress's default limit of 100 connections, and a trickle kept each one alive), and a
request declaring a 100 MB body was read to its end before being refused.

Raw sockets on 127.0.0.1; every socket has a timeout, so a regression fails the test
instead of hanging it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from urllib.parse import urlsplit

import pytest

from tests.helpers.http import Client
from tests.helpers.logs import write_logs
from tests.helpers.server import serving

PARTIAL = b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(write_logs(tmp_path_factory.mktemp("conn"))) as handle:
        yield handle


@pytest.fixture
def short_timeouts(monkeypatch):
    """A 1 s header deadline instead of 10 s, so the tests are quick."""
    try:
        import visualdl.server.connections as connections
    except ImportError:  # the code before the fix: the default timeouts apply (and fail)
        return
    monkeypatch.setattr(connections, "HEADER_TIMEOUT", 1.0)


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname, parts.port


def _connect(url: str, timeout: float = 10.0) -> socket.socket:
    return socket.create_connection(_address(url), timeout=timeout)


def _read_response(sock: socket.socket) -> bytes:
    """Everything until the server closes the connection (or the socket times out)."""
    chunks = []
    while True:
        data = sock.recv(65536)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def test_normal_requests_are_served_next_to_150_slow_clients(server):
    with contextlib.ExitStack() as stack:
        for _ in range(150):
            sock = stack.enter_context(_connect(server.url))
            sock.sendall(PARTIAL)
        client = Client(server.url, timeout=15)
        try:
            statuses = [client.get("/api/runs").status_code for _ in range(10)]
        finally:
            client.close()
    assert statuses == [200] * 10


def test_a_client_trickling_its_headers_is_disconnected(server, short_timeouts):
    with _connect(server.url, timeout=5) as sock:
        sock.sendall(PARTIAL)
        closed = False
        for _ in range(40):  # a byte every 0.25 s for at most 10 s
            time.sleep(0.25)
            try:
                sock.sendall(b"x")
            except OSError:  # reset by the server
                closed = True
                break
            sock.settimeout(0.01)
            try:
                if sock.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                pass
            except OSError:
                closed = True
                break
    assert closed, "the server kept a connection whose headers never finished"


def test_a_body_that_never_arrives_is_disconnected(server, short_timeouts):
    with _connect(server.url, timeout=10) as sock:
        sock.sendall(b"POST /api/scalars/batch HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
        assert _read_response(sock) == b""  # closed without an answer; no socket timeout


@pytest.mark.parametrize("path, declared", [("/api/scalars/batch", 100_000_000),
                                            ("/api/graph/view", 17 * 1024 * 1024),
                                            ("/api/graph/upload", 600 * 1024 * 1024)])
def test_a_declared_too_large_body_is_refused_before_it_is_sent(server, path, declared):
    with _connect(server.url, timeout=10) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
                     .encode())
        response = _read_response(sock)  # no body sent: an answer now, not a wait
    head, _, body = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 "), head
    assert b"Content-Type: application/json" in head
    assert f"declares {declared} bytes".encode() in json.loads(body)["error"].encode()


def test_an_upload_under_its_own_limit_is_read(server):
    """The graph upload may be larger than the 16 MB of other routes: read, then judged."""
    client = Client(server.url, timeout=60)
    try:
        response = client.post("/api/graph/upload", data=b"\0" * (17 * 1024 * 1024),
                               params={"name": "junk.onnx"})
    finally:
        client.close()
    assert response.status_code == 400, response.text[:200]
    assert "onnx" in response.json()["error"].lower()
