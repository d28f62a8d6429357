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
from collections.abc import Iterator, Sequence

from conformance.core import headers as parsing
from conformance.core.environment import environ
from conformance.core.headers import Header
from conformance.core.redaction import secret_headers
from conformance.core.run_inputs import parse_headers

HEADERS_ENV = "PAYMENT_CONFORMANCE_HEADERS"
"""One ``Name: value`` a line: the run's gateway headers, for its test processes."""

RESERVED = parsing.RESERVED


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
    with environ({HEADERS_ENV: to_env(headers) if headers else None}):
        yield
