"""What a rule concluded about one exchange: a ``Finding`` (passed, or failed and why).

The judge's rules yield findings; the validator makes them ``CheckResult``s and the suite's
families record them as the results of the test that sent the exchange.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from conformance.core.formats import epoch_seconds
from conformance.core.results import Outcome

NOT_JSON: Any = object()  # a body that is absent, or not JSON
ANSWER = "answer"
"""The check of every rule of an answer against its own request: one row per requirement."""


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
