"""Bounded HTTP exchanges: a byte cap on every response body and a deadline on every request.

A hostile or broken server must not hold the suite hostage: a body of 50 MB is read only up to
``Limits.max_body_bytes`` (the rest is dropped and the connection closed), and every request gets
``Limits.deadline_s`` in all, from connect to the last body byte, however slowly the bytes come
(a server sending one byte every 5 s never trips a per-read timeout). Both clients of the suite
use these bounds:

- ``BoundedTransport`` for httpx (``SuiteClient``): a network backend clamps every socket
  operation's timeout to the time left, so a trickle in the status line, the headers or the
  body all end at the deadline;
- ``BoundedAdapter`` for the ``requests`` session schemathesis sends through: a watchdog thread
  shuts down the request's socket at the deadline, whichever phase it is in.

A deadline overrun is a timeout to the callers (``ResponseDeadlineExceeded`` is an
``httpx.ReadTimeout``, ``RequestsDeadlineExceeded`` a ``requests`` ``ReadTimeout``), with a
message that says "no complete response within N s". A body cut at the cap is marked
(``body_cut_at``) so that evidence can say so.
"""

from __future__ import annotations

import contextlib
import contextvars
import socket
import ssl
import threading
import time
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpcore
import httpx
import requests
from requests.adapters import HTTPAdapter
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from conformance.core import jsonsafe
from conformance.suite.wire import proxy, tls
from conformance.suite.wire import tap as wiretap

if TYPE_CHECKING:
    from urllib3._base_connection import BaseHTTPConnection

MAX_BODY_BYTES = 8 * 1024 * 1024
DEADLINE_S = 30.0
CHUNK_BYTES = 64 * 1024
CUT_EXTENSION = "conformance.body_cut_at"
"""httpx response extension: the byte cap the body was cut at (absent: the body is whole)."""


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = MAX_BODY_BYTES
    deadline_s: float = DEADLINE_S


DEFAULT_LIMITS = Limits()
"""Read when each request starts (tests may replace it)."""


def describe_size(size: int) -> str:
    """``8 MiB``, ``64 KiB`` or ``100 bytes``."""
    for unit, name in ((1024 * 1024, "MiB"), (1024, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} bytes"


def cut_marker(cut_at: int) -> str:
    """The line evidence of a body cut at ``cut_at`` bytes starts with (first: the reports clip
    long bodies at their end)."""
    return f"[response cut at {describe_size(cut_at)}: the server sent more; its start follows]"


class Deadline:
    """The end of one request's time, and the clamp of every timeout to what is left of it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.binding = False  # the last clamp shortened the timeout: a timeout then is ours

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def clamp(self, timeout: float | None) -> float:
        left = self.at - time.monotonic()
        if left <= 0:
            self.binding = True
            raise TimeoutError(self.message)
        self.binding = timeout is None or left < timeout
        return left if timeout is None else min(timeout, left)

    @property
    def message(self) -> str:
        return f"no complete response within {self.seconds:g} s (the server answers too slowly)"


def read_capped(chunks: Iterable[bytes], limit: int, deadline: Deadline) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of ``chunks``, and whether there were more."""
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        if size + len(chunk) > limit:
            parts.append(chunk[: limit - size])
            return b"".join(parts), True
        parts.append(chunk)
        size += len(chunk)
        if deadline.expired:
            raise TimeoutError(deadline.message)
    return b"".join(parts), False


# ------------------------------------------------------------------------------------ httpx
_DEADLINE: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "conformance_deadline", default=None
)


