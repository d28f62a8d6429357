"""RFC 3339 timestamps as the API writes and reads them."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from conformance.reference.timestamps import iso


def test_iso_is_utc_with_z() -> None:
    moment = datetime(2026, 11, 22, 10, 4, 11, tzinfo=timezone(timedelta(hours=2)))
    assert iso(moment) == "2026-11-22T08:04:11Z"
    assert iso(moment.replace(microsecond=5)) == "2026-11-22T08:04:11.000005Z"
