"""Times the server derives from the moment it handled a request (``expires_at``,
``next_bill_at``, an x402 ``valid_before``, a ``next_run_at`` without ``created_at``), judged
against the windows the caller gives for that moment (``Call.handled_between``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from conformance.core.results import Outcome
from conformance.judge.findings import Finding, passed, seconds
from conformance.judge.values import json_int

if TYPE_CHECKING:
    from conformance.judge.answers import Call

LATENCY_SECS = 60
"""Allowed, on top of the profile's clock window, between a request's time and its handling."""


def derived_time(
    call: Call,
    check: str,
    ids: tuple[str, ...],
    name: str,
    actual: object,
    secs: int,
    slack: float,
    unix_timestamps: bool,
) -> Iterator[Finding]:
    """``actual`` (a date-time, or Unix seconds) is the request's time plus ``secs``: within
    ``slack`` of a time the request was sent, or in the narrower window the caller knows."""
    whole = json_int(actual)
    value = float(whole) if whole is not None else seconds(actual)
    windows = call.handled_between(slack, unix_timestamps)
    if not windows or value is None:
        return  # no time recorded, or a malformed value (the schema check's)
    due = value - secs
    if any(low <= due <= high for low, high in windows):
        yield passed(check, ids)
        return
    low, high = min(windows, key=lambda w: abs(due - (w[0] + w[1]) / 2))
    off, allowed = due - (low + high) / 2, (high - low) / 2
    message = (
        f"{name} {actual!r} is {off:+.0f} s from the request's time + {secs} s, beyond "
        f"the {allowed:.0f} s allowed around the time it was handled"
    )
    yield Finding(check, ids, Outcome.FAILED, message)
