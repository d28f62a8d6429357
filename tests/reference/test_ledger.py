"""The double-entry ledger: postings balance, running balances, split income, time order."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from conformance.reference import ledger

T0 = datetime(2026, 11, 22, 10, 0, 0, tzinfo=UTC)


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    connection.executescript(ledger.SCHEMA)
    yield connection
    connection.close()


def entries(conn: sqlite3.Connection, merchant_id: str | None = None) -> list[ledger.Entry]:
    where, params = ("WHERE merchant_id = ?", (merchant_id,)) if merchant_id else ("", ())
    rows = conn.execute(
        f"SELECT {ledger.ENTRY_COLUMNS} FROM ledger_entries {where} ORDER BY ledger_entry_id",
        params,
    ).fetchall()
    return [ledger.entry_from_row(r) for r in rows]


def income(
    conn: sqlite3.Connection,
    raw: int,
    splits: list[tuple[str, int]] | None = None,
    *,
    at: datetime = T0,
    merchant: str = "m_alpha",
    currency: str = "usdc",
) -> str:
    return ledger.post_payment_income(
        conn,
        merchant_id=merchant,
        payment_id="pay_1",
        merchant_order_no="order-1",
        currency_id=currency,
        raw_amount=raw,
        splits=splits or [],
        now=at,
    )


@pytest.mark.parametrize(
    ("raw", "places", "text"),
    [
        (0, 6, "0.000000"),
        (1, 6, "0.000001"),
        (1_500_000, 6, "1.500000"),
        (-1_500_000, 6, "-1.500000"),
        (10**18, 18, "1.000000000000000000"),
        (-7, 0, "-7"),
        (10**80 + 1, 2, "1" + "0" * 78 + ".01"),
    ],
)
def test_canonical_amounts_are_exact_with_the_currency_places(
    raw: int, places: int, text: str
) -> None:
    assert ledger.canonical(raw, places) == text


def test_micros_round_trip_and_refuse_naive_times() -> None:
    moment = datetime(2026, 11, 22, 10, 4, 11, 123456, tzinfo=UTC)
    assert ledger.from_micros(ledger.to_micros(moment)) == moment
    with pytest.raises(ValueError):
        ledger.to_micros(datetime(2026, 11, 22))


def test_income_credits_the_merchant_against_the_clearing_account(
    conn: sqlite3.Connection,
) -> None:
    transaction_id = income(conn, 2_500_000)
    posted = ledger.entries_of_transaction(conn, transaction_id)
    assert sum(e.signed_raw for e in posted) == 0
    (credit,) = [e for e in posted if e.merchant_id == "m_alpha"]
    assert credit.direction == "credit" and credit.amount_raw == 2_500_000
    assert credit.balance_after_raw == 2_500_000
    assert credit.payment_id == "pay_1" and credit.merchant_order_no == "order-1"
    assert credit.tx_type == "payment" and credit.business_type == "payment_income"
    assert not credit.is_split_recipient_income
    assert ledger.balance(conn, "m_alpha", "usdc") == 2_500_000


def test_split_shares_move_to_the_split_merchants_as_their_income(
    conn: sqlite3.Connection,
) -> None:
    transaction_id = income(conn, 1_000_000, [("m_gamma", 2_000), ("m_beta", 333)])
    posted = ledger.entries_of_transaction(conn, transaction_id)
    assert sum(e.signed_raw for e in posted) == 0
    assert {e.ledger_transaction_id for e in posted} == {transaction_id}

    gamma = entries(conn, "m_gamma")
    assert [(e.direction, e.amount_raw) for e in gamma] == [("credit", 200_000)]
    assert gamma[0].is_split_recipient_income and gamma[0].source_merchant_id == "m_alpha"
    beta = entries(conn, "m_beta")
    assert [(e.direction, e.amount_raw) for e in beta] == [("credit", 33_300)]

    alpha = entries(conn, "m_alpha")
    assert [(e.direction, e.amount_raw) for e in alpha] == [
        ("credit", 1_000_000),
        ("debit", 200_000),
        ("debit", 33_300),
    ]
    assert [e.balance_after_raw for e in alpha] == [1_000_000, 800_000, 766_700]
    assert not any(e.is_split_recipient_income for e in alpha)


def test_split_shares_round_down_and_the_remainder_stays_with_the_payee() -> None:
    assert ledger.split_shares(999, [("m_gamma", 5_000), ("m_delta", 5_000)]) == [
        ("m_gamma", 499),
        ("m_delta", 499),
    ]
    assert ledger.split_shares(10, [("m_gamma", 10_000)]) == [("m_gamma", 10)]


def test_a_whole_payment_split_away_leaves_the_payee_at_zero(conn: sqlite3.Connection) -> None:
    income(conn, 700, [("m_gamma", 10_000)])
    assert ledger.balance(conn, "m_alpha", "usdc") == 0
    assert ledger.balance(conn, "m_gamma", "usdc") == 700


def test_running_balances_are_per_merchant_and_currency(conn: sqlite3.Connection) -> None:
    income(conn, 100)
    income(conn, 5, currency="eth")
    income(conn, 40, merchant="m_beta")
    income(conn, 1)
    assert ledger.balance(conn, "m_alpha", "usdc") == 101
    assert ledger.balance(conn, "m_alpha", "eth") == 5
    assert ledger.balance(conn, "m_beta", "usdc") == 40
    assert ledger.balance(conn, "m_gamma", "usdc") == 0
    usdc = [e for e in entries(conn, "m_alpha") if e.currency_id == "usdc"]
    assert [e.balance_after_raw for e in usdc] == [100, 101]


def test_every_balance_is_the_previous_plus_the_signed_amount(conn: sqlite3.Connection) -> None:
    for raw, split in [(1_000, 2_500), (333, 10_000), (7, 1), (10**30, 4_321)]:
        income(conn, raw, [("m_gamma", split)])
    for merchant in ("m_alpha", "m_gamma"):
        running = 0
        for entry in entries(conn, merchant):
            running += entry.signed_raw
            assert entry.balance_after_raw == running


def test_entry_ids_increase_and_times_never_go_backwards(conn: sqlite3.Connection) -> None:
    income(conn, 10, at=T0)
    income(conn, 10, at=T0 - timedelta(seconds=5))  # a request that read the clock earlier
    income(conn, 10, at=T0 + timedelta(seconds=1))
    posted = entries(conn)
    ids = [e.ledger_entry_id for e in posted]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    times = [e.created_us for e in posted]
    assert times == sorted(times)
    assert times[-1] == ledger.to_micros(T0 + timedelta(seconds=1))


def test_zero_income_writes_nothing_and_negative_income_is_refused(
    conn: sqlite3.Connection,
) -> None:
    income(conn, 0, [("m_gamma", 100)])
    assert entries(conn) == []
    with pytest.raises(ValueError):
        income(conn, -1)


def test_the_debit_fault_freezes_the_running_balance_on_split_payouts(
    conn: sqlite3.Connection,
) -> None:
    ledger.post_payment_income(
        conn,
        merchant_id="m_alpha",
        payment_id="pay_1",
        merchant_order_no=None,
        currency_id="usdc",
        raw_amount=1_000,
        splits=[("m_gamma", 5_000)],
        now=T0,
        fault=lambda name: name == "ledger-running-balance-ignores-debits",
    )
    alpha = entries(conn, "m_alpha")
    assert [e.balance_after_raw for e in alpha] == [1_000, 1_000]


def test_the_split_fault_leaves_the_recipient_without_income(conn: sqlite3.Connection) -> None:
    transaction_id = ledger.post_payment_income(
        conn,
        merchant_id="m_alpha",
        payment_id="pay_1",
        merchant_order_no=None,
        currency_id="usdc",
        raw_amount=1_000,
        splits=[("m_gamma", 5_000)],
        now=T0,
        fault=lambda name: name == "ledger-split-income-not-credited",
    )
    assert entries(conn, "m_gamma") == []
    assert sum(e.signed_raw for e in ledger.entries_of_transaction(conn, transaction_id)) == 0
