"""Times the server computes, compared with room for clocks and slow servers.

The server's clock is estimated from the ``Date`` header of its responses (one-second
resolution). Without one, the suite only knows that the server's clock is within the profile's
authentication clock window of its own, and allows that much.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

import httpx

TOLERANCE = timedelta(seconds=5)
"""Allowed between a time the server computes and the suite's estimate of it."""
FUTURE_MARGIN = timedelta(seconds=60)
"""How far from the server's now a generated "future" or "past" time is, at least."""


def resolution(*values: object) -> timedelta:
    """The finest resolution the server's timestamps show (1 s when none has a fraction)."""
    digits = 0
    for value in values:
        if isinstance(value, str):
            match = re.search(r"\.([0-9]+)", value)
            if match:
                digits = max(digits, len(match.group(1)))
    return timedelta(seconds=10.0**-digits) if digits else timedelta(seconds=1)


def iso(moment: datetime) -> str:
    """``2026-11-22T10:04:11Z`` (whole seconds, UTC)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now() -> datetime:
    return datetime.now(UTC)


@dataclass
class ServerClock:
    """The suite's estimate of the server's clock."""

    clock_window: timedelta
    skew: timedelta | None = None  # server minus suite; None until a Date header was seen

    def observe(self, response: httpx.Response, finished: datetime) -> None:
        raw = response.headers.get("date")
        if not raw:
            return
        try:
            date = parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return
        if date.tzinfo is None:
            return
        # The header is truncated to the second: the server's now lies in [date, date + 1 s).
        self.skew = date + timedelta(seconds=0.5) - finished

    @property
    def tolerance(self) -> timedelta:
        return TOLERANCE if self.skew is not None else TOLERANCE + self.clock_window

    def server_now(self) -> datetime:
        return now() + (self.skew or timedelta(0))

    def future(self, extra_secs: int) -> datetime:
        """A whole-second moment surely in the server's future."""
        moment = self.server_now() + self.tolerance + FUTURE_MARGIN + timedelta(seconds=extra_secs)
        return moment.replace(microsecond=0) + timedelta(seconds=1)

    def past(self, extra_secs: int) -> datetime:
        """A whole-second moment surely in the server's past."""
        moment = self.server_now() - self.tolerance - FUTURE_MARGIN - timedelta(seconds=extra_secs)
        return moment.replace(microsecond=0)

    def window(self, started: datetime, finished: datetime) -> tuple[datetime, datetime]:
        """When, on the server's clock, a request sent at ``started`` and answered at
        ``finished`` (suite clock) can have been handled, with the tolerance."""
        skew = self.skew or timedelta(0)
        return started + skew - self.tolerance, finished + skew + self.tolerance
