"""The wire tap: every exchange the suite's transports complete, handed to whoever listens.

Both HTTP stacks of the suite (``transport.BoundedTransport`` for httpx, ``BoundedAdapter``
for the ``requests`` session schemathesis sends through) describe each exchange they carry as a
``WireExchange``, as it was on the wire, and hand it to the observers of this process
(``run --record`` is one: ``conformance.suite.wire.har``). With no observer nothing is built.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import httpx
import requests

Headers = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class WireExchange:
    """One request as sent and its response as received (``status`` None: none came)."""

    started: float  # epoch seconds, when the request started
    method: str
    url: str
    request_headers: Headers
    request_body: bytes
    status: int | None = None
    reason: str = ""
    http_version: str = "HTTP/1.1"
    response_headers: Headers = ()
    response_body: bytes = b""
    body_cut_at: int | None = None  # the byte cap the response body was cut at
    wait_s: float = 0.0  # request sent -> response headers
    receive_s: float = 0.0  # response headers -> last body byte read
    error: str | None = None  # why there is no response


WireObserver = Callable[[WireExchange], None]
_OBSERVERS: list[WireObserver] = []


def listening() -> bool:
    """Whether anyone observes exchanges (the transports build nothing otherwise)."""
    return bool(_OBSERVERS)


def subscribe(observer: WireObserver) -> None:
    _OBSERVERS.append(observer)


def unsubscribe(observer: WireObserver) -> None:
    if observer in _OBSERVERS:
        _OBSERVERS.remove(observer)


def notify(exchange: WireExchange) -> None:
    for observer in list(_OBSERVERS):
        observer(exchange)


def http_version(raw: object) -> str:
    """``HTTP/1.1`` from httpx's ``b"HTTP/1.1"`` or urllib3's ``11``."""
    if isinstance(raw, bytes):
        return raw.decode("ascii", errors="replace") or "HTTP/1.1"
    if isinstance(raw, str) and raw:
        return raw
    if isinstance(raw, int) and raw > 0:
        major, minor = divmod(raw, 10)
        return f"HTTP/{major}" if major >= 2 else f"HTTP/{major}.{minor}"
    return "HTTP/1.1"


class Tap:
    """Times one exchange and hands it to ``wiretap`` as it was on the wire."""

    def __init__(self, started: float, clock: float) -> None:
        self.started = started
        self.clock = clock
        self.headers_at: float | None = None

    @classmethod
    def start(cls) -> Tap:
        return cls(time.time(), time.perf_counter())

    def headers_received(self) -> None:
        self.headers_at = time.perf_counter()

    def _times(self) -> tuple[float, float]:
        now = time.perf_counter()
        headers_at = self.headers_at if self.headers_at is not None else now
        return headers_at - self.clock, now - headers_at

    def httpx_exchange(
        self,
        request: httpx.Request,
        response: httpx.Response | None,
        body: bytes,
        cut_at: int | None,
        error: BaseException | None,
    ) -> None:
        wait_s, receive_s = self._times()
        try:
            request_body = request.content
        except httpx.RequestNotRead:
            request_body = b""
        sent = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw)
        exchange = WireExchange(
            started=self.started,
            method=request.method,
            url=str(request.url),
            request_headers=sent,
            request_body=request_body,
            wait_s=wait_s,
            receive_s=receive_s,
            error=None if error is None else f"{type(error).__name__}: {error}",
        )
        if response is not None:
            reason = response.extensions.get("reason_phrase", b"")
            exchange = replace(
                exchange,
                status=response.status_code,
                reason=reason.decode("latin-1") if isinstance(reason, bytes) else "",
                http_version=http_version(response.extensions.get("http_version")),
                response_headers=tuple(
                    (k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw
                ),
                response_body=body,
                body_cut_at=cut_at,
            )
        notify(exchange)

    def requests_exchange(
        self,
        request: requests.PreparedRequest,
        response: requests.Response | None,
        body: bytes,
        cut_at: int | None,
        error: BaseException | None = None,
    ) -> None:
        wait_s, receive_s = self._times()
        raw_body = request.body
        if isinstance(raw_body, str):
            raw_body = raw_body.encode("iso-8859-1", errors="replace")  # as http.client sends it
        exchange = WireExchange(
            started=self.started,
            method=str(request.method),
            url=str(request.url),
            request_headers=tuple((str(k), str(v)) for k, v in request.headers.items()),
            request_body=raw_body if isinstance(raw_body, bytes) else b"",
            wait_s=wait_s,
            receive_s=receive_s,
            error=None if error is None else f"{type(error).__name__}: {error}",
        )
        if response is not None:
            raw = response.raw
            received = getattr(raw, "headers", None) or response.headers
            exchange = replace(
                exchange,
                status=response.status_code,
                reason=str(response.reason or ""),
                http_version=http_version(getattr(raw, "version", None)),
                response_headers=tuple((str(k), str(v)) for k, v in received.items()),
                response_body=body,
                body_cut_at=cut_at,
            )
        notify(exchange)
