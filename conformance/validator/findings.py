"""What one check concluded about one exchange, before ``checks`` makes it a ``CheckResult``."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple
from urllib.parse import parse_qsl

from conformance.core.formats import epoch_seconds
from conformance.core.results import Outcome
from conformance.validator.exchange import Exchange
from conformance.validator.tables import parsed_json

NOT_JSON: Any = object()  # a body that is absent, or not JSON


class Finding(NamedTuple):
    check: str  # "response_schema", "status", ...
    ids: tuple[str, ...]
    outcome: Outcome
    message: str


def verdict(check: str, ids: tuple[str, ...], problem: str | None) -> Finding:
    """A failure saying ``problem``, or the pass of ``ids`` when there is none (one shared
    object per rule: a finding is immutable and the same rule passes on many exchanges)."""
    if problem is None:
        return passed(check, ids)
    return Finding(check, ids, Outcome.FAILED, problem)


@lru_cache(maxsize=4096)  # rules and their combinations: a few hundred
def passed(check: str, ids: tuple[str, ...]) -> Finding:
    return Finding(check, ids, Outcome.PASSED, "as the request says")


@dataclass(slots=True)
class Call:
    """One exchange as the request-and-answer checks read it: both bodies parsed once (not to
    be changed: the checks of the exchange share it)."""

    exchange: Exchange
    operation_id: str
    path_params: dict[str, str]
    status: int
    answer: Any  # the response's JSON document; None when it has none (or it was not captured)
    # The request's JSON document; ``NOT_JSON`` when the request has no body or one that is not
    # JSON (every check of a known operation reads it: parsed at once).
    request: Any = field(init=False)
    _query: dict[str, str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        raw = self.exchange.request_body
        document = NOT_JSON
        if raw:
            with contextlib.suppress(ValueError):
                document = parsed_json(raw)
        self.request = document

    @property
    def success(self) -> bool:
        return 200 <= self.status < 300

    @property
    def code(self) -> str | None:
        code = self.answer.get("code") if isinstance(self.answer, dict) else None
        return code if isinstance(code, str) else None

    def field(self, name: str) -> Any:
        """A top-level member of the request body (None when absent or no object)."""
        return self.request.get(name) if isinstance(self.request, dict) else None

    @property
    def query(self) -> dict[str, str]:
        """The query parameters, the first value of each (read once, when first asked)."""
        found = self._query
        if found is None:
            found = {}
            for name, value in parse_qsl(self.exchange.query, keep_blank_values=True):
                found.setdefault(name, value)
            self._query = found
        return found


def seconds(value: object) -> float | None:
    """Unix seconds of an RFC 3339 date-time (None for anything else), for comparisons with a
    tolerance of a second or more: Python's own parser where it reads the text as RFC 3339 says,
    the exact one (``core.formats.epoch_seconds``) otherwise."""
    if not isinstance(value, str):
        return None
    if len(value) >= 20 and value[10] == "T" and value[4] == "-":
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is not None:
            return moment.timestamp()
    exact = epoch_seconds(value)
    return float(exact) if exact is not None else None


def request_times(exchange: Exchange, unix_seconds: bool) -> tuple[float, ...]:
    """When the request was sent, in Unix seconds, as the recording knows it: the recorded
    start and the X-Timestamp (when the profile's timestamps are Unix seconds; a server that
    accepted the request had its clock within the profile's window of it). Either may be
    missing; a check allows whichever is nearer."""
    found: list[float] = []
    started = seconds(exchange.started_at)
    if started is not None:
        found.append(started)
    stamp = exchange.header("X-Timestamp")
    if unix_seconds and stamp is not None and stamp.isdigit() and len(stamp) < 16:
        found.append(float(stamp))
    return tuple(found)
