"""One statement page judged against the query that asked for it (profile 5)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.statement_pages import StatementPages
from conformance.judge.statements import parse_page

QUERY = {"currency_id": "usdc", "from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z"}


def line(entry: int, signed: str, balance: str) -> dict[str, Any]:
    return {
        "ledger_entry_id": entry,
        "direction": "debit" if signed.startswith("-") else "credit",
        "canonical_amount": signed.lstrip("-"),
        "signed_canonical_amount": signed,
        "balance_after_canonical": balance,
        "platform_fee_canonical": "0.000000",
        "is_split_recipient_income": False,
        "created_at": f"2026-01-01T00:00:0{entry}Z",
    }


def page(*lines: tuple[int, str, str], **top: Any) -> dict[str, Any]:
    return {
        "code": "USDC",
        "symbol": "$",
        "accounting_decimals": 6,
        "opening_canonical": "0.000000",
        "closing_canonical": lines[-1][2] if lines else "0.000000",
        "window_entry_count": len(lines),
        "limit": 100,  # the default profile's default
        "reconciles": True,
        "lines": [line(*item) for item in lines],
        **top,
    }


@pytest.fixture(scope="module")
def pages() -> StatementPages:
    return StatementPages(load_profile("default"))


def judged(pages: StatementPages, body: dict[str, Any]) -> dict[str, Outcome]:
    found: dict[str, Outcome] = {}
    for finding in pages.page(QUERY, body, parse_page(body)):
        for rid in finding.ids:
            if found.get(rid) is not Outcome.FAILED:
                found[rid] = finding.outcome
    return found


TWO = ((1, "25.000000", "25.000000"), (2, "-1.000000", "24.000000"))


def test_a_whole_window_on_one_page_passes_every_rule(pages: StatementPages) -> None:
    found = judged(pages, page(*TWO))
    assert set(found.values()) == {Outcome.PASSED}
    assert {"STMT-002", "STMT-005", "STMT-006", "STMT-007", "STMT-008", "STMT-010"} <= set(found)


def test_lines_out_of_order_or_repeated_fail_the_order(pages: StatementPages) -> None:
    repeated = page(TWO[0], (1, "-1.000000", "24.000000"))
    assert judged(pages, repeated)["STMT-002"] is Outcome.FAILED


def test_a_count_below_the_lines_shown_fails_the_count(pages: StatementPages) -> None:
    found = judged(pages, page(*TWO, window_entry_count=1))
    assert found["STMT-010"] is Outcome.FAILED
    assert found.get("STMT-013") is not Outcome.FAILED


def test_a_cursor_with_a_count_saying_nothing_remains_is_left_to_the_caller(
    pages: StatementPages,
) -> None:
    # the page alone cannot tell a wrong count from a wrong cursor: the family judges it by
    # the window it knows, the validator by the page the cursor reads (validator/walks.py)
    found = judged(pages, page(*TWO, next_cursor="c1"))
    assert "STMT-010" not in found and "STMT-013" not in found
    assert judged(pages, page(*TWO, window_entry_count=3))["STMT-013"] is Outcome.FAILED


def test_a_first_balance_that_does_not_follow_the_opening_is_left_to_the_caller(
    pages: StatementPages,
) -> None:
    # a wrong opening or a wrong first balance: the family judges it by the history it read,
    # the validator by the balance before that line in another read (validator/walks.py)
    found = judged(pages, page(*TWO, opening_canonical="5.000000"))
    assert "STMT-006" not in found and found["STMT-005"] is Outcome.PASSED
    assert judged(pages, page(*TWO))["STMT-006"] is Outcome.PASSED


def test_balances_that_do_not_chain_fail_the_running_balance_alone(
    pages: StatementPages,
) -> None:
    found = judged(pages, page(TWO[0], (2, "-1.000000", "23.000000")))
    assert found["STMT-005"] is Outcome.FAILED
    assert "STMT-006" not in found
