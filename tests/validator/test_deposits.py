"""What the deposit helper paid into a payment created in the recording (HELP-001,
PAY-STATE-007, FIX-003)."""

from __future__ import annotations

from typing import Any

from conformance.core.results import Outcome
from tests.validator.crossing import Traffic

PAY = "pay_d1"


def created(traffic: Traffic, quoted: str = "10") -> None:
    traffic.send(
        "createPayment", "POST", "/v1/payments", key="k-create", status=201,
        request={"quotes": {"usdc": {"amount": quoted}}, "merchant_order_no": "o-1"},
        answer={"id": PAY, "status": "pending", "quotes": {"usdc": {"amount": quoted}}},
    )  # fmt: skip


def deposit(traffic: Traffic, key: str, amount: str, status: str, **kw: Any) -> None:
    traffic.send(
        "testDepositPayment", "POST", f"/v1/test-helpers/payments/{PAY}/deposit", key=key,
        request={"currency_id": "usdc", "chain_id": "base", "amount": amount},
        answer={"id": PAY, "status": status, "quotes": {"usdc": {"amount": "10"}}}, **kw,
    )  # fmt: skip


def accept(traffic: Traffic, accepted_raw: str, currency_id: str = "usdc") -> None:
    traffic.send(
        "acceptUnderpaidPayment", "POST", f"/v1/payments/{PAY}/accept-underpaid", key="k-acc",
        answer={"payment_id": PAY, "currency_id": currency_id, "accepted_raw": accepted_raw,
                "status": "settled"},
    )  # fmt: skip


def test_deposits_short_of_the_quote_answered_settled_fail_help_001() -> None:
    traffic = Traffic()
    created(traffic)
    deposit(traffic, "k1", "4", "settled")
    traffic.finish()
    assert traffic.outcomes("HELP-001") == [Outcome.FAILED]


def test_deposits_short_of_the_quote_answered_underpaid_pass_help_001() -> None:
    traffic = Traffic()
    created(traffic)
    deposit(traffic, "k1", "4", "underpaid")
    traffic.finish()
    assert traffic.outcomes("HELP-001") == [Outcome.PASSED]


def test_deposits_that_add_up_to_the_quote_may_settle() -> None:
    traffic = Traffic()
    created(traffic)
    deposit(traffic, "k1", "4", "underpaid")
    deposit(traffic, "k2", "6", "settled")
    traffic.finish()
    assert traffic.outcomes("HELP-001") == [Outcome.PASSED]


def test_a_deposit_overlapping_another_is_not_judged() -> None:
    traffic = Traffic()
    created(traffic)
    deposit(traffic, "k1", "4", "settled", at=10, duration_ms=300)
    deposit(traffic, "k2", "6", "settled", at=10.1)
    traffic.finish()
    assert Outcome.FAILED not in traffic.outcomes("HELP-001")


def test_accepted_raw_other_than_the_deposits_fails_pay_state_007() -> None:
    traffic = Traffic()
    created(traffic)
    deposit(traffic, "k1", "4", "underpaid")
    accept(traffic, "10000000")
    traffic.finish()
    assert traffic.outcomes("PAY-STATE-007") == [Outcome.PASSED, Outcome.FAILED]
    assert traffic.outcomes("FIX-003") == [Outcome.FAILED]


def test_accept_underpaid_in_another_currency_than_the_deposits_fails_pay_state_007() -> None:
    traffic = Traffic()
    created(traffic)
    deposit(traffic, "k1", "4", "underpaid")
    accept(traffic, "4000000", currency_id="eth")
    traffic.finish()
    assert Outcome.FAILED in traffic.outcomes("PAY-STATE-007")
    assert traffic.outcomes("FIX-003") == [Outcome.PASSED]


def test_accepted_raw_equal_to_the_deposits_passes_pay_state_007() -> None:
    traffic = Traffic()
    created(traffic)
    deposit(traffic, "k1", "4", "underpaid")
    accept(traffic, "4000000")
    traffic.finish()
    assert traffic.outcomes("PAY-STATE-007") == [Outcome.PASSED, Outcome.PASSED]
    assert traffic.outcomes("FIX-003") == [Outcome.PASSED]


def test_a_payment_created_before_the_recording_is_not_judged() -> None:
    traffic = Traffic()
    deposit(traffic, "k1", "4", "settled")
    accept(traffic, "10000000")
    traffic.finish()
    assert traffic.outcomes("HELP-001") == traffic.outcomes("PAY-STATE-007") == []
