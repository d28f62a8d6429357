"""Lists and statements across recorded exchanges: order, page walks, one window's figures."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.core.results import Outcome
from conformance.judge.tables import When
from conformance.validator.tables import Finding, request_headers
from conformance.validator.walks import WalkChecks
from tests.validator.samples import exchange

ALPHA = "mk_test_alpha"
WINDOW = "currency_id=usdc&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z"


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile("default")


class Recording:
    """Feeds exchanges to a ``WalkChecks`` one after the other, none overlapping in time."""

    def __init__(self, profile: Profile) -> None:
        self.walks = WalkChecks(profile)
        self.position = 0

    def send(
        self, operation_id: str, method: str, path: str, body: Any, *, status: int = 200
    ) -> list[Finding]:
        self.position += 1
        ex = exchange(
            method, path, request_headers=[("X-Api-Key", ALPHA)], status=status, response_body=body
        )
        when = When(float(self.position), self.position + 0.5, self.position)
        return list(self.walks.observe(ex, operation_id, request_headers(ex), body, when))

    def create(self, *ids: str) -> None:
        for pid in ids:
            self.send("createPayment", "POST", "/v1/payments", {"id": pid}, status=201)

    def page(self, query: str, ids: list[str], cursor: str | None = None) -> list[Finding]:
        body: dict[str, Any] = {"payments": [{"id": pid} for pid in ids]}
        if cursor is not None:
            body["next_cursor"] = cursor
        return self.send("listPayments", "GET", f"/v1/payments?{query}", body)

    def statement(self, query: str, lines: list[tuple[int, str, str]], **top: Any) -> list[Finding]:
        """A statement page; ``lines`` are (ledger_entry_id, signed amount, balance after)."""
        body = {
            "code": "USDC",
            "symbol": "$",
            "accounting_decimals": 2,
            "opening_canonical": "0.00",
            "closing_canonical": lines[-1][2] if lines else "0.00",
            "window_entry_count": 4,
            "limit": 2,
            "reconciles": True,
            "lines": [line(*item) for item in lines],
            **top,
        }
        return self.send("getStatement", "GET", f"/v1/statements?{WINDOW}&{query}", body)


def line(entry: int, signed: str, balance: str) -> dict[str, Any]:
    return {
        "ledger_entry_id": entry,
        "direction": "debit" if signed.startswith("-") else "credit",
        "canonical_amount": signed.lstrip("-"),
        "signed_canonical_amount": signed,
        "balance_after_canonical": balance,
        "platform_fee_canonical": "0.00",
        "is_split_recipient_income": False,
        "created_at": f"2026-01-01T00:00:0{entry}Z",
    }


@pytest.fixture
def recording(profile: Profile) -> Recording:
    return Recording(profile)


def outcomes(findings: list[Finding], rid: str) -> list[Outcome]:
    return [outcome for _, ids, outcome, _ in findings if rid in ids]


# -- the order of a list -----------------------------------------------------------------------
def test_payments_listed_newest_first_pass(recording: Recording) -> None:
    recording.create("pay_1", "pay_2", "pay_3")
    assert outcomes(recording.page("limit=3", ["pay_3", "pay_2", "pay_1"]), "PAY-018") == [
        Outcome.PASSED
    ]


def test_payments_listed_oldest_first_fail(recording: Recording) -> None:
    recording.create("pay_1", "pay_2")
    found = recording.page("limit=2", ["pay_1", "pay_2"])
    assert outcomes(found, "PAY-018") == [Outcome.FAILED]
    assert "pay_1 is listed before pay_2" in found[0][3]


def test_payments_created_at_once_or_outside_the_recording_are_not_judged(
    profile: Profile,
) -> None:
    walks = WalkChecks(profile)
    headers = {"x-api-key": ALPHA}
    create = exchange("POST", "/v1/payments", status=201, response_body={"id": "pay_1"})
    # two creates overlapping in time: no order between them
    list(walks.observe(create, "createPayment", headers, {"id": "pay_1"}, When(1.0, 2.0, 1)))
    list(walks.observe(create, "createPayment", headers, {"id": "pay_2"}, When(1.5, 2.5, 2)))
    body = {"payments": [{"id": "pay_1"}, {"id": "pay_2"}, {"id": "pay_elsewhere"}]}
    listing = exchange("GET", "/v1/payments", response_body=body)
    assert list(walks.observe(listing, "listPayments", headers, body, When(3.0, 3.1, 3))) == []


# -- a page walk of a list ---------------------------------------------------------------------
def test_a_page_walk_that_continues_where_the_page_ended_passes(recording: Recording) -> None:
    recording.create("pay_1", "pay_2", "pay_3")
    recording.page("limit=1", ["pay_3"], cursor="c1")
    assert outcomes(recording.page("limit=1&cursor=c1", ["pay_2"]), "PAY-019") == [Outcome.PASSED]


def test_a_payment_skipped_at_the_page_boundary_fails(recording: Recording) -> None:
    recording.create("pay_1", "pay_2", "pay_3")
    recording.page("limit=1", ["pay_3"], cursor="c1")
    found = recording.page("limit=1&cursor=c1", ["pay_1"])
    assert outcomes(found, "PAY-019") == [Outcome.FAILED]
    assert "pay_2, created between it and that page's last payment pay_3" in found[0][3]


def test_a_payment_repeated_at_the_page_boundary_fails(recording: Recording) -> None:
    recording.create("pay_1", "pay_2", "pay_3")
    recording.page("limit=2", ["pay_3", "pay_2"], cursor="c1")
    assert outcomes(recording.page("limit=2&cursor=c1", ["pay_2", "pay_1"]), "PAY-019") == [
        Outcome.FAILED
    ]


def test_a_walk_out_of_the_profiles_order_fails_the_order_not_the_walk(
    recording: Recording,
) -> None:
    recording.create("pay_1", "pay_2", "pay_3")
    recording.page("limit=1", ["pay_1"], cursor="c1")  # oldest first: the profile says newest
    found = recording.page("limit=1&cursor=c1", ["pay_2"])
    assert outcomes(found, "PAY-018") == [Outcome.FAILED]
    assert outcomes(found, "PAY-019") == []


def test_a_filtered_walk_may_leave_payments_out(recording: Recording) -> None:
    """Another status's payment between the two pages is not the walk's to show."""
    recording.create("pay_1", "pay_2", "pay_3")
    recording.page("status=pending&limit=1", ["pay_3"], cursor="c1")
    assert outcomes(recording.page("status=pending&limit=1&cursor=c1", ["pay_1"]), "PAY-019") == []


def test_a_cursor_of_an_unfiltered_list_leading_to_an_empty_page_fails(
    recording: Recording,
) -> None:
    recording.create("pay_1")
    recording.page("limit=1", ["pay_1"], cursor="c1")
    assert outcomes(recording.page("limit=1&cursor=c1", []), "PAY-019") == [Outcome.FAILED]


def test_one_payment_of_an_order_number_and_a_next_cursor_fails(recording: Recording) -> None:
    recording.create("pay_1")
    found = recording.page("merchant_order_no=order-1", ["pay_1"], cursor="c1")
    assert outcomes(found, "PAY-019") == [Outcome.FAILED]
    assert outcomes(recording.page("merchant_order_no=order-1", ["pay_1"]), "PAY-019") == [
        Outcome.PASSED
    ]
    # a page of one may be full: its cursor says nothing
    assert outcomes(recording.page("merchant_order_no=x&limit=1", [], cursor="c2"), "PAY-019") == []


# -- a page walk of a statement ----------------------------------------------------------------
def test_a_statement_walk_whose_balances_chain_across_the_boundary_passes(
    recording: Recording,
) -> None:
    recording.statement("limit=2", [(2, "25.00", "25.00"), (3, "-1.00", "24.00")], next_cursor="s1")
    found = recording.statement("limit=2&cursor=s1", [(6, "4.00", "28.00"), (7, "-0.10", "27.90")])
    assert outcomes(found, "STMT-013") == [Outcome.PASSED]


def test_a_statement_line_skipped_at_the_boundary_fails(recording: Recording) -> None:
    recording.statement("limit=2", [(2, "25.00", "25.00"), (3, "-1.00", "24.00")], next_cursor="s1")
    found = recording.statement("limit=2&cursor=s1", [(7, "-0.10", "27.90")])
    assert outcomes(found, "STMT-013") == [Outcome.FAILED]
    assert "a line between them was skipped" in found[0][3]


def test_a_statement_line_repeated_at_the_boundary_fails(recording: Recording) -> None:
    recording.statement("limit=2", [(2, "25.00", "25.00"), (3, "-1.00", "24.00")], next_cursor="s1")
    found = recording.statement("limit=2&cursor=s1", [(3, "-1.00", "24.00"), (6, "4.00", "28.00")])
    assert outcomes(found, "STMT-013") == [Outcome.FAILED]
    assert "repeated across the page boundary" in found[0][3]


def test_a_first_page_counting_only_its_own_lines_fails_when_its_cursor_reads_more(
    recording: Recording,
) -> None:
    two = [(2, "25.00", "25.00"), (3, "-1.00", "24.00")]
    recording.statement("limit=2", two, window_entry_count=2, next_cursor="s1")
    found = recording.statement("limit=2&cursor=s1", [(6, "4.00", "28.00")])
    assert outcomes(found, "STMT-010") == [Outcome.FAILED]
    assert outcomes(found, "STMT-013") == [Outcome.PASSED]


def test_a_cursor_on_a_page_that_held_the_whole_window_fails_the_cursor_alone(
    recording: Recording,
) -> None:
    two = [(2, "25.00", "25.00"), (3, "-1.00", "24.00")]
    recording.statement("limit=2", two, window_entry_count=2, next_cursor="s1")
    found = recording.statement("limit=2&cursor=s1", [], window_entry_count=2)
    assert outcomes(found, "STMT-013") == [Outcome.FAILED]
    assert outcomes(found, "STMT-010") == []


def test_an_opening_the_first_balance_does_not_follow_is_told_apart_by_another_read(
    recording: Recording,
) -> None:
    # alone, the page cannot say which of its opening and first balance is wrong
    alone = recording.statement(
        "limit=2", [(3, "-1.00", "24.00")], opening_canonical="0.00", window_entry_count=1
    )
    assert outcomes(alone, "STMT-006") == outcomes(alone, "STMT-005") == []
    # a longer read shows the balance before line 3: 25.00
    recording.statement("limit=9", [(2, "25.00", "25.00"), (3, "-1.00", "24.00")])
    opening = recording.statement(
        "limit=2", [(3, "-1.00", "24.00")], opening_canonical="0.00", window_entry_count=2
    )
    assert outcomes(opening, "STMT-006") == [Outcome.FAILED]
    assert outcomes(opening, "STMT-005") == []
    balance = recording.statement(
        "limit=2", [(3, "-1.00", "20.00")], opening_canonical="25.00", window_entry_count=3
    )
    assert outcomes(balance, "STMT-005") == [Outcome.FAILED]
    assert outcomes(balance, "STMT-006") == []


# -- the figures of one window -----------------------------------------------------------------
def test_pages_of_one_window_state_the_same_figures(recording: Recording) -> None:
    recording.statement(
        "limit=2", [(2, "25.00", "25.00"), (3, "-1.00", "24.00")], closing_canonical="27.90"
    )
    found = recording.statement(
        "limit=100",
        [(2, "25.00", "25.00"), (3, "-1.00", "24.00"), (6, "4.00", "28.00"), (7, "-0.10", "27.90")],
    )
    for rid in ("STMT-006", "STMT-007", "STMT-008"):
        assert outcomes(found, rid) == [Outcome.PASSED]


def test_a_page_stating_its_own_closing_fails_the_closing_alone(recording: Recording) -> None:
    # the first page's closing is its own last balance: reconciles follows from it
    recording.statement("limit=2", [(2, "25.00", "25.00"), (3, "-1.00", "24.00")], reconciles=False)
    found = recording.statement(
        "limit=100",
        [(2, "25.00", "25.00"), (3, "-1.00", "24.00"), (6, "4.00", "28.00"), (7, "-0.10", "27.90")],
    )
    assert outcomes(found, "STMT-007") == [Outcome.FAILED]
    assert outcomes(found, "STMT-008") == []
    assert "closing_canonical 27.90, where" in " ".join(f[3] for f in found)


def test_a_page_stating_its_own_reconciles_fails(recording: Recording) -> None:
    recording.statement(
        "limit=2",
        [(2, "25.00", "25.00"), (3, "-1.00", "24.00")],
        closing_canonical="27.90",
        reconciles=False,
    )
    found = recording.statement(
        "limit=100",
        [(2, "25.00", "25.00"), (3, "-1.00", "24.00"), (6, "4.00", "28.00"), (7, "-0.10", "27.90")],
    )
    assert outcomes(found, "STMT-007") == [Outcome.PASSED]
    assert outcomes(found, "STMT-008") == [Outcome.FAILED]


def test_reads_of_a_window_that_grew_or_holds_nothing_are_not_compared(
    recording: Recording,
) -> None:
    recording.statement("limit=2", [(2, "25.00", "25.00")], window_entry_count=1)
    grown = recording.statement("limit=2", [(2, "25.00", "25.00"), (3, "5.00", "30.00")])
    assert outcomes(grown, "STMT-007") == []
    recording.statement("limit=2", [], window_entry_count=0, opening_canonical="0.00")
    empty = recording.statement("limit=2", [], window_entry_count=0, opening_canonical="30.00")
    assert outcomes(empty, "STMT-006") == []
