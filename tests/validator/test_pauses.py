"""A pause of a paused payout schedule answers it unchanged (PAYOUT-STATE-008)."""

from __future__ import annotations

from typing import Any

from conformance.core.results import Outcome
from tests.validator.crossing import Traffic

PATH = "/v1/payout-schedules/ps_1"


def schedule(status: str, updated_at: str) -> dict[str, Any]:
    return {
        "id": "ps_1",
        "status": status,
        "enabled": status == "active",
        "interval_secs": 86400,
        "created_at": "2026-01-01T00:00:00.000000Z",
        "updated_at": updated_at,
    }


def pause(traffic: Traffic, key: str, updated_at: str, **kw: Any) -> None:
    answer = schedule("paused", updated_at)
    traffic.send("pausePayoutSchedule", "POST", f"{PATH}/pause", key=key, answer=answer, **kw)


def test_a_pause_of_a_paused_schedule_that_moves_updated_at_fails_payout_state_008() -> None:
    traffic = Traffic()
    pause(traffic, "k1", "2026-01-01T00:00:01.000000Z")
    pause(traffic, "k2", "2026-01-01T00:00:02.000000Z")
    assert traffic.outcomes("PAYOUT-STATE-008") == [Outcome.FAILED]


def test_a_pause_of_a_paused_schedule_answered_unchanged_passes_payout_state_008() -> None:
    traffic = Traffic()
    pause(traffic, "k1", "2026-01-01T00:00:01.000000Z")
    pause(traffic, "k2", "2026-01-01T00:00:01.000000Z")
    assert traffic.outcomes("PAYOUT-STATE-008") == [Outcome.PASSED]


def test_pauses_overlapping_in_time_are_not_judged() -> None:
    traffic = Traffic()
    pause(traffic, "k1", "2026-01-01T00:00:01.000000Z", at=10, duration_ms=500)
    pause(traffic, "k2", "2026-01-01T00:00:02.000000Z", at=10.2)
    assert traffic.outcomes("PAYOUT-STATE-008") == []


def test_an_overlap_within_the_millisecond_of_the_recorded_starts_is_no_overlap() -> None:
    traffic = Traffic()
    pause(traffic, "k1", "2026-01-01T00:00:01.000000Z", at=10, duration_ms=1.4)
    pause(traffic, "k2", "2026-01-01T00:00:02.000000Z", at=10.001)
    assert traffic.outcomes("PAYOUT-STATE-008") == [Outcome.FAILED]


def test_a_schedule_changed_in_between_is_not_judged() -> None:
    traffic = Traffic()
    pause(traffic, "k1", "2026-01-01T00:00:01.000000Z")
    changed = {**schedule("paused", "2026-01-01T00:00:02.000000Z"), "interval_secs": 3600}
    traffic.send("pausePayoutSchedule", "POST", f"{PATH}/pause", key="k2", answer=changed)
    assert traffic.outcomes("PAYOUT-STATE-008") == []
