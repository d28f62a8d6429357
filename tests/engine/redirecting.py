"""Two loopback servers for the redirect tests: one that redirects, one that counts.

``redirecting_server(to)`` answers preflight's probes as the API would until the first request
that is not one of them, then ``307`` with ``Location: <to><same path and query>`` to every
request: a hostile server sending the suite's signed requests to another host.
``counting_server()`` is that other host: it answers every request with an empty JSON object and
remembers the method and path of each.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Seen:
    """What the counting server received, as ``METHOD /path`` lines."""

    requests: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, method: str, path: str) -> None:
        with self.lock:
            self.requests.append(f"{method} {path}")

    @property
    def posts(self) -> int:
        return sum(1 for line in self.requests if line.startswith("POST "))


def _preflight_answer(method: str, path: str) -> dict[str, object] | None:
    path = path.split("?", 1)[0]
    if method == "GET" and path == "/v1/payments":
        return {"payments": []}
    if method == "GET" and path == "/v1/statements":
        return {"lines": [], "reconciles": True, "opening_canonical": "0"}
    return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    redirect_to: str | None = None  # set on subclasses
    seen: Seen | None = None
    preflight_over: threading.Event | None = None

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the tests read ``Seen``, not a log."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.seen is not None:
            self.seen.add(self.command, self.path)
        preflight = _preflight_answer(self.command, self.path)
        if self.preflight_over is not None and (preflight is None or self.preflight_over.is_set()):
            self.preflight_over.set()
            self.send_response(307)
            self.send_header("Location", f"{self.redirect_to}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = json.dumps(preflight or {}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _answer


@contextmanager
def _serving(handler: type[_Handler]) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=2)


@contextmanager
def counting_server() -> Iterator[tuple[str, Seen]]:
    """``with counting_server() as (base_url, seen): ...``"""
    seen = Seen()
    handler = type("CountingHandler", (_Handler,), {"seen": seen})
    with _serving(handler) as base_url:
        yield base_url, seen


@contextmanager
def redirecting_server(to: str) -> Iterator[str]:
    """A server that sends every request but preflight's probes to ``to`` (307, same path)."""
    handler = type(
        "RedirectingHandler", (_Handler,), {"redirect_to": to, "preflight_over": threading.Event()}
    )
    with _serving(handler) as base_url:
        yield base_url
