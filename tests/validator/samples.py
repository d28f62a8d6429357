"""Build recordings for tests: HAR and JSON Lines files written from :class:`Exchange` objects.

``write_jsonl`` and ``write_har`` write what ``iter_exchanges`` reads back as the same exchanges
(``source`` aside). Bodies that are valid UTF-8 are written as text, others as base64, the way
browsers export binary content. Both accept any iterable and write as they go, so a test can
stream a large file without holding it in memory.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conformance.validator.exchange import Exchange

BASE_URL = "http://127.0.0.1:8000"


def exchange(
    method: str = "GET",
    path: str = "/v1/payments",
    *,
    request_headers: Iterable[tuple[str, str]] = (),
    request_body: bytes | str | Any = b"",
    status: int | None = 200,
    response_headers: Iterable[tuple[str, str]] = (("Content-Type", "application/json"),),
    response_body: bytes | str | Any = b"",
    started_at: str | None = "2026-01-01T00:00:00.000Z",
    duration_ms: float | None = None,
    base_url: str = BASE_URL,
) -> Exchange:
    """An exchange with sensible defaults; a body that is not bytes or str is JSON-encoded."""
    return Exchange(
        method=method.upper(),
        url=base_url + path,
        request_headers=tuple(request_headers),
        request_body=_body(request_body),
        status=status,
        response_headers=tuple(response_headers) if status is not None else (),
        response_body=_body(response_body) if status is not None else b"",
        started_at=started_at,
        duration_ms=duration_ms,
    )


def _body(body: bytes | str | Any) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body).encode()


def _text_or_base64(body: bytes) -> tuple[str, str]:
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(body).decode("ascii"), "base64"


def jsonl_record(ex: Exchange) -> dict[str, Any]:
    """The JSON Lines object of one exchange (docs/validate.md)."""
    body, encoding = _text_or_base64(ex.request_body)
    record: dict[str, Any] = {
        "request": {
            "method": ex.method,
            "url": ex.url,
            "headers": [[name, value] for name, value in ex.request_headers],
            "body": body,
            "body_encoding": encoding,
        },
        "response": None,
    }
    if ex.status is not None:
        body, encoding = _text_or_base64(ex.response_body)
        record["response"] = {
            "status": ex.status,
            "headers": [[name, value] for name, value in ex.response_headers],
            "body": body,
            "body_encoding": encoding,
        }
    if ex.started_at is not None:
        record["started_at"] = ex.started_at
    if ex.duration_ms is not None:
        record["duration_ms"] = ex.duration_ms
    return record


def write_jsonl(path: Path, exchanges: Iterable[Exchange]) -> Path:
    """Write ``exchanges`` as JSON Lines, one object per line; returns ``path``."""
    with path.open("w", encoding="utf-8") as out:
        for ex in exchanges:
            out.write(json.dumps(jsonl_record(ex), separators=(",", ":")) + "\n")
    return path


def _header_value(headers: tuple[tuple[str, str], ...], name: str) -> str:
    for key, value in headers:
        if key.lower() == name:
            return value
    return ""


def har_entry(ex: Exchange) -> dict[str, Any]:
    """The HAR 1.2 entry of one exchange, shaped as browsers export it. A missing response is
    written as browsers write an aborted request: status 0, no headers, empty content."""
    request: dict[str, Any] = {
        "method": ex.method,
        "url": ex.url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": [{"name": name, "value": value} for name, value in ex.request_headers],
        "queryString": [],
        "headersSize": -1,
        "bodySize": len(ex.request_body),
    }
    if ex.request_body:
        text, encoding = _text_or_base64(ex.request_body)
        post: dict[str, Any] = {
            "mimeType": _header_value(ex.request_headers, "content-type"),
            "text": text,
        }
        if encoding == "base64":
            post["encoding"] = "base64"
        request["postData"] = post
    text, encoding = _text_or_base64(ex.response_body)
    content: dict[str, Any] = {
        "size": len(ex.response_body),
        "mimeType": _header_value(ex.response_headers, "content-type"),
        "text": text,
    }
    if encoding == "base64":
        content["encoding"] = "base64"
    response: dict[str, Any] = {
        "status": ex.status if ex.status is not None else 0,
        "statusText": "",
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": [{"name": name, "value": value} for name, value in ex.response_headers],
        "content": content,
        "redirectURL": "",
        "headersSize": -1,
        "bodySize": len(ex.response_body) if ex.status is not None else -1,
    }
    entry: dict[str, Any] = {
        "request": request,
        "response": response,
        "cache": {},
        "timings": {"send": 0, "wait": 0, "receive": 0},
        # -1: not known (HAR's value for a time it does not have)
        "time": ex.duration_ms if ex.duration_ms is not None else -1,
    }
    if ex.started_at is not None:
        entry["startedDateTime"] = ex.started_at
    return entry


def write_har(path: Path, exchanges: Iterable[Exchange]) -> Path:
    """Write ``exchanges`` as a HAR 1.2 file (entries streamed one by one); returns ``path``."""
    with path.open("w", encoding="utf-8") as out:
        out.write('{"log": {"version": "1.2", "creator": {"name": "tests", "version": "0"}, ')
        out.write('"pages": [], "entries": [\n')
        for index, ex in enumerate(exchanges):
            if index:
                out.write(",\n")
            out.write(json.dumps(har_entry(ex), separators=(",", ":")))
        out.write("\n]}}\n")
    return path
