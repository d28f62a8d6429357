"""HAR 1.2 entries of the suite's own traffic (``run --record``), secrets masked.

Each process of a run (the engine for preflight, every pytest-xdist worker) appends the
exchanges its transports carry (``wiretap``) to a part file of its own, one HAR entry as JSON
per line; ``conformance.engine.recording`` merges the parts into one HAR file.

Masking keeps the rest byte for byte: the value of a secret header (``redaction.SECRET_HEADERS``:
``X-Signature``, ``Authorization``..., and the run's ``-H`` gateway headers) becomes
``[redacted]`` (the header stays, so a reader sees that it was sent), and in every other header
value, the URL and the bodies the API secrets, ``whsec_`` webhook secrets, URL passwords and
the values of secret JSON fields become ``[redacted]`` too. A body that is UTF-8 is recorded as
text, any other as base64 (``"encoding": "base64"``), masked the same way.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from conformance import __version__
from conformance.core.redaction import (
    REDACTED,
    WEBHOOK_SECRET,
    is_secret_header,
    redact_text,
    run_secrets,
)
from conformance.core.untrusted import mask_url_passwords, split_url
from conformance.suite import wiretap
from conformance.suite.transport import describe_size
from conformance.suite.wiretap import WireExchange

CREATOR = {"name": "payment-conformance", "version": __version__}
PART_SUFFIX = ".har-part.jsonl"


def started_date_time(epoch_s: float) -> str:
    """ISO 8601 in UTC with microseconds: equal lengths, so the strings sort by time."""
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _mask(text: str, secrets: Iterable[str]) -> str:
    masked = WEBHOOK_SECRET.sub(REDACTED, mask_url_passwords(text))
    for secret in (*secrets, *run_secrets()):
        if secret:
            masked = masked.replace(secret, REDACTED)
    return masked


def _headers(headers: wiretap.Headers, secrets: tuple[str, ...]) -> list[dict[str, str]]:
    return [
        {
            "name": name,
            "value": REDACTED if is_secret_header(name) else _mask(value, secrets),
        }
        for name, value in headers
    ]


def _body(raw: bytes, secrets: tuple[str, ...]) -> tuple[str, bool]:
    """The masked body as HAR text, and whether that text is base64."""
    text = raw.decode("utf-8", errors="surrogateescape")
    masked = redact_text(text, secrets)
    if masked.isascii() or not any("\udc80" <= c <= "\udcff" for c in masked):
        return masked, False
    return base64.b64encode(masked.encode("utf-8", errors="surrogateescape")).decode(), True


def _masked_url(url: str, secrets: tuple[str, ...]) -> str:
    """``url`` masked; a masked password as ``%5Bredacted%5D``, since brackets in the
    authority make a URL unparseable (they mark an IPv6 host)."""
    masked = _mask(url, secrets)
    scheme, separator, rest = masked.partition("://")
    if not separator:
        return masked
    authority, slash, tail = rest.partition("/")
    return scheme + separator + authority.replace(REDACTED, "%5Bredacted%5D") + slash + tail


def _header(headers: wiretap.Headers, name: str) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


def har_entry(exchange: WireExchange, secrets: Iterable[str] = ()) -> dict[str, Any]:
    """The HAR 1.2 entry of one exchange, secrets masked.

    No response (a timeout, a refused connection): ``status`` 0, as browsers record it, with
    the reason in ``response._error`` and the entry's ``comment``.
    """
    secrets = tuple(s for s in secrets if s)
    url = _masked_url(exchange.url, secrets)
    request: dict[str, Any] = {
        "method": exchange.method,
        "url": url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _headers(exchange.request_headers, secrets),
        "queryString": [
            {"name": name, "value": value}
            for name, value in parse_qsl(split_url(url).query, keep_blank_values=True)
        ],
        "headersSize": -1,
        "bodySize": len(exchange.request_body),
    }
    if exchange.request_body:
        text, encoded = _body(exchange.request_body, secrets)
        mime = _header(exchange.request_headers, "content-type") or "application/octet-stream"
        request["postData"] = {"mimeType": mime, "text": text, "params": []}
        if encoded:
            request["postData"]["encoding"] = "base64"
    content: dict[str, Any] = {
        "size": len(exchange.response_body),
        "mimeType": _header(exchange.response_headers, "content-type") or "",
    }
    if exchange.response_body:
        text, encoded = _body(exchange.response_body, secrets)
        content["text"] = text
        if encoded:
            content["encoding"] = "base64"
    response: dict[str, Any] = {
        "status": exchange.status if exchange.status is not None else 0,
        "statusText": _mask(exchange.reason, secrets),
        "httpVersion": exchange.http_version if exchange.status is not None else "",
        "cookies": [],
        "headers": _headers(exchange.response_headers, secrets),
        "content": content,
        "redirectURL": "",
        "headersSize": -1,
        "bodySize": len(exchange.response_body) if exchange.status is not None else -1,
    }
    comments: list[str] = []
    if exchange.status is None:
        error = _mask(exchange.error or "no response", secrets)
        response["_error"] = error
        comments.append(f"no response: {error}")
    if exchange.body_cut_at is not None:
        cut = (
            f"response body cut at {describe_size(exchange.body_cut_at)}: the server sent more; "
            "the body is recorded as received up to the cap"
        )
        content["comment"] = cut
        comments.append(cut)
    wait_ms = round(exchange.wait_s * 1000, 3)
    receive_ms = round(exchange.receive_s * 1000, 3)
    entry: dict[str, Any] = {
        "startedDateTime": started_date_time(exchange.started),
        "time": round(wait_ms + receive_ms, 3),
        "request": request,
        "response": response,
        "cache": {},
        "timings": {"send": 0, "wait": wait_ms, "receive": receive_ms},
    }
    if comments:
        entry["comment"] = "; ".join(comments)
    return entry


class PartRecorder:
    """Appends every exchange of this process to ``directory/<name>-<pid>.har-part.jsonl``.

    One JSON line per entry, ``startedDateTime`` first (the merge sorts on it without parsing
    the bodies). The file is created with the first exchange; each line is written whole with
    one ``os.write`` on an ``O_APPEND`` descriptor, so a process killed mid-run leaves whole
    lines and at most one unfinished last line (the merge drops it).
    """

    def __init__(
        self, directory: Path, name: str, secrets: Callable[[], Iterable[str]] = tuple
    ) -> None:
        self.path = directory / f"{name}-{os.getpid()}{PART_SUFFIX}"
        self._secrets = secrets
        self._lock = threading.Lock()
        self._fd: int | None = None
        self.recorded = 0

    def __call__(self, exchange: WireExchange) -> None:
        line = json.dumps(har_entry(exchange, self._secrets()), ensure_ascii=False) + "\n"
        data = line.encode("utf-8", errors="surrogateescape")
        with self._lock:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(self._fd, data)
            self.recorded += 1

    def start(self) -> PartRecorder:
        wiretap.subscribe(self)
        return self

    def stop(self) -> None:
        wiretap.unsubscribe(self)
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
