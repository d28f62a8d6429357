"""The exact arithmetic of the statements family (conformance/judge/statements.py and book.py)."""

from __future__ import annotations

from decimal import Decimal, localcontext

from conformance.judge.statements import (
    EXACT,
    Line,
    balance_before,
    chain_problems,
    places_problem,
    window_lines,
)
from conformance.suite.statements.book import PaymentRecord, fit, unmatched_credits


def line(entry_id: int, signed: str, balance: str, created: str, fee: str = "0") -> Line:
    value = Decimal(signed)
    return Line(
        entry_id=entry_id,
        direction="credit" if value >= 0 else "debit",
        amount=abs(value),
        signed=value,
        balance_after=Decimal(balance),
        fee=Decimal(fee),
        split_income=False,
        created=Decimal(created),
        created_text=created,
        payment_id=None,
        source_merchant_id=None,
    )


def test_amounts_need_exactly_the_accounting_places() -> None:
    assert places_problem("amount", "-12.500000", 6) is None
    assert places_problem("amount", "12", 0) is None
    assert "1 decimal places" in str(places_problem("amount", "12.5", 6))
    assert "not a decimal string" in str(places_problem("amount", "1e3", 0))
    assert "not a decimal string" in str(places_problem("amount", 12.5, 6))


def test_balances_chain_line_to_line_and_a_fee_does_not_move_them() -> None:
    good = [line(1, "10", "10", "1"), line(2, "-2", "8", "2"), line(3, "5", "13", "3")]
    assert chain_problems(good) == []
    fee_taken = [line(1, "10", "10", "1"), line(2, "5", "14.95", "2", fee="0.05")]
    (problem,) = chain_problems(fee_taken)
    assert "platform fee 0.05" in problem


def test_windows_include_from_and_exclude_to() -> None:
    history = [line(1, "1", "1", "1"), line(2, "1", "2", "2"), line(3, "1", "3", "3")]
    assert [x.entry_id for x in window_lines(history, Decimal(2), Decimal(3))] == [2]
    assert balance_before(history, Decimal(0), Decimal(2)) == 1
    assert balance_before(history, Decimal(7), Decimal(1)) == 7


def test_sums_of_large_amounts_are_not_rounded() -> None:
    big = Decimal("123456789012345678901234567890.123456789012345678")
    with localcontext(EXACT):
        assert big + Decimal("0.000000000000000001") - big == Decimal("0.000000000000000001")


def test_a_deposit_is_matched_by_its_credit_or_its_net_of_split_shares() -> None:
    record = PaymentRecord("pay_1", "usdc", "base", Decimal(10), (("m_gamma", 3333),), 6)
    record.deposits += [Decimal("1"), Decimal("3")]
    credits = [line(1, "3", "3", "1"), line(2, "0.666700", "3.6667", "2")]
    assert unmatched_credits(record, credits) == ([], [])
    twice = [*credits, line(3, "3", "6.6667", "3")]
    assert unmatched_credits(record, twice)[1] == [twice[2]]


def test_amounts_are_cut_to_the_places_and_never_to_zero() -> None:
    assert str(fit(Decimal("1.5"), 6)) == "1.5"
    assert fit(Decimal("1.23456789"), 2) == Decimal("1.23")
    assert fit(Decimal("0.0001"), 2) == Decimal("0.01")
