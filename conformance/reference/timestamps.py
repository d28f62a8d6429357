"""Timestamps as the API writes them: RFC 3339, UTC, with a ``Z``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from conformance.core.formats import is_date_time


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """``2026-11-22T10:04:11Z``, or with microseconds when there are any."""
    moment = moment.astimezone(UTC)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str) -> datetime | None:
    """An aware datetime for a valid RFC 3339 date-time string (``core.formats``), else None.

    A leap second (``23:59:60Z``) is the instant the next day starts, as on POSIX clocks.
    Instants outside datetime's range (year 0000, year 1 with a positive offset, year 9999 with
    a negative one) are the nearest representable instant.
    """
    if not is_date_time(text):
        return None
    normalised = text.upper().replace("Z", "+00:00")
    leap = normalised[17:19] == "60"
    if leap:
        normalised = normalised[:17] + "59" + normalised[19:]
    if normalised.startswith("0000"):
        return datetime.min.replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(normalised)
    try:
        return parsed.astimezone(UTC) + timedelta(seconds=1 if leap else 0)
    except OverflowError:
        return (
            datetime.min.replace(tzinfo=UTC)
            if parsed.year == 1
            else datetime.max.replace(tzinfo=UTC)
        )
