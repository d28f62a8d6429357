"""The payout schedule and subscription answer rules (judge/schedule_rules.py), which the
schedules family and the validator share: each rule shown holding and failing on one
exchange, read through a minimal ``Call``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.findings import NOT_JSON, Finding
from conformance.judge.schedule_rules import ScheduleRules, field_problems

PROFILE = load_profile()
RULES = ScheduleRules(PROFILE)
NOW = 1767225600.0  # 2026-01-01T00:00:00Z


@dataclass
class FakeCall:
    operation_id: str
    answer: Any
    request: Any = NOT_JSON
    path_params: dict[str, str] = field(default_factory=dict)
    status: int = 200
    handled: tuple[float, float] = (NOW - 1, NOW + 1)

    @property
    def success(self) -> bool:
        return True

    @property
    def code(self) -> str | None:
        return None

    @property
    def query(self) -> dict[str, str]:
        return {}

    def field(self, name: str) -> Any:
        return self.request.get(name) if isinstance(self.request, dict) else None

    def header(self, name: str) -> str | None:
        return None

    def response_header(self, name: str) -> str | None:
        return None

    def handled_between(
        self, slack: float, unix_timestamps: bool
    ) -> tuple[tuple[float, float], ...]:
        return (self.handled,)


REQUEST = {
    "currency_id": "usdc",
    "target_chain_id": "base",
    "withdraw_address_id": "wa_alpha_base",
    "interval_secs": 3600,
    "min_send_amount": "1.5",
    "mode": "auto_request",
}


def schedule(**changes: Any) -> dict[str, Any]:
    body = {
        "id": "ps_1",
        "currency_id": "usdc",
        "currency_chain_id": "usdc:base",
        "target_chain_id": "base",
        "withdraw_address_id": "wa_alpha_base",
        "interval_secs": 3600,
        "min_send_amount": "1.5",
        "min_send_raw": "1500000",
        "mode": "auto_request",
        "status": "active",
        "enabled": True,
        "next_run_at": "2026-01-01T01:00:00Z",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "retired_at": None,
    }
    return {**body, **changes}


def outcomes(found: list[Finding]) -> dict[str, Outcome]:
    """Per requirement id, the outcome (a failure wins over a pass)."""
    result: dict[str, Outcome] = {}
    for finding in found:
        for rid in finding.ids:
            if result.get(rid) is not Outcome.FAILED:
                result[rid] = finding.outcome
    return result


def create(answer: dict[str, Any], **request: Any) -> dict[str, Outcome]:
    call = FakeCall("createPayoutSchedule", answer, {**REQUEST, **request})
    return outcomes(list(RULES.payout(call)))


def test_a_conformant_create_passes_every_rule_it_decides() -> None:
    assert create(schedule()) == {
        "PAYOUT-001": Outcome.PASSED,
        "PAYOUT-002": Outcome.PASSED,
        "PAYOUT-006": Outcome.PASSED,
        "PAYOUT-011": Outcome.PASSED,
        "PAYOUT-012": Outcome.PASSED,
        "OPS-003": Outcome.PASSED,
    }


def test_a_create_answered_with_other_fields_fails_ops_003() -> None:
    found = create(schedule(interval_secs=60, min_send_amount="1.50"))
    assert found["OPS-003"] is Outcome.FAILED  # 1.50 is 1.5: only the interval is wrong


def test_next_run_at_is_the_requested_first_run_at_to_the_second_payout_004() -> None:
    first = "2026-01-03T00:00:00.400Z"
    assert (
        create(schedule(next_run_at="2026-01-03T00:00:00Z"), first_run_at=first)["PAYOUT-004"]
        is Outcome.PASSED
    )
    assert create(schedule(), first_run_at=first)["PAYOUT-004"] is Outcome.FAILED


def test_next_run_at_is_created_at_plus_the_interval_within_five_seconds_payout_006() -> None:
    assert create(schedule(next_run_at="2026-01-01T01:00:04Z"))["PAYOUT-006"] is Outcome.PASSED
    assert create(schedule(next_run_at="2026-01-01T01:00:06Z"))["PAYOUT-006"] is Outcome.FAILED


def test_without_created_at_next_run_at_follows_the_time_the_create_was_handled() -> None:
    assert create(schedule(created_at=None))["PAYOUT-006"] is Outcome.PASSED
    late = schedule(created_at=None, next_run_at="2026-01-01T00:00:00Z")
    assert create(late)["PAYOUT-006"] is Outcome.FAILED


def test_min_send_raw_is_the_amount_in_raw_units_payout_002() -> None:
    assert create(schedule(min_send_raw="1000000"))["PAYOUT-002"] is Outcome.FAILED


def test_an_accepted_create_with_too_many_decimals_is_judged_by_its_request_rule_alone() -> None:
    found = create(schedule(min_send_amount="1.1111111"), min_send_amount="1.1111111")
    assert set(found) == {"PAYOUT-011", "PAYOUT-012"}  # PAYOUT-003 is admission's


def replace(answer: dict[str, Any], **request: Any) -> Outcome:
    call = FakeCall("replacePayoutSchedule", answer, {**REQUEST, **request}, {"id": "ps_1"})
    return outcomes(list(RULES.payout(call)))["PAYOUT-010"]


def test_a_replace_answers_with_every_field_it_put_payout_010() -> None:
    assert replace(schedule()) is Outcome.PASSED
    assert replace(schedule(interval_secs=60.0), interval_secs=60) is Outcome.PASSED
    assert replace(schedule(interval_secs=86400)) is Outcome.FAILED
    assert replace(schedule(id="ps_2")) is Outcome.FAILED  # not the path's schedule
    assert replace(schedule(), first_run_at="2026-01-03T00:00:00Z") is Outcome.FAILED


def pause(answer: dict[str, Any]) -> dict[str, Outcome]:
    return outcomes(list(RULES.payout(FakeCall("pausePayoutSchedule", answer, NOT_JSON))))


def test_a_pause_answer_agrees_with_its_own_fields_payout_001_002() -> None:
    paused = schedule(status="paused", enabled=False)
    assert pause(paused)["PAYOUT-001"] is Outcome.PASSED
    assert pause({**paused, "currency_chain_id": "usdc:ethereum"})["PAYOUT-001"] is (Outcome.FAILED)
    assert pause({**paused, "min_send_raw": "15"})["PAYOUT-002"] is Outcome.FAILED


def test_enabled_exactly_when_active_payout_011() -> None:
    assert pause(schedule(status="paused", enabled=True))["PAYOUT-011"] is Outcome.FAILED
    assert pause(schedule(status="paused", enabled=None))["PAYOUT-011"] is Outcome.FAILED


def test_retired_at_is_null_until_retired_and_a_time_after_payout_012() -> None:
    paused = schedule(status="paused", enabled=False)
    assert pause(paused)["PAYOUT-012"] is Outcome.PASSED
    assert pause({**paused, "retired_at": "2026-01-01T00:00:00Z"})["PAYOUT-012"] is (Outcome.FAILED)
    absent = {k: v for k, v in paused.items() if k != "retired_at"}
    assert pause(absent)["PAYOUT-012"] is Outcome.FAILED
    retired = schedule(status="retired", enabled=False, retired_at="2026-01-01T00:00:00Z")
    call = FakeCall("retirePayoutSchedule", retired)
    assert outcomes(list(RULES.payout(call)))["PAYOUT-012"] is Outcome.PASSED


def test_field_problems_read_numbers_and_amounts_by_value() -> None:
    sent = {"interval_secs": 60, "mode": "auto_request", "min_send_amount": "1.5"}
    found = {"interval_secs": 60.0, "mode": "auto_request", "min_send_amount": "1.50"}
    assert field_problems(sent, found) == []
    assert field_problems({"interval_secs": 1}, {"interval_secs": True}) == [
        "interval_secs True, requested 1"
    ]
    assert field_problems(NOT_JSON, {}) == []


SUBSCRIPTION = {"currency_id": "usdc", "chain_id": "base", "amount": "5", "interval_secs": 60}


def subscription(operation_id: str, answer: dict[str, Any]) -> dict[str, Outcome]:
    request = SUBSCRIPTION if operation_id == "createSubscription" else NOT_JSON
    return outcomes(list(RULES.subscription(FakeCall(operation_id, answer, request))))


def test_next_bill_at_is_the_time_of_the_create_plus_the_interval_sub_004() -> None:
    answer = {"currency_chain_id": "usdc:base", "next_bill_at": "2026-01-01T00:01:00Z"}
    assert subscription("createSubscription", answer) == {
        "SUB-004": Outcome.PASSED,
        "SUB-005": Outcome.PASSED,
    }
    now = {**answer, "next_bill_at": "2026-01-01T00:00:00Z"}
    assert subscription("createSubscription", now)["SUB-004"] is Outcome.FAILED


def test_currency_chain_id_of_a_canceled_subscription_is_its_own_pair_sub_005() -> None:
    answer = {"currency_id": "usdc", "chain_id": "base", "currency_chain_id": "usdc:base"}
    assert subscription("cancelSubscription", answer) == {"SUB-005": Outcome.PASSED}
    wrong = {**answer, "currency_chain_id": "base:usdc"}
    assert subscription("cancelSubscription", wrong) == {"SUB-005": Outcome.FAILED}
