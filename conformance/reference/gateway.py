"""The gateway in front of the reference server: the deployments implementers really have.

ASGI middleware around the application, which does not know it is there. Outermost first:

- ``BasePath``: the API under a prefix (``/prefix/v1/payments``); anything else gets a 404.
- ``RequiredHeader``: a request without the gateway's header and value gets a 403.
- ``RateLimit``: a token bucket per API key; over the limit, a 429 with ``Retry-After``.

A request one of them refuses never reaches the application, so it has no side effect: no
Idempotency-Key, nonce or resource is consumed. Refusals are JSON in the profile's error shape
(``code`` and ``message``). ``wrap`` puts the layers in that order; TLS is uvicorn's (see
``conformance.reference.tls``). The webhook dispatcher's outgoing requests pass none of them.

Behind a base path the application routes the path without the prefix, but the signature (and
the idempotency fingerprint) covers the request target exactly as sent, prefix included: that is
what a gateway that passes the request through delivers, and what a client that was given the
base URL with the prefix signs.
"""

from __future__ import annotations

import hmac
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from conformance.core.headers import parse_header
from conformance.core.signing import API_KEY_HEADER

MAX_RATE_LIMIT = 1_000_000.0
MAX_BUCKETS = 4096  # above this many API keys seen, buckets that are full again are dropped
# A path segment of unreserved and sub-delimiter characters, so that the prefix is the same
# whether it is read percent-decoded (routing) or as sent (the signature).
_BASE_PATH = re.compile(r"(/[A-Za-z0-9._~!$&'()*+,;=:@-]+)+")


@dataclass(frozen=True)
class GatewaySettings:
    """What the gateway does; the defaults let every request through untouched."""

    rate_limit: float | None = None  # requests per second per API key; bursts of as many
    require_header: tuple[str, str] | None = None  # (name, value); the value is a secret
    base_path: str = ""  # "" or "/prefix", normalised by ``base_path``

    def __post_init__(self) -> None:
        if self.rate_limit is not None:
            rate_limit(self.rate_limit)
        if self.require_header is not None:
            name, value = self.require_header
            if header(f"{name}: {value}") != (name, value):
                raise ValueError(f"{name!r} with its value is not a header of a single line")
        if self.base_path != base_path(self.base_path):
            raise ValueError(f"the base path {self.base_path!r} is not normalised")


# ------------------------------------------------------------------------- parsing settings
def rate_limit(value: float) -> float:
    """``value`` requests per second, when it is a positive finite number; ValueError if not."""
    if not (math.isfinite(value) and 0 < value <= MAX_RATE_LIMIT):
        raise ValueError(
            f"the rate limit must be a positive number of requests per second, at most "
            f"{MAX_RATE_LIMIT:g}, not {value!r}"
        )
    return float(value)


def header(text: str) -> tuple[str, str]:
    """``"Name: value"`` as ``(name, value)`` (``core.headers``, as the suite's ``-H`` reads
    it); ValueError, without the value, when it is not a gateway header."""
    return parse_header(text)


def base_path(text: str) -> str:
    """The normalised prefix: ``""`` for none (``""`` or ``/``), else ``/a`` or ``/a/b``
    (trailing slashes dropped); ValueError when it does not start with ``/``, has characters a
    plain path segment does not (``?``, ``#``, ``%``, spaces...) or a ``.``/``..`` segment."""
    if not text:
        return ""
    if not text.startswith("/"):
        raise ValueError(f"the base path must start with /, not {text!r}")
    stripped = text.rstrip("/")
    if not stripped:
        return ""
    if not _BASE_PATH.fullmatch(stripped):
        raise ValueError(
            f"the base path {text!r} may hold only letters, digits and -._~!$&'()*+,;=:@ "
            "between single slashes"
        )
    if any(segment in (".", "..") for segment in stripped.split("/")):
        raise ValueError(f"the base path {text!r} has a . or .. segment")
    return stripped


# ------------------------------------------------------------------------------ the layers
def wrap(
    app: ASGIApp,
    settings: GatewaySettings,
    clock: Callable[[], float] = time.monotonic,
    not_found: tuple[int, str] = (404, "not_found"),
) -> ASGIApp:
    """``app`` behind the layers ``settings`` asks for, outermost first: base path, gateway
    header, rate limit. ``not_found`` is the profile's status and code for a path outside the
    base path."""
    if settings.rate_limit is not None:
        app = RateLimit(app, settings.rate_limit, clock)
    if settings.require_header is not None:
        app = RequiredHeader(app, *settings.require_header)
    if settings.base_path:
        app = BasePath(app, settings.base_path, not_found)
    return app


