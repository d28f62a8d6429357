"""A gateway header given as ``"Name: value"``: one parser for the suite's ``run -H`` and the
reference server's ``serve --require-header``, so that both sides agree on what one is.

A header name is an RFC 9110 token; the value is visible ASCII with inner spaces or tabs (no
line break, control or non-ASCII character, which an HTTP stack would encode one way or
another), and not empty. A header the API or HTTP framing uses (the signing headers,
``Idempotency-Key``, ``Content-Type``, ``Host``...) cannot be a gateway header. Errors never
repeat the value: it is a secret.
"""

from __future__ import annotations

import re

from conformance.core.signing import AUTH_HEADERS

Header = tuple[str, str]

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VALUE = re.compile(r"[\x21-\x7e]([\t\x20-\x7e]*[\x21-\x7e])?")
RESERVED = frozenset(
    name.lower()
    for name in (
        *AUTH_HEADERS,
        "Idempotency-Key",
        "Content-Type",
        "Content-Length",
        "Transfer-Encoding",
        "Host",
        "Connection",
    )
)


class HeaderError(ValueError):
    """Not a gateway header; the message says why, never with the value."""


def parse_header(text: str) -> Header:
    """``"Name: value"`` as ``(name, value)``, the value stripped of surrounding blanks."""
    name, colon, value = text.partition(":")
    if not colon:
        raise HeaderError("expected 'Name: value', found no colon")
    if _TOKEN.fullmatch(name) is None:
        shown = name[:40].encode("unicode_escape").decode()
        raise HeaderError(
            f"{shown!r} is not a header name (letters, digits and !#$%&'*+.^_`|~- only, "
            "no space before the colon)"
        )
    value = value.strip(" \t")
    if not value:
        raise HeaderError(f"{name}: the value is empty")
    if _VALUE.fullmatch(value) is None:
        raise HeaderError(
            f"{name}: the value holds a line break, a control character or a non-ASCII "
            "character, which a header cannot carry"
        )
    if name.lower() in RESERVED:
        raise HeaderError(
            f"{name}: the API or HTTP itself uses this header (authentication, idempotency and "
            "framing headers cannot be a gateway's)"
        )
    return name, value