def _clamp(timeout: float | None, error: type[Exception]) -> float | None:
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    try:
        return deadline.clamp(timeout)
    except TimeoutError as exc:
        raise error(str(exc)) from None


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        timeout = _clamp(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sockets, each operation's timeout clamped to the current request's deadline."""

    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        timeout = _clamp(timeout, httpcore.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, timeout, local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        timeout = _clamp(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def socket_transport(verify: ssl.SSLContext) -> httpx.HTTPTransport:
    """httpx's own transport over sockets whose timeouts honour the request's deadline, through
    the run's proxy when it has one (``proxy.active``; never one from the environment)."""
    transport = httpx.HTTPTransport(verify=verify)
    limits = httpx.Limits()  # httpx's defaults, as HTTPTransport applies them
    through = proxy.active()
    if through is None:
        transport._pool = httpcore.ConnectionPool(
            ssl_context=verify,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_DeadlineBackend(),
        )
        return transport
    # as httpx.HTTPTransport(proxy=...) builds it, over the same sockets
    via = httpx.Proxy(through)
    transport._pool = httpcore.HTTPProxy(
        proxy_url=httpcore.URL(
            scheme=via.url.raw_scheme,
            host=via.url.raw_host,
            port=via.url.port,
            target=via.url.raw_path,
        ),
        proxy_auth=via.raw_auth,
        proxy_headers=via.headers.raw,
        ssl_context=verify,
        proxy_ssl_context=verify if via.url.scheme == "https" else None,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_DeadlineBackend(),
    )
    return transport


class ResponseDeadlineExceeded(httpx.ReadTimeout):
    """No complete response within the request's deadline."""


class SafeJsonResponse(httpx.Response):
    """A response whose ``json()`` refuses a body too deep or too large to parse safely
    (``jsonsafe.JsonTooComplex``, a ``ValueError``) instead of recursing into it."""

    def json(self, **kwargs: Any) -> Any:
        return jsonsafe.loads(self.content, **kwargs)


def make_response(
    original: httpx.Response, body: bytes, cut_at: int | None, request: httpx.Request
) -> httpx.Response:
    """The response the caller sees: ``original``'s status and headers with the body read.

    ``body`` is already decoded (``Content-Encoding`` undone), so it is given to a response built
    without that header, which then gets the headers as received.
    """
    extensions = dict(original.extensions)
    if cut_at is not None:
        extensions[CUT_EXTENSION] = cut_at
    decoded_headers = [
        (name, value)
        for name, value in original.headers.multi_items()
        if name.lower() not in {"content-encoding", "content-length", "transfer-encoding"}
    ]
    response = SafeJsonResponse(
        original.status_code,
        headers=decoded_headers,
        content=body,
        request=request,
        extensions=extensions,
    )
    response.headers = httpx.Headers(original.headers)
    return response


def body_cut_at(response: httpx.Response) -> int | None:
    """The byte cap ``response``'s body was cut at; None when it is whole."""
    cut = response.extensions.get(CUT_EXTENSION)
    return cut if isinstance(cut, int) else None


class BoundedTransport(httpx.BaseTransport):
    """Wraps a transport: each exchange within the deadline, each body within the byte cap."""

    def __init__(self, inner: httpx.BaseTransport, limits: Limits | None = None) -> None:
        self.inner = inner
        self.limits = limits

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        limits = self.limits or DEFAULT_LIMITS
        deadline = Deadline(limits.deadline_s)
        token = _DEADLINE.set(deadline)
        tap = wiretap.Tap.start() if wiretap.listening() else None
        try:
            original = self.inner.handle_request(request)
            if tap is not None:
                tap.headers_received()
            try:
                body, cut = read_capped(original.iter_bytes(), limits.max_body_bytes, deadline)
            finally:
                original.close()  # a body not read to its end: the connection is dropped
        except (httpx.TimeoutException, TimeoutError) as exc:
            error: Exception = exc
            if deadline.binding or deadline.expired:
                error = ResponseDeadlineExceeded(deadline.message, request=request)
            if tap is not None:
                tap.httpx_exchange(request, None, b"", None, error)
            raise error from None
        except Exception as exc:
            if tap is not None:
                tap.httpx_exchange(request, None, b"", None, exc)
            raise
        finally:
            _DEADLINE.reset(token)
        cut_at = limits.max_body_bytes if cut else None
        if tap is not None:
            tap.httpx_exchange(request, original, body, cut_at, None)
        return make_response(original, body, cut_at, request)

    def close(self) -> None:
        self.inner.close()


# --------------------------------------------------------------------------------- requests
class _Alarm:
    """One request's deadline and the connections it used, shut down when it passes."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self.connections: list[BaseHTTPConnection] = []
        self.fired = False

    def fire(self) -> None:
        self.fired = True
        for connection in list(self.connections):
            sock = getattr(connection, "sock", None)
            if isinstance(sock, socket.socket):
                # socket.socket's own shutdown: an SSLSocket's would unwrap TLS under the thread
                # reading from it.
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watchdog:
    """One daemon thread that fires the alarms of requests past their deadline.

    A fired alarm stays armed until its request ends and fires again every ``REFIRE_S``: a
    connection still connecting when it first fired has a socket to shut down later.
    """

    REFIRE_S = 0.2

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._alarms: set[_Alarm] = set()
        self._thread: threading.Thread | None = None
        self.current = threading.local()

    @contextmanager
    def armed(self, alarm: _Alarm) -> Iterator[None]:
        with self._condition:
            self._alarms.add(alarm)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="conformance-deadlines", daemon=True
                )
                self._thread.start()
            self._condition.notify()
        self.current.alarm = alarm
        try:
            yield
        finally:
            self.current.alarm = None
            with self._condition:
                self._alarms.discard(alarm)

    def watch(self, connection: BaseHTTPConnection) -> None:
        alarm: _Alarm | None = getattr(self.current, "alarm", None)
        if alarm is not None:
            alarm.connections.append(connection)

    def _run(self) -> None:
        with self._condition:
            while True:
                now = time.monotonic()
                wake: float | None = None
                for alarm in list(self._alarms):
                    if alarm.deadline.at <= now:
                        alarm.fire()
                        due = now + self.REFIRE_S
                    else:
                        due = alarm.deadline.at
                    wake = due if wake is None else min(wake, due)
                self._condition.wait(None if wake is None else max(wake - now, 0.01))


_WATCHDOG = _Watchdog()


class _WatchedHTTPConnectionPool(HTTPConnectionPool):
    def _get_conn(self, timeout: float | None = None) -> BaseHTTPConnection:
        connection = super()._get_conn(timeout)
        _WATCHDOG.watch(connection)
        return connection


class _WatchedHTTPSConnectionPool(HTTPSConnectionPool):
    def _get_conn(self, timeout: float | None = None) -> BaseHTTPConnection:
        connection = super()._get_conn(timeout)
        _WATCHDOG.watch(connection)
        return connection


class RequestsDeadlineExceeded(requests.exceptions.ReadTimeout):
    """No complete response within the request's deadline."""


_CUT: weakref.WeakKeyDictionary[requests.PreparedRequest, int] = weakref.WeakKeyDictionary()


def request_body_cut_at(request: requests.PreparedRequest) -> int | None:
    """The byte cap the response to ``request`` was cut at; None when it was whole."""
    return _CUT.get(request)


def _clamp_requests_timeout(timeout: Any, deadline: Deadline) -> Any:
    left = max(deadline.at - time.monotonic(), 0.001)
    if timeout is None:
        return (left, left)
    if isinstance(timeout, (int, float)):
        return min(float(timeout), left)
    if isinstance(timeout, tuple) and len(timeout) == 2:
        return tuple(left if t is None else min(float(t), left) for t in timeout)
    return timeout  # a urllib3 Timeout: the watchdog still bounds it


class BoundedAdapter(HTTPAdapter):
    """A ``requests`` adapter: each exchange within the deadline, each body within the cap.

    The body is always read here (``stream=True`` callers get it read too, up to the cap).
    """

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {
            "http": _WatchedHTTPConnectionPool,
            "https": _WatchedHTTPSConnectionPool,
        }

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        """The manager of the run's proxy (``proxy.active``): its pools watched as the direct
        ones are, an https proxy verified with the run's TLS context."""
        fresh = proxy not in self.proxy_manager
        proxy_kwargs.setdefault("proxy_ssl_context", tls.active_context())
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if fresh:
            manager.pool_classes_by_scheme = {
                "http": _WatchedHTTPConnectionPool,
                "https": _WatchedHTTPSConnectionPool,
            }
        return manager

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Every https:// pool gets the run's one TLS context (``tls.active_context``) and
        nothing else: no ``cert_reqs``, CA or client-certificate path of requests' ``verify``
        and ``cert``, which urllib3 would load into that shared context or let override it."""
        host_params, _ = super().build_connection_pool_key_attributes(request, verify, None)
        return host_params, {"ssl_context": tls.active_context()}

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        """Nothing to set: the pool's ``ssl_context`` decides (requests' version would set its
        CA bundle and ``cert_reqs`` on the pool)."""

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Any = None,
    ) -> requests.Response:
        limits = self.limits or DEFAULT_LIMITS
        alarm = _Alarm(Deadline(limits.deadline_s))
        tap = wiretap.Tap.start() if wiretap.listening() else None
        with _WATCHDOG.armed(alarm):
            response: requests.Response | None = None
            try:
                response = super().send(
                    request,
                    stream=True,
                    timeout=_clamp_requests_timeout(timeout, alarm.deadline),
                    verify=verify,
                    cert=cert,
                    proxies=proxies,
                )
                if tap is not None:
                    tap.headers_received()
                body, cut = read_capped(
                    response.iter_content(CHUNK_BYTES), limits.max_body_bytes, alarm.deadline
                )
            except (requests.RequestException, TimeoutError) as exc:
                if response is not None:
                    response.close()
                error: Exception = exc
                if alarm.fired or alarm.deadline.expired:
                    error = RequestsDeadlineExceeded(alarm.deadline.message, request=request)
                if tap is not None:
                    tap.requests_exchange(request, None, b"", None, error)
                raise error from None
            if alarm.fired:
                # A socket shut down mid-headers reads as their end: what came is not a response.
                response.close()
                fired = RequestsDeadlineExceeded(alarm.deadline.message, request=request)
                if tap is not None:
                    tap.requests_exchange(request, None, b"", None, fired)
                raise fired
        response.close()  # back to the pool; dropped when the rest of the body was not read
        if cut:
            _CUT[request] = limits.max_body_bytes
        if tap is not None:
            tap.requests_exchange(request, response, body, limits.max_body_bytes if cut else None)
        response._content = body
        response._content_consumed = True
        return response


def bounded_session(session: requests.Session, limits: Limits | None = None) -> requests.Session:
    """``session`` with ``BoundedAdapter`` for http:// and https://, no setting read from the
    environment (proxies, ``.netrc``, CA bundles) and the run's proxy if it has one."""
    adapter = BoundedAdapter(limits)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.trust_env = False
    through = proxy.active()
    session.proxies = {} if through is None else {"http": through, "https": through}
    return session
