"""The state machines' rules: a transition refused from a state it does not start from, a state
shown later that the earlier one leads to, an idle transition answered unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.lifecycle import (
    StateMachine,
    change_findings,
    idle_findings,
    refusal_findings,
)
from conformance.validator.findings import Call
from tests.validator.samples import exchange

PROFILE = load_profile("default")
PAYMENTS = StateMachine.of(PROFILE, "payments")
SCHEDULES = StateMachine.of(PROFILE, "payout_schedules")
INVALID_STATE = {"code": "invalid_state", "message": "m"}


def call(operation: str, status: int, answer: Any = None, body: Any = b"") -> Call:
    sent = exchange("POST", "/v1/x/1/op", request_body=body, status=status, response_body=answer)
    return Call(sent, operation, {}, status, answer)


def verdicts(found: list[Any]) -> list[tuple[tuple[str, ...], Outcome]]:
    return [(f.ids, f.outcome) for f in found]


@pytest.mark.parametrize(
    ("state", "ids"),
    [("canceled", ("PAY-STATE-004",)), ("settled", ("PAY-STATE-005",))],
)
def test_a_cancel_refused_with_invalid_state_passes_the_requirement_of_its_state(
    state: str, ids: tuple[str, ...]
) -> None:
    found = refusal_findings(
        PAYMENTS,
        [state],
        call("cancelPayment", 409, INVALID_STATE),
        known_valid=True,
    )
    assert verdicts(found) == [(ids, Outcome.PASSED)]


def test_an_accept_underpaid_of_the_initial_state_is_pay_state_008() -> None:
    assert PAYMENTS.refusal_ids("acceptUnderpaidPayment", "pending") == ("PAY-STATE-008",)
    assert PAYMENTS.refusal_ids("acceptUnderpaidPayment", "expired") == ("PAY-STATE-009",)


def test_an_accepted_refused_transition_fails_whoever_sent_it() -> None:
    accepted = call("retirePayoutSchedule", 200, {"id": "ps_1", "status": "retired"})
    for known in (True, False):
        found = refusal_findings(SCHEDULES, ["retired"], accepted, known_valid=known)
        assert verdicts(found) == [(("PAYOUT-STATE-012",), Outcome.FAILED)]
        assert "starts only from active, paused" in found[0].message


def test_another_refusal_fails_only_a_request_known_valid() -> None:
    other = call("pausePayoutSchedule", 422, {"code": "business_rule", "message": "m"})
    found = refusal_findings(SCHEDULES, ["retired"], other, known_valid=True)
    assert verdicts(found) == [(("PAYOUT-STATE-009",), Outcome.FAILED)]
    assert "expected 409 invalid_state, got 422 business_rule" in found[0].message
    unknown = refusal_findings(SCHEDULES, ["retired"], other, known_valid=False)
    assert unknown == []


def test_a_transition_allowed_from_a_possible_state_is_not_judged() -> None:
    accepted = call("cancelPayment", 200, {"id": "pay_1", "status": "canceled"})
    assert refusal_findings(PAYMENTS, ["pending", "settled"], accepted, known_valid=False) == []


def test_the_possible_states_are_those_every_earlier_one_leads_to() -> None:
    assert PAYMENTS.possible(["pending"]) == frozenset(PAYMENTS.states)  # deposits, expiry
    assert PAYMENTS.possible(["pending", "underpaid"]) == {"underpaid", "settled"}
    assert PAYMENTS.possible(["expired", "settled"]) == frozenset()


def test_a_state_the_earlier_one_never_leads_to_fails_the_refusal_of_the_move_there() -> None:
    assert verdicts(change_findings(PAYMENTS, "pay_1", "expired", "settled")) == [
        (("PAY-STATE-009",), Outcome.FAILED)
    ]
    assert verdicts(change_findings(PAYMENTS, "pay_1", "settled", "canceled")) == [
        (("PAY-STATE-005",), Outcome.FAILED)
    ]
    assert verdicts(change_findings(PAYMENTS, "pay_1", "settled", "pending")) == [
        (("PAY-STATE-005", "PAY-STATE-009"), Outcome.FAILED)  # no transition leads there
    ]
    assert verdicts(change_findings(PAYMENTS, "pay_1", "pending", "settled")) == [
        (("PAY-STATE-005", "PAY-STATE-009"), Outcome.PASSED)
    ]
    assert change_findings(PAYMENTS, "pay_1", "settled", "settled") == []


def test_a_pause_of_a_paused_schedule_must_answer_it_unchanged() -> None:
    pause = call("pausePayoutSchedule", 200, {"id": "ps_1", "status": "paused"})
    ok = idle_findings(SCHEDULES, "paused", pause, [], known_valid=False)
    assert verdicts(ok) == [(("PAYOUT-STATE-008",), Outcome.PASSED)]
    bumped = idle_findings(SCHEDULES, "paused", pause, ["updated_at"], known_valid=False)
    assert verdicts(bumped) == [(("PAYOUT-STATE-008",), Outcome.FAILED)]


def test_other_changes_are_judged_only_when_nothing_else_can_have_made_them() -> None:
    pause = call("pausePayoutSchedule", 200, {"id": "ps_1", "status": "paused"})
    changed = ["amount", "updated_at"]
    assert idle_findings(SCHEDULES, "paused", pause, changed, known_valid=False) == []
    found = idle_findings(SCHEDULES, "paused", pause, changed, known_valid=True)
    assert verdicts(found) == [(("PAYOUT-STATE-008",), Outcome.FAILED)]


def test_only_a_bodiless_transition_to_its_own_state_is_idle() -> None:
    pause = call("pausePayoutSchedule", 200, {"id": "ps_1", "status": "paused"})
    assert idle_findings(SCHEDULES, "active", pause, ["status"], known_valid=True) == []
    replace = call("replacePayoutSchedule", 200, {"id": "ps_1"}, body={"amount": "1"})
    assert idle_findings(SCHEDULES, "active", replace, ["amount"], known_valid=True) == []