async def refuse(
    send: Send, status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> None:
    """A JSON error response, sent without reading the request's body."""
    body = json.dumps({"code": code, "message": message}, separators=(",", ":")).encode()
    head = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    head += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


class BasePath:
    """The application under ``prefix``: its path is routed without the prefix, while
    ``raw_path`` (what the signature covers) stays as sent."""

    def __init__(
        self, app: ASGIApp, prefix: str, not_found: tuple[int, str] = (404, "not_found")
    ) -> None:
        self.app = app
        self.prefix = prefix
        self.not_found = not_found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        raw = (scope.get("raw_path") or b"").decode("latin-1") or path
        inner = _strip(path, self.prefix)
        if inner is None or _strip(raw, self.prefix) is None:
            status, code = self.not_found
            await refuse(
                send, status, code, f"no operation at {path}: the API is under {self.prefix}"
            )
            return
        scope = dict(scope, path=inner, root_path=scope.get("root_path", "") + self.prefix)
        await self.app(scope, receive, send)


def _strip(path: str, prefix: str) -> str | None:
    """``path`` without ``prefix`` (``/`` for the prefix itself), or None when it is outside."""
    if path == prefix:
        return "/"
    if path.startswith(prefix + "/"):
        return path[len(prefix) :]
    return None


class RequiredHeader:
    """A request without exactly one ``name`` header of exactly ``value`` gets a 403."""

    def __init__(self, app: ASGIApp, name: str, value: str) -> None:
        self.app = app
        self.name = name
        self.key = name.lower().encode("latin-1")
        self.value = value.encode("latin-1")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        found = [v for k, v in scope["headers"] if k.lower() == self.key]
        if len(found) != 1 or not hmac.compare_digest(found[0], self.value):
            # The message never says what the value should have been, nor what came.
            await refuse(
                send,
                403,
                "gateway_refused",
                f"the gateway requires the {self.name} header with its value",
            )
            return
        await self.app(scope, receive, send)


class TokenBucket:
    """``rate`` tokens a second, at most ``capacity`` kept; a request takes one."""

    def __init__(self, rate: float, capacity: float, now: float) -> None:
        self.rate = rate
        self.capacity = capacity
        self.tokens = capacity
        self.at = now

    def refill(self, now: float) -> None:
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = now

    def take(self, now: float) -> float:
        """0 when a token was taken, else the seconds until one is free."""
        self.refill(now)
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate


class RateLimit:
    """``rate`` requests per second per API key (the profile's API key header; requests without
    one share a bucket), in bursts of up to ``rate`` (at least 1). Over the limit: 429 with
    ``Retry-After`` in whole seconds, rounded up, at least 1."""

    def __init__(self, app: ASGIApp, rate: float, clock: Callable[[], float]) -> None:
        self.app = app
        self.rate = rate
        self.capacity = max(rate, 1.0)
        self.clock = clock
        self.key_header = API_KEY_HEADER.lower().encode("latin-1")
        # Used from the event loop's thread only, so no lock.
        self.buckets: dict[bytes | None, TokenBucket] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = next((v for k, v in scope["headers"] if k.lower() == self.key_header), None)
        wait = self.bucket(key).take(self.clock())
        if wait > 0:
            retry_after = max(1, math.ceil(wait))
            await refuse(
                send,
                429,
                "rate_limited",
                f"over the limit of {self.rate:g} requests per second per API key; retry in "
                f"{retry_after} s",
                {"Retry-After": str(retry_after)},
            )
            return
        await self.app(scope, receive, send)

    def bucket(self, key: bytes | None) -> TokenBucket:
        now = self.clock()
        found = self.buckets.get(key)
        if found is None:
            if len(self.buckets) >= MAX_BUCKETS:
                self._forget_full(now)
            found = self.buckets[key] = TokenBucket(self.rate, self.capacity, now)
        return found

    def _forget_full(self, now: float) -> None:
        """Drop the buckets that are full again: a new one for their key would be the same."""
        for key, bucket in list(self.buckets.items()):
            bucket.refill(now)
            if bucket.tokens >= bucket.capacity:
                del self.buckets[key]
