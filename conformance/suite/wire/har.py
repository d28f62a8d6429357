"""HAR 1.2 entries of the suite's own traffic (``run --record``), secrets masked.

Each process of a run (the engine for preflight, every pytest-xdist worker) appends the
exchanges its transports carry (``wiretap``) to a part file of its own, one HAR entry as JSON
per line; ``conformance.engine.har_file`` merges the parts into one HAR file.

Masking keeps the rest byte for byte: the value of a secret header
(``redaction.SECRET_HEADERS``: ``X-Signature``, ``Authorization``..., and the run's ``-H``
gateway headers) becomes ``[redacted]`` (the header stays, so a reader sees that it was sent).
An ``X-Signature`` the recorder can check (the profile's built-in scheme, a key the profile
holds) becomes ``[redacted: verifies]`` or ``[redacted: does not verify]`` instead: the suite
sends wrong signatures on purpose, and ``validate`` judges the signature rules by this mark. In
every other header value, the URL and the bodies the API secrets, ``whsec_`` webhook secrets,
URL passwords and the values of secret JSON fields become ``[redacted]`` too. A body that is
UTF-8 text is recorded as text, any other (not UTF-8, or with control characters: a NUL is six
bytes as JSON text) as base64 (``"encoding": "base64"``), masked the same way.

The recording is bounded (``RecordLimits``): each body is cut at ``body_bytes``; once the part
files of the run hold ``bodies_bytes``, entries are recorded without their bodies; once they hold
``file_bytes``, entries are no longer recorded, only counted. What was cut says so: the body's
and the entry's ``_truncated`` (true) and ``comment``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from conformance import __version__
from conformance.core.profile import Profile
from conformance.core.redaction import (
    REDACTED,
    WEBHOOK_SECRET,
    is_secret_header,
    redact_text,
    run_secrets,
)
from conformance.core.signing import API_KEY_HEADER, AUTH_HEADERS, SIGNATURE_HEADER
from conformance.core.untrusted import mask_url_passwords, split_url
from conformance.judge.signatures import Scheme, Signed, SignedRequest, diagnose
from conformance.suite.wire import tap as wiretap
from conformance.suite.wire.tap import WireExchange
from conformance.suite.wire.transport import describe_size

CREATOR = {"name": "payment-conformance", "version": __version__}
PART_SUFFIX = ".har-part.jsonl"
COUNTS_SUFFIX = ".har-counts.json"  # a part's entries recorded without bodies, or not at all
TRUNCATED = "_truncated"
# A secret cut by the end of a body must still be masked whole: a body is masked on this much
# more than is kept (longer than any secret), then cut.
_MASK_MARGIN = 4096


@dataclass(frozen=True)
class RecordLimits:
    """What ``run --record`` keeps. A body above ``body_bytes`` is cut (a conformant server's
    largest answer is a page of a listing, tens of KiB; 2 MiB keeps the suite's own oversized
    request bodies, just above the profile's 1 MiB ``max_body_bytes``, whole). A normal run
    records some MB (a quick run: 9 MB), so the budgets are only reached by a hostile server:
    after ``bodies_bytes`` entries lose their bodies, after ``file_bytes`` they are dropped."""

    body_bytes: int = 2 * 1024 * 1024
    bodies_bytes: int = 256 * 1024 * 1024
    file_bytes: int = 320 * 1024 * 1024


DEFAULT_LIMITS = RecordLimits()


def started_date_time(epoch_s: float) -> str:
    """ISO 8601 in UTC with microseconds: equal lengths, so the strings sort by time."""
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _mask(text: str, secrets: Iterable[str]) -> str:
    masked = WEBHOOK_SECRET.sub(REDACTED, mask_url_passwords(text))
    for secret in (*secrets, *run_secrets()):
        if secret:
            masked = masked.replace(secret, REDACTED)
    return masked


SignatureVerdict = Callable[[WireExchange], Signed | None]
_SIGNATURE = SIGNATURE_HEADER.lower()


def signature_verdict(profile: Callable[[], Profile | None]) -> SignatureVerdict:
    """Whether an exchange's ``X-Signature`` is the one the profile's built-in scheme gives its
    request, exact bytes as sent, with the secret of its ``X-Api-Key``; None when that cannot
    be told: no profile yet, a signer hook, a key the profile does not hold, an auth header
    missing, empty or sent twice."""

    def verdict(exchange: WireExchange) -> Signed | None:
        current = profile()
        if current is None or current.auth.signer:
            return None
        found: dict[str, list[str]] = {}
        for name, value in exchange.request_headers:
            found.setdefault(name.lower(), []).append(value)
        values = [found.get(name.lower(), []) for name in AUTH_HEADERS]
        if any(len(value) != 1 or not value[0].strip() for value in values):
            return None  # missing, empty or sent twice: a missing header's case, not a signature
        headers = dict(zip(AUTH_HEADERS, (value[0] for value in values), strict=True))
        secrets = {c.api_key: c.api_secret for c in current.credentials}
        secret = secrets.get(headers[API_KEY_HEADER])
        if secret is None:
            return None
        try:
            url = split_url(exchange.url)
        except ValueError:
            return None
        host = found.get("host", [url.netloc])[0]
        target = url.path + (f"?{url.query}" if url.query else "")
        request = SignedRequest(headers, exchange.method, target, exchange.request_body, host)
        scheme = Scheme(current.auth.string_to_sign, current.auth.scheme)
        return diagnose(request, secret, tuple(secrets.values()), scheme)

    return verdict


def _headers(
    headers: wiretap.Headers, secrets: tuple[str, ...], signature: Signed | None = None
) -> list[dict[str, str]]:
    return [
        {
            "name": name,
            "value": (
                (
                    signature.mark
                    if signature is not None and name.lower() == _SIGNATURE
                    else REDACTED
                )
                if is_secret_header(name)
                else _mask(value, secrets)
            ),
        }
        for name, value in headers
    ]


# C0 controls but tab, newline and carriage return, and DEL: JSON text spells each in six bytes.
_CONTROLS = bytes(b for b in range(128) if (b < 32 and b not in (9, 10, 13)) or b == 127)


def _is_text(data: bytes) -> bool:
    """UTF-8 without control characters: recorded as text (else base64)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return len(data.translate(None, _CONTROLS)) == len(data)


def _body(raw: bytes, secrets: tuple[str, ...], cap: int | None = None) -> tuple[str, bool, bool]:
    """The masked body, cut at ``cap`` bytes, as HAR text; whether that text is base64; whether
    it was cut."""
    cut = cap is not None and len(raw) > cap
    window = raw[: cap + _MASK_MARGIN] if cap is not None and cut else raw
    masked = redact_text(window.decode("utf-8", errors="surrogateescape"), secrets)
    data = masked.encode("utf-8", errors="surrogateescape")
    if cap is not None and cut:
        data = data[:cap]
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start >= len(data) - 3:  # a character cut in two: keep whole characters
                data = data[: exc.start]
    if _is_text(data):
        return data.decode("utf-8"), False, cut
    return base64.b64encode(data).decode(), True, cut


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


def _cut(what: str, size: int, limits: RecordLimits, bodies: bool) -> str:
    if not bodies:
        return (
            f"{what} body of {size:,} bytes not recorded: the recording's "
            f"{describe_size(limits.bodies_bytes)} for bodies was spent"
        )
    return f"{what} body of {size:,} bytes recorded cut at {describe_size(limits.body_bytes)}"


def har_entry(
    exchange: WireExchange,
    secrets: Iterable[str] = (),
    limits: RecordLimits = DEFAULT_LIMITS,
    *,
    bodies: bool = True,
    signature: Signed | None = None,
) -> dict[str, Any]:
    """The HAR 1.2 entry of one exchange, secrets masked, bodies cut at ``limits.body_bytes``
    (none recorded when not ``bodies``); ``signature``: what its ``X-Signature`` signs
    (``signature_verdict``), None when unknown.

    No response (a timeout, a refused connection): ``status`` 0, as browsers record it, with
    the reason in ``response._error`` and the entry's ``comment``. A body cut or left out has
    ``_truncated`` true and a ``comment``, and so has its entry.
    """
    secrets = tuple(s for s in secrets if s)
    comments: list[str] = []
    url = _masked_url(exchange.url, secrets)
    request: dict[str, Any] = {
        "method": exchange.method,
        "url": url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": _headers(exchange.request_headers, secrets, signature),
        "queryString": [
            {"name": name, "value": value}
            for name, value in parse_qsl(split_url(url).query, keep_blank_values=True)
        ],
        "headersSize": -1,
        "bodySize": len(exchange.request_body),
    }
    if exchange.request_body:
        mime = _header(exchange.request_headers, "content-type") or "application/octet-stream"
        request["postData"] = _content(
            {"mimeType": mime}, exchange.request_body, "request", secrets, limits, bodies, comments
        )
        request["postData"].setdefault("text", "")  # HAR 1.2: a postData has its text
        request["postData"]["params"] = []
    content: dict[str, Any] = {
        "size": len(exchange.response_body),
        "mimeType": _header(exchange.response_headers, "content-type") or "",
    }
    if exchange.response_body:
        _content(content, exchange.response_body, "response", secrets, limits, bodies, comments)
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
    if exchange.status is None:
        error = _mask(exchange.error or "no response", secrets)
        response["_error"] = error
        comments.append(f"no response: {error}")
    if exchange.body_cut_at is not None:
        cut = (
            f"response body cut at {describe_size(exchange.body_cut_at)}: the server sent more; "
            "the body is recorded as received up to the cap"
        )
        content["comment"] = "; ".join(filter(None, (cut, content.get("comment"))))
        content[TRUNCATED] = True
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
    if any(part.get(TRUNCATED) for part in (request.get("postData", {}), content)):
        entry[TRUNCATED] = True
    return entry


def _content(
    into: dict[str, Any],
    raw: bytes,
    what: str,
    secrets: tuple[str, ...],
    limits: RecordLimits,
    bodies: bool,
    comments: list[str],
) -> dict[str, Any]:
    """``into`` with the body's ``text`` (and ``encoding``), or the marks of a body cut or
    left out."""
    cut = False
    if bodies:
        text, encoded, cut = _body(raw, secrets, limits.body_bytes)
        into["text"] = text
        if encoded:
            into["encoding"] = "base64"
    if not bodies or cut:
        note = _cut(what, len(raw), limits, bodies)
        into["comment"] = note
        into[TRUNCATED] = True
        comments.append(note)
    return into


class PartRecorder:
    """Appends every exchange of this process to ``directory/<name>-<pid>.har-part.jsonl``.

    One JSON line per entry, ``startedDateTime`` first (the merge sorts on it without parsing
    the bodies). The file is created with the first exchange; each line is written whole with
    one ``os.write`` on an ``O_APPEND`` descriptor, so a process killed mid-run leaves whole
    lines and at most one unfinished last line (the merge drops it).

    The ``limits`` hold for the whole run: every process sums the part files of the directory
    before it writes. Entries recorded without bodies or not at all are counted, and the counts
    written to ``<name>-<pid>.har-counts.json`` when the recorder stops.
    """

    def __init__(
        self,
        directory: Path,
        name: str,
        secrets: Callable[[], Iterable[str]] = tuple,
        limits: RecordLimits | None = None,
        signatures: SignatureVerdict | None = None,
    ) -> None:
        self.path = directory / f"{name}-{os.getpid()}{PART_SUFFIX}"
        self._secrets = secrets
        self._signatures = signatures
        self._limits = limits or DEFAULT_LIMITS
        self._lock = threading.Lock()
        self._fd: int | None = None
        self.recorded = 0
        self.without_bodies = 0  # recorded without their bodies: the budget for bodies was spent
        self.skipped = 0  # not recorded: the file's cap was reached

    def _spent(self) -> int:
        """Bytes in the part files of the run, every process's."""
        total = 0
        with os.scandir(self.path.parent) as found:
            for item in found:
                if item.name.endswith(PART_SUFFIX):
                    with contextlib.suppress(OSError):
                        total += item.stat().st_size
        return total

    def __call__(self, exchange: WireExchange) -> None:
        limits = self._limits
        with self._lock:
            spent = self._spent()
            bodies = spent < limits.bodies_bytes
            signature = self._signatures(exchange) if self._signatures else None
            entry = har_entry(exchange, self._secrets(), limits, bodies=bodies, signature=signature)
            line = json.dumps(entry, ensure_ascii=False) + "\n"
            data = line.encode("utf-8", errors="surrogateescape")
            if spent + len(data) > limits.file_bytes:
                self.skipped += 1
                return
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(self._fd, data)
            self.recorded += 1
            self.without_bodies += not bodies and bool(
                exchange.request_body or exchange.response_body
            )

    def start(self) -> PartRecorder:
        wiretap.subscribe(self)
        return self

    def stop(self) -> None:
        wiretap.unsubscribe(self)
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            if self.without_bodies or self.skipped:
                counts = {"without_bodies": self.without_bodies, "skipped": self.skipped}
                with contextlib.suppress(OSError):
                    counts_path(self.path).write_text(json.dumps(counts), encoding="utf-8")


def counts_path(part: Path) -> Path:
    """Where the recorder of ``part`` leaves its counts of entries cut by the limits."""
    return part.with_name(part.name.removesuffix(PART_SUFFIX) + COUNTS_SUFFIX)
