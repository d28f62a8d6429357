"""RFC 3339 timestamps as the API writes and reads them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given

from conformance.core.formats import conforms
from conformance.reference.timestamps import iso, parse_rfc3339
from tests.core.test_formats import DATE_TIMES


def test_iso_is_utc_with_z() -> None:
    moment = datetime(2026, 11, 22, 10, 4, 11, tzinfo=timezone(timedelta(hours=2)))
    assert iso(moment) == "2026-11-22T08:04:11Z"
    assert iso(moment.replace(microsecond=5)) == "2026-11-22T08:04:11.000005Z"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-22T10:04:11Z", datetime(2026, 11, 22, 10, 4, 11, tzinfo=UTC)),
        ("2026-11-22t10:04:11z", datetime(2026, 11, 22, 10, 4, 11, tzinfo=UTC)),
        ("2026-11-22T12:04:11+02:00", datetime(2026, 11, 22, 10, 4, 11, tzinfo=UTC)),
        ("2026-11-22T10:04:11.5Z", datetime(2026, 11, 22, 10, 4, 11, 500000, tzinfo=UTC)),
        ("2026-11-22T10:04:11.1234567Z", datetime(2026, 11, 22, 10, 4, 11, 123456, tzinfo=UTC)),
        # a leap second is the instant the next day starts, as on POSIX clocks
        ("1998-12-31T23:59:60Z", datetime(1999, 1, 1, tzinfo=UTC)),
        ("1998-12-31T15:59:60-08:00", datetime(1999, 1, 1, tzinfo=UTC)),
    ],
)
def test_parse_valid(text: str, expected: datetime) -> None:
    assert parse_rfc3339(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-22",
        "2026-11-22T10:04:11",
        "2026-11-22 10:04:11Z",
        "2026-13-01T00:00:00Z",
        "2026-11-22T10:04:11Z\n",
        "tomorrow",
        "2026-02-30T00:00:00Z",
    ],
)
def test_parse_invalid(text: str) -> None:
    assert parse_rfc3339(text) is None


def test_instants_just_outside_datetimes_range_are_clamped_not_crashed() -> None:
    assert parse_rfc3339("0001-01-01T00:00:00+01:00") == datetime.min.replace(tzinfo=UTC)
    assert parse_rfc3339("0000-06-01T12:00:00Z") == datetime.min.replace(tzinfo=UTC)
    assert parse_rfc3339("9999-12-31T23:59:59-01:00") == datetime.max.replace(tzinfo=UTC)
    assert parse_rfc3339("9999-12-31T23:59:60Z") == datetime.max.replace(tzinfo=UTC)


@given(DATE_TIMES)
def test_every_date_time_the_contract_accepts_is_parsed(text: str) -> None:
    """The handlers read what validation let through: no valid date-time is lost."""
    assert (parse_rfc3339(text) is not None) is conforms("date-time", text)
