"""Statements (operation 20) after real deposits with splits: windows, balances, pages."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from conformance.core.profile import Profile
from conformance.reference.server import ReferenceServer
from tests.reference.domain_factories import statement, statement_pages, utc_now
from tests.reference.factories import create_payment, deposit, error_code
from tests.reference.signed_client import SignedClient

SPLITS = [
    {"type": "percentage", "merchant_id": "m_beta", "bps": 1000},
    {"type": "percentage", "merchant_id": "m_gamma", "bps": 500},
]


def paid(client: SignedClient, amount: str, *, splits: bool = True) -> str:
    """A payment of ``amount`` USDC on base, deposited in full: 1 credit + 2 split debits."""
    extra: dict[str, Any] = {"splits": SPLITS} if splits else {}
    payment = create_payment(
        client, quotes={"usdc": {"amount": amount, "chain_ids": ["base"]}}, **extra
    )
    deposit(client, payment["id"], amount)
    return str(payment["id"])


def lines_of(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for page in pages for line in page["lines"]]


@pytest.fixture
def window(alpha: SignedClient) -> tuple[datetime, datetime, list[str]]:
    """Four paid payments (12 lines for m_alpha) inside [start, end)."""
    start = utc_now()
    payments = [paid(alpha, amount) for amount in ("10", "2.5", "0.0001", "100")]
    end = utc_now() + timedelta(milliseconds=1)
    return start, end, payments


def test_a_single_page_reconciles_and_shows_every_line(
    alpha: SignedClient, window: tuple[datetime, datetime, list[str]]
) -> None:
    start, end, payments = window
    response = statement(alpha, start, end)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["merchant_id"] == "m_alpha" and body["currency_id"] == "usdc"
    assert body["code"] == "USDC" and body["symbol"] == "$" and body["accounting_decimals"] == 6
    assert body["limit"] == 100 and "next_cursor" not in body
    assert body["window_entry_count"] == len(body["lines"]) == 12
    assert {line["payment_id"] for line in body["lines"]} == set(payments)
    assert body["reconciles"] is True
    opening, closing = Decimal(body["opening_canonical"]), Decimal(body["closing_canonical"])
    assert closing - opening == Decimal("112.5001") * Decimal("0.85")


def test_every_line_is_consistent_with_its_neighbours(
    alpha: SignedClient, window: tuple[datetime, datetime, list[str]]
) -> None:
    start, end, _ = window
    body = statement(alpha, start, end).json()
    balance = Decimal(body["opening_canonical"])
    ids = [line["ledger_entry_id"] for line in body["lines"]]
    assert ids == sorted(ids)
    for line in body["lines"]:
        amount, signed = Decimal(line["canonical_amount"]), Decimal(line["signed_canonical_amount"])
        assert line["direction"] in ("credit", "debit")
        assert signed == (amount if line["direction"] == "credit" else -amount)
        balance += signed
        assert Decimal(line["balance_after_canonical"]) == balance
        for field in ("canonical_amount", "signed_canonical_amount", "balance_after_canonical"):
            assert re.fullmatch("-?(0|[1-9][0-9]*)[.][0-9]{6}", line[field]), line[field]
        assert line["platform_fee_canonical"] == "0.000000"
        assert line["is_split_recipient_income"] is False
    assert balance == Decimal(body["closing_canonical"])


@pytest.mark.parametrize("limit", [1, 2, 5, 6, 11, 12, 13])
def test_pages_reconcile_without_gaps_or_repeats(
    alpha: SignedClient, window: tuple[datetime, datetime, list[str]], limit: int
) -> None:
    start, end, _ = window
    whole = statement(alpha, start, end).json()
    pages = statement_pages(alpha, start, end, limit=limit)
    assert len(pages) == -(-12 // limit)
    assert lines_of(pages) == whole["lines"]
    for index, page in enumerate(pages):
        assert len(page["lines"]) <= limit and page["limit"] == limit
        assert ("next_cursor" in page) == (index < len(pages) - 1)
        assert page["window_entry_count"] == 12
        assert page["opening_canonical"] == whole["opening_canonical"]
        assert page["closing_canonical"] == whole["closing_canonical"]
        assert page["reconciles"] is True


def test_opening_is_the_balance_before_from(alpha: SignedClient) -> None:
    start = utc_now()
    paid(alpha, "7", splits=False)
    middle = utc_now()
    paid(alpha, "3", splits=False)
    end = utc_now() + timedelta(milliseconds=1)
    early = statement(alpha, start, middle).json()
    late = statement(alpha, middle, end).json()
    assert Decimal(late["opening_canonical"]) == Decimal(early["closing_canonical"])
    assert Decimal(late["closing_canonical"]) - Decimal(late["opening_canonical"]) == 3
    assert late["window_entry_count"] == 1 and late["reconciles"] is True


def test_the_window_includes_from_and_excludes_to(alpha: SignedClient) -> None:
    start = utc_now()
    paid(alpha, "1", splits=False)
    end = utc_now() + timedelta(milliseconds=1)
    (line,) = statement(alpha, start, end).json()["lines"]
    exactly = line["created_at"]
    assert [ln["ledger_entry_id"] for ln in statement(alpha, exactly, end).json()["lines"]] == [
        line["ledger_entry_id"]
    ]
    excluded = statement(alpha, start, exactly).json()
    assert excluded["lines"] == [] and excluded["window_entry_count"] == 0
    assert excluded["opening_canonical"] == excluded["closing_canonical"]
    assert excluded["reconciles"] is True


def test_split_recipients_see_their_income(alpha: SignedClient, beta: SignedClient) -> None:
    start = utc_now()
    payment_id = paid(alpha, "10")
    end = utc_now() + timedelta(milliseconds=1)
    (income,) = statement(beta, start, end).json()["lines"]
    assert income["is_split_recipient_income"] is True
    assert income["source_merchant_id"] == "m_alpha" and income["payment_id"] == payment_id
    assert income["direction"] == "credit" and income["canonical_amount"] == "1.000000"
    alpha_ids = {ln["ledger_entry_id"] for ln in statement(alpha, start, end).json()["lines"]}
    assert income["ledger_entry_id"] not in alpha_ids


def test_an_empty_window_has_no_lines_and_no_cursor(alpha: SignedClient) -> None:
    body = statement(alpha, "2001-01-01T00:00:00Z", "2001-01-02T00:00:00Z", limit=1).json()
    assert body["lines"] == [] and "next_cursor" not in body and body["window_entry_count"] == 0
    assert body["opening_canonical"] == body["closing_canonical"] == "0.000000"


def test_another_currency_uses_its_own_places(alpha: SignedClient) -> None:
    body = statement(alpha, "2001-01-01T00:00:00Z", "2001-01-02T00:00:00Z", currency_id="eth")
    assert body.json()["accounting_decimals"] == 18 and body.json()["code"] == "ETH"
    assert body.json()["opening_canonical"] == "0." + "0" * 18


@pytest.mark.parametrize("limit", [0, -1, 1001])
def test_a_limit_outside_1_to_1000_is_400(alpha: SignedClient, limit: int) -> None:
    response = statement(alpha, "2001-01-01T00:00:00Z", "2001-01-02T00:00:00Z", limit=limit)
    assert response.status_code == 400 and error_code(response) == "validation_error"


def test_limits_1_and_1000_are_accepted(alpha: SignedClient) -> None:
    for limit in (1, 1000):
        response = statement(alpha, "2001-01-01T00:00:00Z", "2001-01-02T00:00:00Z", limit=limit)
        assert response.status_code == 200 and response.json()["limit"] == limit


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z"),
        ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
        ("2026-01-01T01:00:00+01:00", "2026-01-01T00:00:00Z"),
    ],
    ids=["reversed", "equal", "same-instant-other-offset"],
)
def test_from_not_before_to_is_400(alpha: SignedClient, start: str, end: str) -> None:
    response = statement(alpha, start, end)
    assert response.status_code == 400 and error_code(response) == "validation_error"
    assert response.json()["details"] == [{"field": "query.from", "message": "must be before to"}]


def test_an_unknown_currency_is_422(alpha: SignedClient) -> None:
    response = statement(alpha, "2001-01-01T00:00:00Z", "2001-01-02T00:00:00Z", currency_id="doge")
    assert response.status_code == 422 and error_code(response) == "unknown_currency"


def test_garbage_and_foreign_cursors_are_400(
    alpha: SignedClient, beta: SignedClient, window: tuple[datetime, datetime, list[str]]
) -> None:
    start, end, _ = window
    cursor = statement(alpha, start, end, limit=2).json()["next_cursor"]
    tampered = cursor[:-1] + ("1" if cursor[-1] == "0" else "0")
    attempts = [
        statement(alpha, start, end, limit=2, cursor="garbage"),
        statement(alpha, start, end, limit=2, cursor=tampered),
        statement(alpha, start, end + timedelta(seconds=1), limit=2, cursor=cursor),
        statement(alpha, start, end, limit=2, cursor=cursor, currency_id="eth"),
        statement(beta, start, end, limit=2, cursor=cursor),
    ]
    for response in attempts:
        assert response.status_code == 400 and error_code(response) == "validation_error"
    assert statement(alpha, start, end, limit=5, cursor=cursor).status_code == 200


def _bad_cursors(
    client: SignedClient, other: SignedClient, start: datetime, end: datetime
) -> dict[str, str]:
    """Cursors of the window [start, end) that ``client`` was never issued: an unknown one,
    one of ``other`` (same currency and window) and one of its own cut in half."""
    mine = statement(client, start, end, limit=1).json()["next_cursor"]
    theirs = statement(other, start, end, limit=1).json()["next_cursor"]
    return {"unknown": "never-issued", "foreign": theirs, "truncated": mine[: len(mine) // 2]}


def _two_merchant_window(client: SignedClient, other: SignedClient) -> tuple[datetime, datetime]:
    start = utc_now()
    for c in (client, other):
        paid(c, "1", splits=False)
        paid(c, "2", splits=False)
    return start, utc_now() + timedelta(milliseconds=1)


def test_unknown_foreign_and_truncated_cursors_are_400(
    alpha: SignedClient, beta: SignedClient
) -> None:
    start, end = _two_merchant_window(alpha, beta)
    for kind, cursor in _bad_cursors(alpha, beta, start, end).items():
        response = statement(alpha, start, end, limit=1, cursor=cursor)
        assert response.status_code == 400, (kind, response.text)
        assert [d["field"] for d in response.json()["details"]] == ["query.cursor"]


def test_a_bad_cursor_restarts_the_statement_only_with_its_fault(profile: Profile) -> None:
    """statement-bad-cursor-first-page: every cursor the server cannot verify is answered with
    the window's first page (200) instead of 400."""
    with (
        ReferenceServer(profile=profile, faults=("statement-bad-cursor-first-page",)) as faulty,
        SignedClient(faulty.base_url, profile.primary) as client,
        SignedClient(faulty.base_url, profile.secondary) as other,
    ):
        start, end = _two_merchant_window(client, other)
        first = statement(client, start, end, limit=1).json()
        for kind, cursor in _bad_cursors(client, other, start, end).items():
            response = statement(client, start, end, limit=1, cursor=cursor)
            assert response.status_code == 200, (kind, response.text)
            assert response.json()["lines"] == first["lines"]
