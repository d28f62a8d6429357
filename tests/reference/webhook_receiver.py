"""A webhook receiver for the tests: a threaded HTTP server on a free loopback port.

It records every POST (path, headers, body) and answers with the next status of ``statuses``
(then 200), so a test can make the first attempts fail and watch the retries; with ``location``
every answer carries that ``Location`` header (a redirect, with a 3xx status).
``HostileReceiver`` answers a huge body or trickles its status line, and counts what it sent.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
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
    def __init__(self, statuses: Iterable[int] = (), location: str | None = None) -> None:
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
                if location is not None:
                    self.send_header("location", location)
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


class HostileReceiver:
    """A raw-socket receiver that reads each POST, then misbehaves on purpose.

    ``huge``: a 200 status line, then a body of ``huge_bytes`` generated as it is sent.
    ``trickle``: a status line one byte every ``interval`` seconds, never finished.
    It counts what a dispatcher can be held to: connections, the most open at once, the bytes it
    managed to send, and the connections that ended (the dispatcher hung up, or ``close``).
    """

    def __init__(self, behaviour: str, *, huge_bytes: int = 0, interval: float = 0.1) -> None:
        assert behaviour in ("huge", "trickle")
        self.behaviour = behaviour
        self.huge_bytes = huge_bytes
        self.interval = interval
        self.connections = 0
        self.max_open = 0
        self.sent = 0
        self.ended = 0
        self._open: set[socket.socket] = set()
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def url(self, path: str = "/hooks") -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}{path}"

    def wait_for(self, predicate: Callable[[HostileReceiver], bool], timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"{self.behaviour} receiver: condition not met in {timeout}s "
                        f"(connections {self.connections}, ended {self.ended}, sent {self.sent})"
                    )
                self._changed.wait(left)

    def forget_max_open(self) -> None:
        """Count ``max_open`` from now on (from the connections open now)."""
        with self._changed:
            self.max_open = len(self._open)

    def _accept(self) -> None:
        self._listener.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            # A small send buffer: what the kernel holds for a dispatcher that stopped reading
            # stays small next to what the dispatcher itself read.
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
            with self._changed:
                self.connections += 1
                self._open.add(conn)
                self.max_open = max(self.max_open, len(self._open))
                self._changed.notify_all()
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            self._read_request(conn)
            if self.behaviour == "huge":
                head = f"HTTP/1.1 200 OK\r\nContent-Length: {self.huge_bytes}\r\n\r\n"
                self._send(conn, head.encode())
                chunk = b"x" * 65536
                left = self.huge_bytes
                while left > 0 and not self._stop.is_set():
                    self._send(conn, chunk[:left])
                    left -= len(chunk)
            else:  # "HTTP/1.1 200 OKKKK...": the line never ends; a send fails once hung up
                for byte in itertools.chain(b"HTTP/1.1 200 O", itertools.repeat(ord("K"))):
                    if self._stop.wait(self.interval):
                        break
                    self._send(conn, bytes([byte]))
        except OSError:
            pass  # the dispatcher hung up
        finally:
            with self._changed:
                self._open.discard(conn)
                self.ended += 1
                self._changed.notify_all()
            conn.close()

    def _send(self, conn: socket.socket, data: bytes) -> None:
        conn.sendall(data)
        with self._changed:
            self.sent += len(data)

    @staticmethod
    def _read_request(conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                raise ConnectionError("no request")
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.decode("latin-1").split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                raise ConnectionError("short body")
            body += chunk

    def __enter__(self) -> HostileReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop serving and end the open connections (a dispatcher waiting on them sees EOF)."""
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()
        with self._changed:
            for conn in self._open:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
