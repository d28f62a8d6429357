"""Loopback servers that misbehave, for robustness tests of the client, preflight and ``run``.

Each runs in a daemon thread on a free port and speaks just enough HTTP/1.1 to misbehave on
purpose: never answer, answer HTML, answer bytes that are not HTTP, close the connection, or
answer preflight's three probes correctly and garbage, a trickle or a flood afterwards.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum

GARBAGE = b"\x00\x17\xfe\xffNOT HTTP AT ALL\r\n\x89PNG\r\n\r\n"


class Behaviour(StrEnum):
    SILENT = "silent"  # accepts, reads the request, never answers
    HTML = "html"  # 200 text/html to everything
    GARBAGE = "garbage"  # bytes that are not an HTTP response
    CLOSE = "close"  # reads the request, then closes the connection without a response
    PREFLIGHT_ONLY = "preflight-only"  # preflight's probes answered well, garbage afterwards
    CANNED = "canned"  # the same given response to everything
    PREFLIGHT_THEN_SILENT = "preflight-then-silent"  # preflight answered, then no answers
    PREFLIGHT_THEN_CANNED = "preflight-then-canned"  # preflight answered, then the given response
    # preflight answered, then a status line and headers one byte every TRICKLE_INTERVAL_S, forever
    TRICKLE_HEADERS = "trickle-headers"
    # preflight answered, then complete headers and a body one byte every TRICKLE_INTERVAL_S
    TRICKLE_BODY = "trickle-body"
    HUGE = "huge"  # preflight answered, then a JSON body of HUGE_BYTES, generated as it is sent


TRICKLE_INTERVAL_S = 0.2
HUGE_BYTES = 60 * 1024 * 1024


def canned(
    status: str, body: bytes, content_type: str = "application/json", **headers: str
) -> bytes:
    """A complete HTTP response for ``hostile_server(Behaviour.CANNED, response=...)``."""
    extra = "".join(f"{name.replace('_', '-')}: {value}\r\n" for name, value in headers.items())
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


def closed_port() -> int:
    """A loopback port with nothing listening on it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _read_request(conn: socket.socket) -> tuple[str, str] | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        body += chunk
    method, target, _ = lines[0].split(" ", 2)
    return method, target


def _preflight_answer(method: str, target: str) -> bytes | None:
    path = target.split("?", 1)[0]
    if method == "GET" and path == "/v1/payments":
        return canned("200 OK", b'{"payments": []}')
    if method == "GET" and path == "/v1/statements":
        statement = {"lines": [], "reconciles": True, "opening_canonical": "0"}
        return canned("200 OK", json.dumps(statement).encode())
    return None


def _serve(
    conn: socket.socket, behaviour: Behaviour, stop: threading.Event, response: bytes
) -> None:
    with conn:
        while not stop.is_set():
            try:
                request = _read_request(conn)
            except OSError:
                return
            if request is None or behaviour is Behaviour.CLOSE:
                return
            if behaviour is Behaviour.SILENT:
                stop.wait()
                return
            if behaviour is Behaviour.CANNED:
                conn.sendall(response)
                continue
            if behaviour is Behaviour.HTML:
                page = b"<!doctype html><html><body><h1>Welcome</h1></body></html>"
                conn.sendall(canned("200 OK", page, "text/html; charset=utf-8"))
                continue
            preflight = behaviour in {
                Behaviour.PREFLIGHT_ONLY,
                Behaviour.PREFLIGHT_THEN_SILENT,
                Behaviour.PREFLIGHT_THEN_CANNED,
                *_STREAMED,
            }
            answer = _preflight_answer(*request) if preflight else None
            if answer is not None:
                conn.sendall(answer)
                continue
            if behaviour is Behaviour.PREFLIGHT_THEN_SILENT:
                stop.wait()
                return
            if behaviour is Behaviour.PREFLIGHT_THEN_CANNED:
                conn.sendall(response)
                continue
            if behaviour in _STREAMED:
                _stream(conn, behaviour, stop)
                return
            conn.sendall(GARBAGE)
            return


_STREAMED = frozenset({Behaviour.TRICKLE_HEADERS, Behaviour.TRICKLE_BODY, Behaviour.HUGE})


def _stream(conn: socket.socket, behaviour: Behaviour, stop: threading.Event) -> None:
    """Send a slow or huge response until it is done, the client hangs up or the server stops."""
    try:
        if behaviour is Behaviour.HUGE:  # [0,0,...,0]: valid JSON, HUGE_BYTES long
            chunk = b"0," * 32768
            count = (HUGE_BYTES - 3) // len(chunk)
            length = 1 + count * len(chunk) + 2
            conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\n".encode())
            conn.sendall(b"Content-Type: application/json\r\n\r\n[")
            for _ in range(count):
                conn.sendall(chunk)
            conn.sendall(b"0]")
            return
        if behaviour is Behaviour.TRICKLE_BODY:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
            conn.sendall(b"Content-Length: 1000000\r\n\r\n")
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        while not stop.wait(TRICKLE_INTERVAL_S):
            conn.sendall(b"0")
    except OSError:
        return


@contextmanager
def hostile_server(behaviour: Behaviour, response: bytes = b"") -> Iterator[str]:
    """``with hostile_server(Behaviour.HTML) as base_url: ...``"""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.1)
    stop = threading.Event()

    def accept_loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            threading.Thread(
                target=_serve, args=(conn, behaviour, stop, response), daemon=True
            ).start()

    thread = threading.Thread(target=accept_loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=2)
        listener.close()
