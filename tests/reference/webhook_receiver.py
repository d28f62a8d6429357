"""A webhook receiver for the tests: a threaded HTTP server on a free loopback port.

It records every POST (path, headers, body) and answers with the next status of ``statuses``
(then 200), so a test can make the first attempts fail and watch the retries.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes


class WebhookReceiver:
    def __init__(self, statuses: Iterable[int] = ()) -> None:
        self.received: list[Received] = []
        self._statuses = list(statuses)
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                with receiver._arrived:
                    receiver.received.append(
                        Received(
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                        )
                    )
                    status = receiver._statuses.pop(0) if receiver._statuses else 200
                    receiver._arrived.notify_all()
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/hooks"

    def wait_for(
        self, predicate: Callable[[list[Received]], bool], timeout: float = 10.0
    ) -> list[Received]:
        """Block until ``predicate(received)`` holds; a copy of what arrived, or AssertionError."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while not predicate(self.received):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"webhooks not received in {timeout}s: {self.received}")
                self._arrived.wait(left)
            return list(self.received)

    def __enter__(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
