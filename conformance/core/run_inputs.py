"""Values of the run options every HTTP stack of a run reads: gateway headers (``-H``), the
proxy URL (``--proxy``) and the client's own rate (``--rate-limit``).

Parsed here, below the command line, the engine and the suite, which all take them; a value
that cannot be used raises with a sentence that never shows a secret (a header's value, a
proxy's password).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from conformance.core import headers as parsing
from conformance.core.headers import Header
from conformance.core.redaction import MIN_VALUE_LENGTH
from conformance.core.untrusted import mask_url_passwords, split_url


class HeaderError(ValueError):
    """A ``-H`` value that cannot be sent; the message says why (never the value)."""


def parse_header(text: str) -> Header:
    """``"Name: value"`` as ``(name, value)`` (``core.headers``); ``HeaderError`` when it is
    not one."""
    try:
        return parsing.parse_header(text)
    except parsing.HeaderError as exc:
        raise HeaderError(f"-H {exc}") from None


def parse_headers(texts: Iterable[str]) -> tuple[Header, ...]:
    """Every ``-H`` parsed; a name given twice is refused."""
    headers: list[Header] = []
    seen: set[str] = set()
    for text in texts:
        name, value = parse_header(text)
        if name.lower() in seen:
            raise HeaderError(f"-H {name}: given twice")
        seen.add(name.lower())
        headers.append((name, value))
    return tuple(headers)


def short_value_warnings(headers: Sequence[Header]) -> list[str]:
    """One warning per header whose value is too short to be masked as text (never the value).

    Such a value is masked under its header's name only: replacing a one- to three-character
    text wherever it appears would wreck the evidence (every "1" of every body) and still give
    the value away by what was masked. Where the server echoes it, it shows as it is.
    """
    return [
        f"-H {name}: its value is under {MIN_VALUE_LENGTH} characters, too short to mask as "
        "text: it is masked under its header's name only, and shows as it is wherever the "
        "server echoes it (bodies, other headers, --record); use a longer value to keep it secret"
        for name, value in headers
        if len(value.strip()) < MIN_VALUE_LENGTH
    ]


class ProxyError(ValueError):
    """A ``--proxy`` value that cannot be used; the message says why (its password masked)."""


def parse_proxy(text: str) -> str:
    """``text`` as a proxy URL (``http://`` or ``https://``, a host, an optional port, nothing
    after it); ``ProxyError`` when it is not one."""
    shown = mask_url_passwords(text)
    if not text.startswith(("http://", "https://")):
        raise ProxyError(f"--proxy must be an http:// or https:// URL, not {shown!r}")
    try:
        parts = split_url(text)
        port = parts.port
    except ValueError as exc:
        raise ProxyError(f"--proxy {shown!r} is not a valid URL ({exc})") from None
    if not parts.hostname:
        raise ProxyError(f"--proxy {shown!r} names no host")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ProxyError(f"--proxy {shown!r}: give the proxy's scheme, host and port only")
    if port == 0:
        raise ProxyError(f"--proxy {shown!r} has an invalid port")
    return text.rstrip("/")


def parse_rate(text: str) -> float:
    """``"25/s"`` or ``"25"`` -> 25.0; ``ValueError`` with a sentence for anything else."""
    raw = text.strip()
    number = raw.removesuffix("/s").strip()
    try:
        rate = float(number)
    except ValueError:
        raise ValueError(
            f"--rate-limit must be requests per second such as 25/s or 25, not {text!r}"
        ) from None
    if not math.isfinite(rate) or rate <= 0:
        raise ValueError(
            f"--rate-limit must be a positive number of requests per second, not {text!r}"
        )
    return rate
