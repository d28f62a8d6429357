"""One recorded request/response pair, as the readers deliver it to the checks."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import SplitResult

from conformance.core.untrusted import split_url


# The checks read an exchange's path and query several times each: split its URL once. The
# result is an immutable tuple of strings, safe to share.
@lru_cache(maxsize=256)
def _split(url: str) -> SplitResult:
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

    def header(self, name: str, *, response: bool = False) -> str | None:
        """The first value of header ``name`` (case-insensitive) of the request, or of the
        response when ``response``; None when absent."""
        wanted = name.lower()
        for key, value in self.response_headers if response else self.request_headers:
            if key.lower() == wanted:
                return value
        return None

    @property
    def path(self) -> str:
        """The URL path without the query, e.g. ``/v1/payments/abc`` ("/" when empty)."""
        return _split(self.url).path or "/"

    @property
    def query(self) -> str:
        """The raw query string, without the "?"."""
        return _split(self.url).query


class RecordingError(Exception):
    """The file cannot be read as a recording: the message says where and why (file, entry/line)."""
