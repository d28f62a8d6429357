"""Timestamps as the API writes them: RFC 3339, UTC, with a ``Z``."""

from __future__ import annotations

import re
from datetime import UTC, datetime

_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """``2026-11-22T10:04:11Z``, or with microseconds when there are any."""
    moment = moment.astimezone(UTC)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str) -> datetime | None:
    """An aware datetime for a valid RFC 3339 date-time string, else None."""
    if not _RFC3339.fullmatch(text):
        return None
    normalised = text.upper().replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(normalised)
    except ValueError:
        return None
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        # A valid date-time whose UTC instant lies just outside datetime's range (year 1 with
        # a positive offset, year 9999 with a negative one): the nearest representable instant.
        return (
            datetime.min.replace(tzinfo=UTC)
            if parsed.year == 1
            else datetime.max.replace(tzinfo=UTC)
        )
