"""Times the server derives from the moment it handled a request (``expires_at``,
``next_bill_at``, an x402 ``valid_before``, a ``next_run_at`` without ``created_at``), judged
against the windows the caller gives for that moment (``Call.handled_between``).

A replay (the profile's replay marker on the answer) answers the stored response, whose times
were derived when the original request was handled, perhaps long before: it is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from conformance.core.profile import Profile
from conformance.core.results import Outcome
from conformance.judge.findings import Finding, passed, seconds
from conformance.judge.idempotency import is_marked
from conformance.judge.values import json_int

if TYPE_CHECKING:
    from conformance.judge.answers import Call

LATENCY_SECS = 60
"""Allowed, on top of the profile's clock window, between a request's time and its handling."""


class RequestClock:
    """The profile's allowance for the time a request was handled: its clock window and a
    minute of latency either side of the time it was sent."""

    def __init__(self, profile: Profile) -> None:
        self.slack = profile.auth.clock_window_secs + LATENCY_SECS
        self._unix_timestamps = profile.auth.timestamp_format == "unix-seconds"
        self._replay_header = profile.idempotency.replay_header

    def derived(
        self, call: Call, check: str, ids: tuple[str, ...], name: str, actual: object, secs: int
    ) -> Iterator[Finding]:
        """``actual`` (a date-time, or Unix seconds) is the request's time plus ``secs``
        (``derived_time``); nothing for a replay."""
        if self._replay_header and is_marked(call.response_header(self._replay_header)):
            return iter(())
        return derived_time(call, check, ids, name, actual, secs, self.slack, self._unix_timestamps)


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
