"""Later requests on an x402 payment against its history (X402-023 to X402-027), and the
reading of an answer against one of the profile's refusals that every such rule shares."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.x402_history import (
    IssuedNonces,
    Payment,
    Settlement,
    X402History,
    result_digest,
)
from conformance.judge.x402_rules import Reading, Refusal
from conformance.validator.findings import Call
from tests.validator.samples import exchange

DEFAULT = X402History(load_profile("default"))
DIVERGENT = X402History(load_profile("divergent"))
PAY = "pay_1"
SETTLE = {"payment_id": PAY, "payment_payload": {"authorization": {"value": "3000000"}}}
RESULT = {"success": True, "tx_hash": "0x" + "a" * 64, "payment_id": PAY}
UPTO = Payment(frozenset({"upto"}), 6, settled=True, authorised=3_000_000)


def digest_of(answer: Any) -> bytes:
    return result_digest(answer, b"")


FIRST = Settlement.of(SETTLE, 200, digest_of(RESULT), "line 1")


def usage(status: int, answer: Any = None, amount: str = "1") -> Call:
    sent = exchange(
        "POST", f"/v1/x402/{PAY}/usage", request_body={"actual_amount": amount, "usage_id": "u1"}
    )
    return Call(sent, "reportX402Usage", {"payment_id": PAY}, status, answer)


def outcomes(found: list[Any]) -> dict[str, Outcome]:
    return {rid: f.outcome for f in found for rid in f.ids}


def test_a_refusal_of_another_kind_is_told_by_its_code() -> None:
    conflict = DIVERGENT.conflict  # 409 already_settled; 409 state_conflict is invalid_state's
    assert conflict.reads(200, None) is Reading.ACCEPTED
    assert conflict.reads(409, "already_settled") is Reading.AS_PROFILE
    assert conflict.reads(409, "state_conflict") is Reading.OTHER_KIND
    assert conflict.reads(409, "conflict") is Reading.WRONG_CODE
    assert conflict.reads(409, None) is Reading.UNNAMED
    assert conflict.reads(422, "already_settled") is Reading.OTHER_KIND


def test_a_kin_answer_is_the_refusal_where_it_pins_no_code() -> None:
    profile = load_profile("default")  # settled_conflict: 409 without a code
    invalid_state = profile.error("status", "invalid_state")
    kin = Refusal.of(profile, profile.x402.settled_conflict, kin=(invalid_state,))
    assert kin.reads(409, "invalid_state") is Reading.AS_PROFILE
    assert kin.reads(409, "duplicate_order") is Reading.OTHER_KIND
    assert (
        Refusal.of(profile, profile.x402.settled_conflict).reads(409, "invalid_state")
        is Reading.OTHER_KIND
    )


@pytest.mark.parametrize(
    ("status", "code", "known_valid", "expected"),
    [
        (200, None, False, Outcome.FAILED),
        (409, "already_settled", True, Outcome.PASSED),
        (409, "conflict", False, Outcome.FAILED),
        (409, None, False, Outcome.PASSED),  # a recorded answer whose code is not known
        (409, None, True, Outcome.FAILED),
        (409, "state_conflict", True, Outcome.FAILED),
        (409, "state_conflict", False, None),  # refused for another reason it may have
        (402, "payment_invalid", False, None),
    ],
)
def test_the_verdict_on_a_refusal(
    status: int, code: str | None, known_valid: bool, expected: Outcome | None
) -> None:
    found = DIVERGENT.conflict.verdict(
        "check", ("X402-024",), status, code, "another payload", known_valid=known_valid
    )
    assert (found and found.outcome) == expected


def test_the_identical_request_again_answers_the_first_result() -> None:
    same = DEFAULT.settle(FIRST, SETTLE, 200, None, digest_of(RESULT), known_valid=True)
    assert outcomes(same) == {"X402-023": Outcome.PASSED}
    other = {**RESULT, "tx_hash": "0x" + "b" * 64}
    new = DEFAULT.settle(FIRST, SETTLE, 200, None, digest_of(other), known_valid=True)
    assert outcomes(new) == {"X402-023": Outcome.FAILED}
    unknown = DEFAULT.settle(FIRST, SETTLE, 200, None, None, known_valid=False)
    assert outcomes(unknown) == {"X402-023": Outcome.NOT_EXERCISED}


def test_the_identical_request_refused_for_its_form_is_not_judged_from_a_recording() -> None:
    assert DEFAULT.settle(FIRST, SETTLE, 400, "validation_error", None, known_valid=False) == []


def test_another_payload_is_refused_as_settled() -> None:
    other = {**SETTLE, "payment_payload": {"authorization": {"value": "2"}}}
    assert outcomes(DEFAULT.settle(FIRST, other, 409, "invalid_state", None, known_valid=True)) == {
        "X402-024": Outcome.PASSED
    }
    assert outcomes(DEFAULT.settle(FIRST, other, 200, None, None, known_valid=False)) == {
        "X402-024": Outcome.FAILED
    }
    # a payload that does not verify may get the settle failure as well
    failed = DEFAULT.settle(
        FIRST, other, 422, None, None, known_valid=True, also=(DEFAULT.failure,)
    )
    assert outcomes(failed) == {"X402-024": Outcome.PASSED}
    assert DEFAULT.settle(FIRST, other, 422, None, None, known_valid=False) == []


def test_the_same_payload_with_other_requirements_is_no_other_payload() -> None:
    requirements = {**SETTLE, "payment_requirements": {"scheme": "exact"}}
    assert DEFAULT.settle(FIRST, requirements, 409, None, None, known_valid=True) == []


@pytest.mark.parametrize(
    ("payment", "status", "code", "expected"),
    [
        (Payment(frozenset({"exact"}), 6, settled=True, authorised=1), 200, None, Outcome.FAILED),
        (Payment(frozenset({"exact"}), 6), 409, "invalid_state", Outcome.PASSED),
        (Payment(frozenset({"upto"}), 6), 200, None, Outcome.FAILED),
        (Payment(frozenset({"upto"}), 6), 409, "invalid_state", Outcome.PASSED),
        (Payment(frozenset({"upto"}), 6), 409, "wrong", Outcome.FAILED),
    ],
)
def test_usage_needs_a_settled_upto_payment(
    payment: Payment, status: int, code: str | None, expected: Outcome
) -> None:
    answer = {"code": code} if code else {}
    found = DEFAULT.usage(payment, usage(status, answer), known_valid=False)
    assert outcomes(found) == {"X402-025": expected}


def test_usage_over_the_authorised_value_is_refused_as_a_business_rule() -> None:
    assert outcomes(DEFAULT.usage(UPTO, usage(422, {}, "3.5"), known_valid=False)) == {
        "X402-026": Outcome.PASSED
    }
    accepted = {"max_raw": "3000000", "actual_raw": "3500000", "payment_id": PAY}
    found = DEFAULT.usage(UPTO, usage(200, accepted, "3.5"), known_valid=False)
    assert outcomes(found) == {"X402-026": Outcome.FAILED, "X402-027": Outcome.PASSED}


def test_usage_over_what_earlier_reports_left_may_be_refused() -> None:
    used = Payment(frozenset({"upto"}), 6, settled=True, authorised=3_000_000, used=2_500_000)
    assert outcomes(DEFAULT.usage(used, usage(422, {}, "1"), known_valid=True)) == {
        "X402-026": Outcome.PASSED
    }


def test_usage_within_the_authorised_value_refused() -> None:
    """A valid report refused fails; a recorded one may have been refused for its form."""
    assert outcomes(DEFAULT.usage(UPTO, usage(422, {}, "1"), known_valid=True)) == {
        "X402-027": Outcome.FAILED
    }
    assert DEFAULT.usage(UPTO, usage(422, {}, "1"), known_valid=False) == []


def test_an_accepted_usage_answers_the_authorised_value_in_raw_units() -> None:
    right = {"max_raw": "3000000", "actual_raw": "1500000"}
    assert outcomes(DEFAULT.usage(UPTO, usage(200, right, "1.5"), known_valid=True)) == {
        "X402-026": Outcome.PASSED,
        "X402-027": Outcome.PASSED,
    }
    wrong = {"max_raw": "3750000", "actual_raw": "1500000"}
    assert outcomes(DEFAULT.usage(UPTO, usage(200, wrong, "1.5"), known_valid=True)) == {
        "X402-026": Outcome.PASSED,
        "X402-027": Outcome.FAILED,
    }


def test_a_requirements_nonce_is_issued_for_one_payment() -> None:
    nonces = IssuedNonces()
    first = [{"nonce": "0x" + "A" * 64}]
    assert outcomes(list(nonces.issued("pay_1", first, "line 1"))) == {"X402-007": Outcome.PASSED}
    # the issue replayed answers the same payment: no reuse
    assert outcomes(list(nonces.issued("pay_1", first, "line 2"))) == {"X402-007": Outcome.PASSED}
    again = list(nonces.issued("pay_2", [{"nonce": "0x" + "a" * 64}], "line 3"))
    assert outcomes(again) == {"X402-007": Outcome.FAILED}
    assert "issued for pay_1 in line 1" in again[0].message
