"""Deposits against the quote and accept-underpaid against the deposits (HELP-001,
PAY-STATE-007, FIX-003)."""

from __future__ import annotations

from decimal import Decimal

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.deposits import DepositRules
from conformance.judge.payment_rules import PaymentRules

PROFILE = load_profile()
RULES = DepositRules(PROFILE)
SETTLED, UNDERPAID = PaymentRules(PROFILE).settled, PaymentRules(PROFILE).underpaid


def test_deposits_short_of_the_quote_leave_the_payment_underpaid() -> None:
    held = RULES.deposited(Decimal("4"), Decimal("10"), UNDERPAID)
    broken = RULES.deposited(Decimal("4"), Decimal("10"), SETTLED)
    assert held is not None and held.outcome is Outcome.PASSED
    assert broken is not None and broken.outcome is Outcome.FAILED
    assert broken.ids == ("HELP-001",)


def test_deposits_paying_the_quote_or_an_unknown_status_are_not_this_rules() -> None:
    assert RULES.deposited(Decimal("10"), Decimal("10"), UNDERPAID) is None
    assert RULES.deposited(Decimal("4"), Decimal("10"), "mystery") is None


def test_accepted_raw_is_the_amount_received_in_the_currencys_raw_units() -> None:
    answer = {"currency_id": "eth", "accepted_raw": str(4 * 10**18)}
    found = list(RULES.accepted(answer, "eth", Decimal("4")))
    assert [(f.ids, f.outcome) for f in found] == [
        (("PAY-STATE-007",), Outcome.PASSED),
        (("PAY-STATE-007", "FIX-003"), Outcome.PASSED),
    ]


def test_accepted_raw_scaled_otherwise_or_another_currency_fails() -> None:
    answer = {"currency_id": "usdc", "accepted_raw": str(4 * 10**6)}
    found = list(RULES.accepted(answer, "eth", Decimal("4")))
    assert [f.outcome for f in found] == [Outcome.FAILED, Outcome.FAILED]
    assert "4000000000000000000 raw" in found[1].message


def test_a_currency_the_profile_does_not_list_is_not_judged() -> None:
    assert list(RULES.accepted({"accepted_raw": "4"}, "doge", Decimal("4"))) == []
