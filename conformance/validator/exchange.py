"""One recorded request/response pair, as the readers deliver it to the checks."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import SplitResult

from conformance.core.untrusted import split_url


@lru_cache(maxsize=256)
def url_parts(url: str) -> SplitResult:
    """``core.untrusted.split_url(url)``, once for a URL: the reader checks an exchange's URL,
    then the checks read its path and query several times each. The result is an immutable
    tuple of strings, safe to share."""
    return split_url(url)


@dataclass(frozen=True)
class Exchange:
    """One recorded request/response pair, as on the wire (bodies as bytes)."""

    method: str  # upper case
    url: str  # absolute URL as recorded (scheme://host/path?query)
    request_headers: tuple[tuple[str, str], ...]  # in order, duplicates kept
    request_body: bytes  # b"" when none
    status: int | None  # None: no response recorded
    response_headers: tuple[tuple[str, str], ...]
    response_body: bytes
    started_at: str | None = None  # ISO 8601 from the recording, if any
    source: str = ""  # "traffic.har entry 12" / "traffic.jsonl line 13"
    truncated: bool = False  # a body was cut or left out by the recorder (HAR ``_truncated``)
    # How long the exchange took (HAR ``time``, JSON Lines ``duration_ms``), when recorded: with
    # ``started_at`` it tells which exchanges overlap in time (and so have no order).
    duration_ms: float | None = None
    # Why ``response_body`` is not the body the server sent (the recorder did not capture it),
    # None when it is: checks that read the body are then "not exercised" with this reason.
    response_body_missing: str | None = None
    # Why ``request_body`` may not be the bytes that were sent (replacement characters, a cut
    # body, binary data held as text), None when it is: a signature is judged only on exact bytes.
    request_body_inexact: str | None = None

    def header(self, name: str, *, response: bool = False) -> str | None:
        """The first value of header ``name`` (case-insensitive) of the request, or of the
        response when ``response``; None when absent."""
        return folded_headers(self, response=response).get(name.lower())

    @property
    def path(self) -> str:
        """The URL path without the query, e.g. ``/v1/payments/abc`` ("/" when empty)."""
        return url_parts(self.url).path or "/"

    @property
    def query(self) -> str:
        """The raw query string, without the "?"."""
        return url_parts(self.url).query


# The exchange whose headers were folded last, and the folds (request, response): every check
# of an exchange reads its headers, one exchange after another.
_folded: tuple[Exchange, dict[str, str], dict[str, str] | None] | None = None


def folded_headers(exchange: Exchange, *, response: bool = False) -> dict[str, str]:
    """The request's (or the response's) headers by lower-case name, the first of duplicates
    winning. Shared by every check of the exchange: not to be changed."""
    global _folded
    last = _folded
    if last is None or last[0] is not exchange:
        request = {name.lower(): value for name, value in reversed(exchange.request_headers)}
        last = _folded = (exchange, request, None)
    if not response:
        return last[1]
    answer = last[2]
    if answer is None:
        answer = {name.lower(): value for name, value in reversed(exchange.response_headers)}
        _folded = (exchange, last[1], answer)
    return answer


class RecordingError(Exception):
    """The file cannot be read as a recording: the message says where and why (file, entry/line)."""
