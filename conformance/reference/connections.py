"""Slow and idle clients of the reference server: a header-read timeout and a connection cap.

uvicorn has neither. Its keep-alive timeout runs only between requests, after an answer, so a
client that connects and sends nothing, or a request head a byte at a time, holds its
connection (and a file descriptor) for as long as it likes; and its ``limit_concurrency`` answers
503 to *requests* over the limit but still accepts every socket. Both are added here, in the
HTTP protocol that uvicorn runs for each connection (``GuardedProtocol``, its h11 protocol with
the two guards):

- **Header timeout.** A connection that is waiting for a request head (the first one, or the
  next one once data arrives on a kept-alive connection) and has not received it whole within
  ``header_timeout`` seconds is closed. The idle time between requests stays the keep-alive
  timeout's business.
- **Connection cap.** At most ``max_connections`` are open, so open file descriptors stay
  bounded whatever the clients do. A connection accepted at the cap closes the one idle the
  longest (waiting for a request head, or kept alive between requests), so a flood of idle
  connections cannot keep requests out; when none is idle (every one has a request running),
  the new one is answered 503
  (``Retry-After: 1``) and closed at once. Reaching the cap logs one warning line, then at most
  one every ``LOG_INTERVAL_SECS`` with the numbers since.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import resource
import time
from collections.abc import Callable
from typing import Any, ClassVar

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT_SECS = 10.0
MAX_HEADER_TIMEOUT_SECS = 3600.0
MAX_CONNECTIONS = 1000  # the default, unless the open-file limit asks for fewer
# Descriptors kept free of the cap for what else the process opens: the listening socket, the
# database, webhook deliveries, the suite's own files when the server is embedded in a run.
RESERVED_FDS = 128
LOG_INTERVAL_SECS = 10.0

log = logging.getLogger(__name__)

_BODY = json.dumps(
    {"code": "service_unavailable", "message": "too many connections open; retry shortly"},
    separators=(",", ":"),
).encode()
OVER_CAP_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
    b"content-length: " + str(len(_BODY)).encode() + b"\r\nretry-after: 1\r\n"
    b"connection: close\r\n\r\n" + _BODY
)


def open_files_limit() -> int:
    """The process's soft limit of open file descriptors (``ulimit -n``)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def default_max_connections() -> int:
    """``MAX_CONNECTIONS``, or fewer when the open-file limit leaves less room (at least 1)."""
    return max(1, min(MAX_CONNECTIONS, open_files_limit() - RESERVED_FDS))


def header_timeout(value: float) -> float:
    """``value`` seconds, when it is a usable header timeout; ValueError if not."""
    if not (math.isfinite(value) and 0 < value <= MAX_HEADER_TIMEOUT_SECS):
        raise ValueError(
            f"the header timeout must be a positive number of seconds, at most "
            f"{MAX_HEADER_TIMEOUT_SECS:g}, not {value!r}"
        )
    return float(value)


def max_connections(value: int) -> int:
    """``value`` connections, when at least 1 and within what this process may open."""
    room = open_files_limit() - RESERVED_FDS
    if value < 1:
        raise ValueError(f"the number of connections must be at least 1, not {value}")
    if value > room:
        raise ValueError(
            f"{value} connections is more than this process may keep open: its open-file "
            f"limit (ulimit -n) is {open_files_limit()}, so at most {max(room, 1)} connections"
        )
    return value


class ConnectionGuard:
    """The settings and the connections of one server, used from its event loop only."""

    def __init__(
        self,
        header_timeout: float,
        max_connections: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.header_timeout = header_timeout
        self.max_connections = max_connections
        self.clock = clock
        self.open: set[GuardedProtocol] = set()
        # Those with no request running (waiting for a head, or kept alive between requests),
        # longest idle first (dicts keep insertion order).
        self.idle: dict[GuardedProtocol, None] = {}
        self.evicted = 0  # in all: closed to make room for a new connection
        self.refused = 0  # in all: new connections answered 503
        self.timed_out = 0  # in all: closed for a request head that did not come in time
        self._unlogged = [0, 0]  # evicted, refused since the last log line
        self._logged_at: float | None = None

    def admit(self, protocol: GuardedProtocol) -> bool:
        """Whether a new connection may stay. At the cap, the connection idle the longest is
        closed to make room; when every open connection has a request running, the new one is
        refused instead (False)."""
        if len(self.open) >= self.max_connections:
            oldest = next(iter(self.idle), None)
            if oldest is None:
                self.refused += 1
                self._unlogged[1] += 1
                self._cap_reached()
                return False
            self.evicted += 1
            self._unlogged[0] += 1
            oldest.close_idle()
            self._cap_reached()
        self.open.add(protocol)
        return True

    def forget(self, protocol: GuardedProtocol) -> None:
        self.open.discard(protocol)
        self.idle.pop(protocol, None)

    def _cap_reached(self) -> str | None:
        """The log line the cap is worth now (logged), or None: the first time, then at most one
        every ``LOG_INTERVAL_SECS``."""
        now = self.clock()
        if self._logged_at is not None and now - self._logged_at < LOG_INTERVAL_SECS:
            return None
        evicted, refused = self._unlogged
        if self._logged_at is None:
            line = (
                f"reference server: {self.max_connections} connections open, its cap "
                "(--max-connections): each new one closes the connection idle the longest, or "
                "is answered 503 when every one has a request running"
            )
        else:
            line = (
                f"reference server: still at its cap of {self.max_connections} connections "
                f"(--max-connections): {evicted} idle connections closed and {refused} new "
                f"ones refused in the last {now - self._logged_at:.0f} s"
            )
        self._logged_at, self._unlogged = now, [0, 0]
        log.warning(line)
        return line


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol with the header timeout and the connection cap of ``guard``
    (``protocol_class`` makes the class of one server)."""

    guard: ClassVar[ConnectionGuard]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._refused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        if not self.guard.admit(self):
            self._refused = True  # never counted among the server's connections
            transport.write(OVER_CAP_ANSWER)
            transport.close()
            return
        super().connection_made(transport)
        self._wait_for_head()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._header_timer is None and self._between_requests():
            self._wait_for_head()  # the next request's head starts coming
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle:  # a head was read whole: its request runs
            self._stop_waiting()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        self.guard.forget(self)
        if not self._refused:
            super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._between_requests() and not self.transport.is_closing():
            self.guard.idle[self] = None  # kept alive: the keep-alive timeout runs
        else:
            self._stop_waiting()  # a pipelined request runs, or the connection closes

    def close_idle(self) -> None:
        """Close this connection, which has no request running."""
        self._stop_waiting()
        self.guard.forget(self)
        if not self.transport.is_closing():
            self.transport.close()

    def _between_requests(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _wait_for_head(self) -> None:
        self._stop_waiting()
        self._header_timer = self.loop.call_later(self.guard.header_timeout, self._head_late)
        self.guard.idle[self] = None

    def _stop_waiting(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        self.guard.idle.pop(self, None)

    def _head_late(self) -> None:
        self._header_timer = None
        # A head completed another way (a pipelined one, read after the previous answer)
        # leaves a request running: that connection is not waiting for a head.
        if self._between_requests() and not self.transport.is_closing():
            self.guard.timed_out += 1
            self.close_idle()
        else:
            self.guard.idle.pop(self, None)


def protocol_class(guard: ConnectionGuard) -> type[GuardedProtocol]:
    """The protocol class for uvicorn's ``http`` setting: one per server, sharing ``guard``."""
    return type("GuardedProtocol", (GuardedProtocol,), {"guard": guard})
