"""A loopback proxy that rate limits: a share of the requests is answered 429, the rest forwarded.

``RateLimitingProxy(upstream, every=5)`` answers every fifth request itself, with 429 (or the
given status), ``Retry-After`` (unless None) and an error body with ``code``; every other request
goes to ``upstream`` byte for byte (without ``upstream``: a 200 ``{}``). ``first=n`` limits the
first n requests instead. What it answered is counted, so tests can compare with the reports.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "host", "content-length"}


class RateLimitingProxy:
    def __init__(
        self,
        upstream: str | None = None,
        *,
        every: int = 0,
        first: int = 0,
        status: int = 429,
        retry_after: str | None = "1",
        code: str = "rate_limited",
    ) -> None:
        self.upstream = urlsplit(upstream) if upstream else None
        self.every = every
        self.first = first
        self.status = status
        self.retry_after = retry_after
        self.code = code
        self.seen = 0
        self.limited = 0
        self.forwarded: list[tuple[str, str, dict[str, str], bytes]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _limit_this(self) -> bool:
        with self._lock:
            self.seen += 1
            limit = self.seen <= self.first or (self.every > 0 and self.seen % self.every == 0)
            self.limited += limit
            return limit

    @contextmanager
    def running(self) -> Iterator[RateLimitingProxy]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if proxy._limit_this():
                    payload = json.dumps({"code": proxy.code, "message": "slow down"}).encode()
                    headers = (
                        {} if proxy.retry_after is None else {"Retry-After": proxy.retry_after}
                    )
                    self._reply(proxy.status, headers, payload)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                with proxy._lock:
                    proxy.forwarded.append((self.command, self.path, headers, body))
                if proxy.upstream is None:
                    self._reply(200, {}, b"{}")
                    return
                connection = http.client.HTTPConnection(
                    proxy.upstream.hostname or "127.0.0.1", proxy.upstream.port, timeout=30
                )
                try:
                    connection.request(self.command, self.path, body=body, headers=headers)
                    answer = connection.getresponse()
                    data = answer.read()
                    kept = {k: v for k, v in answer.getheaders() if k.lower() not in HOP_BY_HOP}
                    self._reply(answer.status, kept, data)
                finally:
                    connection.close()

            def _reply(self, status: int, headers: dict[str, str], body: bytes) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if "content-type" not in {k.lower() for k in headers}:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def __getattr__(self, name: str) -> Any:
                # every method is forwarded, QUERY and made-up ones too (schemathesis sends them)
                if name.startswith("do_"):
                    return self._handle
                raise AttributeError(name)

            def log_message(self, format: str, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()
