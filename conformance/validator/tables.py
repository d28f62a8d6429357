"""What the cross-exchange checks share: bounded tables, digests, times, findings, and the
failures that wait until no later-recorded exchange can have come first.

Every table is an LRU capped at ``TABLE_LIMIT`` entries holding digests rather than bodies, so
memory stays bounded whatever the length of the recording (docs/validate.md, "Memory").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Protocol

from conformance.core import jsonsafe
from conformance.core.results import Evidence, Outcome
from conformance.judge.tables import digest
from conformance.validator.exchange import Exchange, folded_headers

Finding = tuple[str, tuple[str, ...], Outcome, str]
"""One verdict of a check: (check name, requirement ids, outcome, message; the message is the
reason when the outcome is "not exercised")."""


@lru_cache(maxsize=1024)
def party(what: str, name: str) -> bytes:
    """The digest standing for a merchant or an API key (``what``: "merchant" or "key"; a
    recording holds few of them)."""
    return digest(what, name)


def list_items(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The items of a list answer (of every list member of the object)."""
    for value in body.values():
        if isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    yield item


# The bodies parsed last, (raw, document), newest first: the per-exchange checks and the
# cross-exchange ones read the same request and response. Rebound whole, never changed.
_parsed: tuple[tuple[bytes, Any], ...] = ()


def parsed_json(raw: bytes) -> Any:
    """``jsonsafe.loads(raw)`` (``ValueError`` when it is no JSON or too complex), parsed once
    for an exchange's request and response. The document is shared between the checks: none
    may change it."""
    global _parsed
    for seen, document in _parsed:
        if seen is raw:  # the very bytes object (alive while kept here): the same document
            return document
    document = jsonsafe.loads(raw)
    _parsed = ((raw, document), *_parsed[:1])
    return document


def json_body(raw: bytes) -> Any:
    """A JSON object or array body, None for anything else (not JSON, or too deep). Shared
    with the other checks when ``parsed_json`` read it: not to be changed."""
    if not raw or raw[:1] not in (b"{", b"["):
        return None
    for seen, document in _parsed:
        if seen is raw:
            return document
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def seconds(started_at: str | None) -> float | None:
    """An ISO 8601 time as Unix seconds; None when absent or unreadable."""
    if not started_at:
        return None
    try:
        return datetime.fromisoformat(started_at.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def request_headers(exchange: Exchange) -> dict[str, str]:
    """The request's headers by lower-case name, the first of duplicates winning (as
    ``Exchange.header`` reads them). Shared by every check of the exchange: not to be changed."""
    return folded_headers(exchange)


class Moment(Protocol):
    """When an exchange happened (``cross._When``): ``after`` says whether it started after
    ``earlier`` ended (exchanges overlapping in time have no order)."""

    def after(self, earlier: Any) -> bool: ...


@dataclass(frozen=True, slots=True)
class Waiting:
    """A failure that holds only if no exchange recorded later came first: it waits until an
    exchange starts after this one ended, and an exchange about the same ``subject`` that
    overlaps it withdraws it."""

    subject: str
    when: Moment
    source: str
    check: str
    ids: tuple[str, ...]
    message: str
    operation_id: str
    evidence: Evidence  # the exchange as the failure shows it


class WaitingRoom:
    """The failures waiting for the exchanges that could have come before them."""

    def __init__(self) -> None:
        self._waiting: list[Waiting] = []

    def __len__(self) -> int:
        return len(self._waiting)

    def add(self, waiting: Waiting) -> None:
        self._waiting.append(waiting)

    def withdraw(self, subject: str, when: Moment) -> None:
        """An exchange about ``subject`` at ``when``: the failures it overlaps are withdrawn."""
        if self._waiting:
            self._waiting = [w for w in self._waiting if w.subject != subject or when.after(w.when)]

    def due(self, when: Moment) -> list[Waiting]:
        """The failures no exchange from ``when`` on can precede (they ended before it)."""
        if not self._waiting:
            return []
        ready = [w for w in self._waiting if when.after(w.when)]
        if ready:
            self._waiting = [w for w in self._waiting if not when.after(w.when)]
        return ready

    def remaining(self) -> list[Waiting]:
        """The failures still waiting at the end of the recording."""
        left, self._waiting = self._waiting, []
        return left
