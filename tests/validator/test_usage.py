"""x402 usage reports only for a settled upto payment (X402-025), up to the value its payer
authorised, in the raw units of its currency (X402-026, X402-027), across recorded exchanges."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from tests.validator.crossing import Traffic

PAY = "pay_x1"
CONFLICT = {"code": "invalid_state", "message": "usage needs a settled upto payment"}


def issue(traffic: Traffic, scheme: str = "upto") -> None:
    entry = {"scheme": scheme, "pay_to": "0x" + "1" * 40, "max_amount_required": "3750000",
             "nonce": "0x" + "2" * 64, "valid_before": 1_767_225_900}  # fmt: skip
    request = {"currency_id": "usdc", "chain_id": "base", "amount": "3.75", "scheme": scheme}
    traffic.send(
        "createX402Requirements", "POST", "/v1/x402/requirements", key="k-issue", status=201,
        request=request, answer={"payment_id": PAY, "accepts": [entry]},
    )  # fmt: skip


def settle(traffic: Traffic, **kw: Any) -> None:
    """A settlement authorising 3 usdc (3000000 raw units) of the 3.75 issued."""
    authorization = {"nonce": "0x" + "2" * 64, "value": "3000000"}
    body = {"payment_id": PAY, "payment_payload": {"authorization": authorization}}
    answer = {"success": True, "tx_hash": "0x" + "3" * 64, "payment_id": PAY}
    traffic.send("settleX402Payment", "POST", "/v1/x402/settle", request=body, answer=answer, **kw)


def usage(
    traffic: Traffic,
    key: str,
    status: int = 200,
    amount: str = "1",
    answer: Any = None,
    **kw: Any,
) -> None:
    if answer is None:
        answer = CONFLICT if status == 409 else {"payment_id": PAY, "scheme": "upto"}
    traffic.send(
        "reportX402Usage", "POST", f"/v1/x402/{PAY}/usage", key=key,
        request={"actual_amount": amount, "usage_id": key}, status=status, answer=answer, **kw,
    )  # fmt: skip


def used(max_raw: str, actual_raw: str, key: str = "u1") -> dict[str, str]:
    return {"payment_id": PAY, "scheme": "upto", "max_raw": max_raw, "actual_raw": actual_raw,
            "usage_id": key}  # fmt: skip


def test_usage_accepted_for_an_unsettled_upto_payment_fails_x402_025() -> None:
    traffic = Traffic()
    issue(traffic)
    usage(traffic, "u1")
    traffic.finish()
    assert traffic.outcomes("X402-025") == [Outcome.FAILED]


def test_usage_refused_before_the_settlement_and_accepted_after_passes() -> None:
    traffic = Traffic()
    issue(traffic)
    usage(traffic, "u1", status=409)
    settle(traffic)
    usage(traffic, "u2")
    traffic.finish()
    assert traffic.outcomes("X402-025") == [Outcome.PASSED]


def test_a_settlement_overlapping_the_report_withdraws_the_failure() -> None:
    traffic = Traffic()
    issue(traffic)
    usage(traffic, "u1", at=10, duration_ms=300)
    settle(traffic, at=10.1)
    traffic.finish()
    assert traffic.outcomes("X402-025") == []


def test_usage_of_an_exact_payment_accepted_fails_x402_025() -> None:
    traffic = Traffic()
    issue(traffic, scheme="exact")
    settle(traffic)
    usage(traffic, "u1")
    assert traffic.outcomes("X402-025") == [Outcome.FAILED]


def test_a_payment_issued_before_the_recording_is_not_judged() -> None:
    traffic = Traffic()
    usage(traffic, "u1")
    traffic.finish()
    assert traffic.outcomes("X402-025") == []


def test_usage_refused_with_another_code_than_invalid_state_fails_x402_025() -> None:
    traffic = Traffic()
    issue(traffic, scheme="exact")
    usage(traffic, "u1", status=409, answer={"code": "already_settled", "message": "settled"})
    assert traffic.outcomes("X402-025") == [Outcome.FAILED]


@pytest.mark.parametrize(
    ("profile", "code"),
    [("default", "idempotency_key_in_use"), ("divergent", "idempotency_key_conflict")],
)
def test_a_refusal_with_another_of_the_profiles_409s_is_not_judged(profile: str, code: str) -> None:
    traffic = Traffic(load_profile(profile))
    issue(traffic, scheme="exact")
    usage(traffic, "u1", status=409, answer={"code": code, "message": "the key"})
    assert traffic.outcomes("X402-025") == []


def test_usage_answers_the_authorised_value_and_the_raw_amount() -> None:
    traffic = Traffic()
    issue(traffic)
    settle(traffic)
    usage(traffic, "u1", amount="1.5", answer=used("3000000", "1500000"))
    assert traffic.outcomes("X402-027") == [Outcome.PASSED]
    assert traffic.outcomes("X402-026") == [Outcome.PASSED]


@pytest.mark.parametrize(
    ("max_raw", "actual_raw"),
    [
        ("3750000", "1500000"),  # the requirements' maximum, not the value authorised
        ("3000000", "1500000000000000000"),  # scaled like ETH, not USDC
    ],
)
def test_a_usage_answer_against_the_payments_history_fails_x402_027(
    max_raw: str, actual_raw: str
) -> None:
    traffic = Traffic()
    issue(traffic)
    settle(traffic)
    usage(traffic, "u1", amount="1.5", answer=used(max_raw, actual_raw))
    assert traffic.outcomes("X402-027") == [Outcome.FAILED]


def test_usage_over_the_authorised_value_accepted_fails_x402_026() -> None:
    traffic = Traffic()
    issue(traffic)
    settle(traffic)
    # within the requirements' 3.75, over the 3 authorised; the answer hides it
    usage(traffic, "u1", amount="3.5", answer=used("3750000", "3500000"))
    assert Outcome.FAILED in traffic.outcomes("X402-026")


def test_a_replayed_issue_keeps_the_settlement() -> None:
    traffic = Traffic()
    issue(traffic)
    settle(traffic)
    issue(traffic)  # the same Idempotency-Key again: the stored answer
    usage(traffic, "u1", amount="1.5", answer=used("3000000", "1500000"))
    traffic.finish()
    assert traffic.outcomes("X402-025") == []
    assert traffic.outcomes("X402-027") == [Outcome.PASSED]


@pytest.mark.parametrize(
    ("status", "answer", "expected"),
    [
        (422, {"code": "over_authorised", "message": "over"}, [Outcome.PASSED]),
        (422, {"code": "amount_too_large", "message": "another rule's"}, []),
        (400, {"code": "validation_error", "message": "its form"}, []),
    ],
)
def test_usage_over_the_authorised_value_refused(
    status: int, answer: dict[str, str], expected: list[Outcome]
) -> None:
    traffic = Traffic()
    issue(traffic)
    settle(traffic)
    usage(traffic, "u1", status=status, amount="3.5", answer=answer)
    assert traffic.outcomes("X402-026") == expected
