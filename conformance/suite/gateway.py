"""Headers a gateway in front of the server wants on every request (``run -H "Name: value"``).

They are sent on every request of every HTTP stack (``SuiteClient``, the schemathesis session,
preflight), the authentication-refusal cases included: a gateway header is not the API's
authentication. A name the suite sets itself (the profile's authentication headers,
``Idempotency-Key``, ``Content-Type``...) is refused. The values are secrets: they reach the test
processes through ``HEADERS_ENV`` (never argv), and while ``using`` is active
``core.redaction`` masks them under their names and as text.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator, Sequence

from conformance.core.redaction import secret_headers
from conformance.core.signing import (
    API_KEY_HEADER,
    NONCE_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
)

HEADERS_ENV = "PAYMENT_CONFORMANCE_HEADERS"
"""One ``Name: value`` a line: the run's gateway headers, for its test processes."""

# RFC 9110 token characters.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# Visible ASCII, spaces and tabs: no CR, LF or other control character, and nothing an HTTP
# stack would have to encode one way or another.
_VALUE = re.compile(r"[\t\x20-\x7e]*")
# Headers the suite sets itself: a gateway header must not replace them.
RESERVED = frozenset(
    name.lower()
    for name in (
        API_KEY_HEADER,
        SIGNATURE_HEADER,
        TIMESTAMP_HEADER,
        NONCE_HEADER,
        "Idempotency-Key",
        "Content-Type",
        "Content-Length",
        "Transfer-Encoding",
        "Host",
        "Connection",
    )
)

Header = tuple[str, str]


class HeaderError(ValueError):
    """A ``-H`` value that cannot be sent; the message says why (never the value)."""


def parse_header(text: str) -> Header:
    """``"Name: value"`` as ``(name, value)``; ``HeaderError`` when it is not one."""
    name, colon, value = text.partition(":")
    if not colon:
        raise HeaderError("-H: expected 'Name: value', found no colon")
    if _TOKEN.fullmatch(name) is None:
        shown = name[:40].encode("unicode_escape").decode()
        raise HeaderError(
            f"-H: {shown!r} is not a header name (letters, digits and !#$%&'*+.^_`|~- only, "
            "no space before the colon)"
        )
    value = value.strip(" \t")
    if _VALUE.fullmatch(value) is None:
        raise HeaderError(
            f"-H {name}: the value holds a line break, a control character or a non-ASCII "
            "character, which a header cannot carry"
        )
    if not value:
        raise HeaderError(f"-H {name}: the value is empty")
    if name.lower() in RESERVED:
        raise HeaderError(
            f"-H {name}: the suite sets this header itself (authentication, idempotency and "
            "framing headers cannot be replaced)"
        )
    return name, value


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


def to_env(headers: Sequence[Header]) -> str:
    return "\n".join(f"{name}: {value}" for name, value in headers)


def from_env(raw: str | None) -> tuple[Header, ...]:
    """The headers of ``HEADERS_ENV`` (``HeaderError`` when it is malformed)."""
    if not raw:
        return ()
    return parse_headers(line for line in raw.split("\n") if line.strip())


# -- the process's active headers ------------------------------------------------------------
_ACTIVE: list[tuple[Header, ...]] = []


def active() -> tuple[Header, ...]:
    """The headers every request of this process carries now."""
    return _ACTIVE[-1] if _ACTIVE else ()


@contextlib.contextmanager
def using(headers: Sequence[Header]) -> Iterator[None]:
    """``headers`` sent on every request and masked as secrets within the block."""
    _ACTIVE.append(tuple(headers))
    try:
        with secret_headers(headers):
            yield
    finally:
        _ACTIVE.pop()


@contextlib.contextmanager
def in_env(headers: Sequence[Header]) -> Iterator[None]:
    """``HEADERS_ENV`` set to ``headers`` for the processes started within the block."""
    saved = os.environ.pop(HEADERS_ENV, None)
    if headers:
        os.environ[HEADERS_ENV] = to_env(headers)
    try:
        yield
    finally:
        os.environ.pop(HEADERS_ENV, None)
        if saved is not None:
            os.environ[HEADERS_ENV] = saved
