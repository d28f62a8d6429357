"""The suite's webhook receiver: an HTTP server in a background thread.

It records the requests it gets (method, path, headers, raw body, arrival time, the status it
answered) and answers per path: 200 unless the path was told otherwise (``answer(path, 500)``
makes a "failing" path). It binds 127.0.0.1 on a free port unless ``--webhook-bind`` names
another address; the server under test reaches it at ``public_url`` (``--webhook-url`` when the
server is remote, else the bound address).

What it keeps is bounded (``ReceiverLimits``): a count and bytes per path and in all. A request
over them is read off the connection in small pieces, answered as usual, dropped and counted per
path; a body over the per-body cap is refused with 413 without being read (the connection is
closed). ``counts()`` says what was kept and dropped; the checks judge what was kept.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BufferedIOBase
from types import TracebackType
from urllib.parse import urlsplit

from conformance.core.receiver_counts import PathDrops, ReceiverCounts

DEFAULT_BIND_HOST = "127.0.0.1"
MAX_BODY_BYTES = 1024 * 1024
DEFAULT_STATUS = 200
TOO_LARGE = 413
READ_CHUNK = 64 * 1024  # a dropped body is read off the connection this much at a time
TRACKED_PATHS = 64  # paths whose drops are counted apart; the others under OTHER_PATHS
OTHER_PATHS = "(other paths)"


@dataclass(frozen=True)
class ReceiverLimits:
    """What the receiver keeps. The delivery scenario expects a few dozen webhooks of a few KiB
    (each event type once per endpoint, the failing path's retries), so the bounds are far above
    a conformant server's traffic and far below a flood's (1,000 bodies of 1 MiB kept were a
    1 GB runner). An event body is a few KiB: one above ``body_bytes`` is refused."""

    body_bytes: int = MAX_BODY_BYTES
    per_path: int = 200
    per_path_bytes: int = 4 * 1024 * 1024
    total: int = 1000
    total_bytes: int = 16 * 1024 * 1024


DEFAULT_LIMITS = ReceiverLimits()


class ReceiverOptionError(ValueError):
    """``--webhook-url`` / ``--webhook-bind`` that cannot be used; the message says why."""


@dataclass(frozen=True)
class Received:
    """One request the receiver got."""

    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes
    at: float  # time.time() when it arrived
    answered: int  # the status the receiver answered

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def parse_bind(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for IPv6) -> ``(host, port)``."""
    host, sep, port_text = value.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ReceiverOptionError(
            f"--webhook-bind must be HOST:PORT (e.g. 127.0.0.1:8088), not {value!r}"
        )
    return host.removeprefix("[").removesuffix("]"), int(port_text)


def check_public_url(value: str) -> str:
    try:
        parts = urlsplit(value)
    except ValueError:  # "Invalid IPv6 URL": a bracket that does not close
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ReceiverOptionError(
            f"--webhook-url must be an absolute http:// or https:// url, not {value!r}"
        )
    return value.rstrip("/")


def bind_address(public_url: str | None, bind: str | None) -> tuple[str, int]:
    """Where to listen: ``--webhook-bind``; else 127.0.0.1 on the port of ``--webhook-url``
    when it names one; else 127.0.0.1 on a free port."""
    if bind is not None:
        return parse_bind(bind)
    if public_url is not None:
        port = urlsplit(public_url).port
        if port is None:
            raise ReceiverOptionError(
                "--webhook-url names no port: give --webhook-bind HOST:PORT, the address "
                "the url forwards to"
            )
        return DEFAULT_BIND_HOST, port
    return DEFAULT_BIND_HOST, 0


def _discard(stream: BufferedIOBase, length: int) -> None:
    """Read ``length`` bytes off ``stream``, a piece at a time, keeping none."""
    while length > 0:
        piece = stream.read(min(READ_CHUNK, length))
        if not piece:
            return
        length -= len(piece)


class _IPv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class WebhookReceiver:
    """``with WebhookReceiver(...) as receiver:`` records requests until the block ends."""

    def __init__(
        self,
        host: str = DEFAULT_BIND_HOST,
        port: int = 0,
        public_url: str | None = None,
        limits: ReceiverLimits | None = None,
    ) -> None:
        self.received: list[Received] = []
        self.limits = limits or DEFAULT_LIMITS
        self._answers: dict[str, int] = {}
        self._lock = threading.RLock()  # a wait_for predicate may take a snapshot
        self._arrived = threading.Condition(self._lock)
        self._kept_bytes = 0
        self._kept_at: dict[str, tuple[int, int]] = {}  # path -> requests and bytes kept
        self._drops: dict[str, PathDrops] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _record(self) -> None:
                length_text = (self.headers.get("content-length") or "0").strip()
                length = int(length_text) if length_text.isdigit() else 0
                path = self.path.split("?", 1)[0]
                size = length + sum(len(k) + len(v) + 4 for k, v in self.headers.items())
                if length > receiver.limits.body_bytes:
                    receiver._drop(path, size, refused=True)
                    self.close_connection = True  # the body is never read
                    self._answer(TOO_LARGE, close=True)
                    return
                kept = receiver._admit(path, size)
                body = self.rfile.read(length) if kept and length > 0 else b""
                if not kept:
                    _discard(self.rfile, length)
                with receiver._arrived:
                    status = receiver._answers.get(path, DEFAULT_STATUS)
                    if kept:
                        receiver.received.append(
                            Received(
                                method=self.command,
                                path=path,
                                headers={k.lower(): v for k, v in self.headers.items()},
                                body=body,
                                at=time.time(),
                                answered=status,
                            )
                        )
                        receiver._arrived.notify_all()
                self._answer(status)

            def _answer(self, status: int, close: bool = False) -> None:
                self.send_response(status)
                self.send_header("content-length", "0")
                if close:
                    self.send_header("connection", "close")
                self.end_headers()

            do_POST = do_PUT = do_GET = do_PATCH = do_DELETE = _record

            def log_message(self, format: str, *args: object) -> None:
                return

        server_class = _IPv6Server if ":" in host else ThreadingHTTPServer
        self._server = server_class((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="webhook-receiver", daemon=True
        )
        address = self._server.server_address
        bound_host, bound_port = str(address[0]), int(address[1])
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        self.public_url = public_url or f"http://{shown}:{bound_port}"

    @property
    def public_host(self) -> str:
        return urlsplit(self.public_url).hostname or ""

    def url(self, path: str) -> str:
        """The url the server under test posts to for ``path`` (which starts with ``/``)."""
        return self.public_url + path

    def answer(self, path: str, status: int) -> None:
        """Answer requests to ``path`` with ``status`` from now on."""
        with self._lock:
            self._answers[path] = status

    def _admit(self, path: str, size: int) -> bool:
        """Whether a request of ``size`` bytes to ``path`` is kept (counted either way)."""
        limits = self.limits
        with self._lock:
            count, kept_bytes = self._kept_at.get(path, (0, 0))
            if (
                count < limits.per_path
                and kept_bytes + size <= limits.per_path_bytes
                and len(self.received) < limits.total
                and self._kept_bytes + size <= limits.total_bytes
            ):
                self._kept_at[path] = (count + 1, kept_bytes + size)
                self._kept_bytes += size
                return True
        self._drop(path, size)
        return False

    def _drop(self, path: str, size: int, refused: bool = False) -> None:
        with self._lock:
            if path not in self._drops and len(self._drops) >= TRACKED_PATHS:
                path = OTHER_PATHS
            was = self._drops.get(path, PathDrops(path))
            self._drops[path] = PathDrops(
                path, was.deliveries + 1, was.bytes + size, was.refused + refused
            )

    def dropped_at(self, path: str) -> PathDrops | None:
        """What was dropped of the requests to ``path`` (None: nothing was). Past
        ``TRACKED_PATHS`` paths, a path's drops are counted under ``OTHER_PATHS``."""
        with self._lock:
            return self._drops.get(path) or self._drops.get(OTHER_PATHS)

    def counts(self) -> ReceiverCounts:
        with self._lock:
            return ReceiverCounts(len(self.received), self._kept_bytes, tuple(self._drops.values()))

    def snapshot(self) -> list[Received]:
        with self._lock:
            return list(self.received)

    def wait_for(
        self, predicate: Callable[[list[Received]], bool], timeout: float
    ) -> tuple[bool, list[Received]]:
        """Block until ``predicate(received)`` holds or ``timeout`` passes: (held, a copy)."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while not predicate(self.received):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False, list(self.received)
                self._arrived.wait(left)
            return True, list(self.received)

    def start(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()  # returns once serve_forever has left its loop
        self._thread.join()
        self._server.server_close()

    def __enter__(self) -> WebhookReceiver:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
