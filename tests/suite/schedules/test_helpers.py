"""The schedules family's helpers: amounts, times, the profile's state machine, split cases."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.core.contract import effective_contract
from conformance.core.formats import parse_date_time
from conformance.core.profile import Profile, load_profile
from conformance.judge.lifecycle import StateMachine
from conformance.suite.schedules.amounts import Amount, amounts, decimal_text, too_precise
from conformance.suite.schedules.calls import advanced
from conformance.suite.schedules.clock import ServerClock, resolution
from conformance.suite.schedules.payout_requests import PayoutFixtures
from conformance.suite.schedules.splits import SplitRules

PROFILE = load_profile("default")
CONTRACT = effective_contract(PROFILE)


def _fraction_digits(text: str) -> int:
    return len(text.partition(".")[2])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([0, 2, 6, 18]).flatmap(lambda d: st.tuples(st.just(d), amounts(d))))
def test_a_generated_amount_is_its_raw_value_scaled(case: tuple[int, Amount]) -> None:
    decimals, amount = case
    assert amount.raw >= 1
    assert _fraction_digits(amount.text) <= decimals
    assert Decimal(amount.text) * 10**decimals == amount.raw


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([0, 6, 18]).flatmap(lambda d: st.tuples(st.just(d), too_precise(d))))
def test_a_too_precise_amount_has_a_significant_extra_digit(case: tuple[int, str]) -> None:
    decimals, text = case
    assert _fraction_digits(text) > decimals
    assert not text.endswith("0")


def test_decimal_text_keeps_the_requested_digits() -> None:
    assert decimal_text(1500000, 6, 2) == "1.50"
    assert decimal_text(1500000, 6, 1) == "1.5"
    assert decimal_text(3, 0, 0) == "3"


def test_times_parse_with_offsets_and_long_fractions() -> None:
    moment = datetime(2026, 11, 22, 10, 4, 11, tzinfo=UTC)
    assert parse_date_time("2026-11-22T10:04:11Z") == moment
    assert parse_date_time("2026-11-22T12:04:11+02:00") == moment
    assert parse_date_time("2026-11-22T10:04:11.123456789Z") == moment.replace(microsecond=123456)
    assert parse_date_time("2026-11-22 10:04:11Z") is None
    assert parse_date_time(None) is None
    assert resolution("2026-11-22T10:04:11Z") == timedelta(seconds=1)
    assert resolution("2026-11-22T10:04:11.120Z") == timedelta(milliseconds=1)


def test_updated_at_must_move_unless_both_fall_in_one_tick() -> None:
    assert advanced("2026-11-22T10:04:11Z", "2026-11-22T10:04:12Z", 0.1) is True
    assert advanced("2026-11-22T10:04:11Z", "2026-11-22T10:04:11Z", 0.1) is None
    assert advanced("2026-11-22T10:04:11Z", "2026-11-22T10:04:11Z", 1.5) is False
    assert advanced("2026-11-22T10:04:11.5Z", "2026-11-22T10:04:11.5Z", 0.2) is False
    assert advanced("2026-11-22T10:04:11Z", "not a time", 5) is False


def test_the_server_clock_allows_the_auth_window_until_it_has_seen_a_date() -> None:
    clock = ServerClock(timedelta(seconds=300))
    assert clock.tolerance > timedelta(seconds=300)
    assert clock.future(0) > datetime.now(UTC) + timedelta(seconds=300)


def test_the_payout_state_machine_comes_from_the_profile() -> None:
    machine = StateMachine.of(PROFILE, "payout_schedules")
    assert machine.paths() == {
        "active": (),
        "paused": ("pausePayoutSchedule",),
        "retired": ("retirePayoutSchedule",),
    }
    assert machine.target("pausePayoutSchedule", "paused") == "paused"
    assert machine.target("replacePayoutSchedule", "retired") is None


def _profile_with(**splits: Any) -> Profile:
    data = {**PROFILE.data, "splits": {**PROFILE.data["splits"], **splits}}
    return Profile(PROFILE.name, PROFILE.source, PROFILE.sha256, data)


@pytest.mark.parametrize("max_total", [10000, 5000, 15000])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_split_cases_break_exactly_their_rule(max_total: int, data: st.DataObject) -> None:
    rules = SplitRules(_profile_with(max_total_bps=max_total), CONTRACT, "m_alpha")
    for case in rules.cases():
        shares = data.draw(case.shares)
        total = sum(bps for _, bps in shares)
        merchants = Counter(m for m, _ in shares)
        assert all(rules.low <= bps <= rules.high for _, bps in shares)
        if case.requirement_ids == ("SPLIT-004",):
            assert total > max_total and max(merchants.values()) == 1
        else:
            assert total <= max_total
        if case.requirement_ids == ("SPLIT-003",):
            assert max(merchants.values()) == 2
        if case.accepted:
            assert set(merchants) <= set(PROFILE.split_merchants)
            assert max(merchants.values()) == 1 and "m_alpha" not in merchants


def test_a_profile_that_allows_self_splits_leaves_that_rule_unexercised() -> None:
    rules = SplitRules(_profile_with(allow_self=True), CONTRACT, "m_alpha")
    assert "SPLIT-002" not in {i for case in rules.cases() for i in case.requirement_ids}
    assert "SPLIT-002" in rules.not_reached


def test_payout_refusals_cover_every_rule_of_the_profile() -> None:
    fixtures = PayoutFixtures(PROFILE, CONTRACT, "m_alpha")
    ids = Counter(i for refusal in fixtures.refusals() for i in refusal.requirement_ids)
    assert ids["PAYOUT-003"] == len(PROFILE.currencies)
    assert {"PAYOUT-005", "PAYOUT-007", "PAYOUT-008", "PAYOUT-009"} <= set(ids)
    assert fixtures.foreign_addresses == PROFILE.withdraw_addresses("m_beta")
    changed = fixtures.different(fixtures.example())
    assert all(
        getattr(changed, f) != getattr(fixtures.example(), f)
        for f in ("deployment", "withdraw_address_id", "interval_secs", "amount", "mode")
    )
