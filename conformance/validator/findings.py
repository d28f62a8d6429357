"""What one check concluded about one exchange, before ``checks`` makes it a ``CheckResult``."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from conformance.judge.answers import CallReading
from conformance.judge.findings import NOT_JSON, Finding, passed, seconds, verdict
from conformance.judge.values import first_values
from conformance.validator.exchange import Exchange
from conformance.validator.tables import parsed_json

__all__ = ["NOT_JSON", "Call", "Finding", "passed", "request_times", "seconds", "verdict"]


@dataclass(slots=True)
class Call(CallReading):
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
    def query(self) -> dict[str, str]:
        """The query parameters, the first value of each (read once, when first asked)."""
        found = self._query
        if found is None:
            found = self._query = first_values(self.exchange.query)
        return found

    @property
    def raw_query(self) -> str:
        return self.exchange.query

    @property
    def raw_path(self) -> str:
        return self.exchange.path

    @property
    def request_body(self) -> bytes:
        return self.exchange.request_body

    def header(self, name: str) -> str | None:
        return self.exchange.header(name)

    def response_header(self, name: str) -> str | None:
        return self.exchange.header(name, response=True)

    def handled_between(
        self, slack: float, unix_timestamps: bool
    ) -> tuple[tuple[float, float], ...]:
        """When the server may have handled the request: ``slack`` either side of each time the
        recording gives for it (``request_times``)."""
        return tuple(
            (moment - slack, moment + slack)
            for moment in request_times(self.exchange, unix_timestamps)
        )


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
