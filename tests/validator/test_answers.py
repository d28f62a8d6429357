"""AnswerChecks: an accepted exchange's answer judged against its own request (profile 5, 6).

Each rule is shown twice: an answer that contradicts its request fails the requirement the
suite's family names for the rule, and the conformant answer passes it. Times the server
derives from the moment of the request are compared with the recorded time, allowing the
profile's clock window: a server whose clock is off by less than that never fails.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.core.profile import load_profile, resolve_profile_path
from conformance.core.redaction import REDACTED
from conformance.core.results import CheckResult, Outcome
from conformance.validator.checks import ExchangeValidator
from conformance.validator.exchange import Exchange
from tests.validator.samples import exchange

STARTED = "2026-01-01T00:00:00.000Z"
AUTH = (
    ("X-Api-Key", "mk_test_alpha"),
    ("X-Timestamp", "1767225600"),  # STARTED
    ("X-Nonce", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
    ("X-Signature", REDACTED),  # as a recorder masks it: these tests judge other things
)
POST = (*AUTH, ("Idempotency-Key", "k-0001"), ("Content-Type", "application/json"))
QUOTE = {
    "amount": "25",
    "code": "USDC",
    "symbol": "$",
    "name": "USD Coin",
    "deployments": [{"chain_id": "base", "asset_kind": "token", "address": "0xabc"}],
}


@pytest.fixture(scope="module")
def validator() -> ExchangeValidator:
    return ExchangeValidator(load_profile("default"))


def outcomes(validator: ExchangeValidator, ex: Exchange, rid: str) -> list[Outcome]:
    return [r.outcome for r in about(validator, ex, rid)]


def about(validator: ExchangeValidator, ex: Exchange, rid: str) -> list[CheckResult]:
    """The results naming ``rid``, but for the response's schema (judged in test_checks)."""
    return [
        r
        for r in validator.validate(ex)
        if rid in r.requirement_ids and not r.check_id.startswith("validate.response_schema")
    ]


def payment(expires_at: str, status: str = "pending", **extra: Any) -> dict[str, Any]:
    return {
        "id": "pay_1",
        "status": status,
        "quotes": {"usdc": QUOTE},
        "expires_at": expires_at,
        "merchant_order_no": "o-1",
        **extra,
    }


def create_payment(expires_in: int | None, expires_at: str) -> Exchange:
    request: dict[str, Any] = {"quotes": {"usdc": {"amount": "25.00"}}, "merchant_order_no": "o-1"}
    if expires_in is not None:
        request["expires_in_secs"] = expires_in
    answer = payment(expires_at, checkout_url="https://pay.example.com/pay_1")
    return exchange(
        "POST", "/v1/payments", request_headers=POST, request_body=request, status=201,
        response_body=answer, started_at=STARTED,
    )  # fmt: skip


# ------------------------------------------------------------------------------ times
def test_an_expires_at_that_ignores_the_requested_lifetime_fails_pay_010(
    validator: ExchangeValidator,
) -> None:
    ex = create_payment(60, "2026-01-01T01:00:00Z")  # the default hour, not the minute asked
    [result] = about(validator, ex, "PAY-010")
    assert result.outcome is Outcome.FAILED
    assert "expires_at" in result.message and "+3540 s" in result.message


def test_a_replay_answered_long_after_its_original_is_not_judged_for_its_times(
    validator: ExchangeValidator,
) -> None:
    # the stored answer's expires_at was derived when the original was handled, an hour before
    original = create_payment(60, "2026-01-01T00:01:00Z")
    stamped = tuple(
        (name, "1767229200" if name == "X-Timestamp" else value)  # an hour after STARTED
        for name, value in original.request_headers
    )
    later = replace(original, started_at="2026-01-01T01:00:00.000Z", request_headers=stamped)
    assert outcomes(validator, later, "PAY-010") == [Outcome.FAILED]
    marked = replace(
        later,
        response_headers=(*later.response_headers, ("Idempotent-Replayed", "true")),
    )
    assert outcomes(validator, marked, "PAY-010") == []


def test_an_expires_at_of_the_requested_lifetime_passes_pay_010(
    validator: ExchangeValidator,
) -> None:
    assert outcomes(validator, create_payment(60, "2026-01-01T00:01:00Z"), "PAY-010") == [
        Outcome.PASSED
    ]


def test_a_server_clock_off_by_less_than_the_clock_window_passes(
    validator: ExchangeValidator,
) -> None:
    ex = create_payment(60, "2026-01-01T00:05:59Z")  # the server's clock 299 s ahead
    assert outcomes(validator, ex, "PAY-010") == [Outcome.PASSED]


def test_without_expires_in_secs_the_profiles_default_applies_pay_011(
    validator: ExchangeValidator,
) -> None:
    assert outcomes(validator, create_payment(None, "2026-01-01T01:00:00Z"), "PAY-011") == [
        Outcome.PASSED
    ]
    assert outcomes(validator, create_payment(None, "2026-01-02T00:00:00Z"), "PAY-011") == [
        Outcome.FAILED
    ]


SCHEDULE_REQUEST = {
    "currency_id": "eth",
    "target_chain_id": "ethereum",
    "withdraw_address_id": "wa_alpha_eth",
    "interval_secs": 3600,
    "min_send_amount": "1.5",
    "mode": "auto_request",
}


def schedule(**changes: Any) -> dict[str, Any]:
    body = {
        "id": "ps_1",
        "currency_id": "eth",
        "currency_chain_id": "eth:ethereum",
        "target_chain_id": "ethereum",
        "withdraw_address_id": "wa_alpha_eth",
        "interval_secs": 3600,
        "min_send_amount": "1.5",
        "min_send_raw": "1500000000000000000",
        "mode": "auto_request",
        "status": "active",
        "enabled": True,
        "next_run_at": "2026-01-01T01:00:00Z",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "retired_at": None,
    }
    return {**body, **changes}


def create_schedule(answer: dict[str, Any], **request: Any) -> Exchange:
    return exchange(
        "POST", "/v1/payout-schedules", request_headers=POST,
        request_body={**SCHEDULE_REQUEST, **request}, status=201, response_body=answer,
        started_at=STARTED,
    )  # fmt: skip


def test_a_next_run_at_that_ignores_first_run_at_fails_payout_004(
    validator: ExchangeValidator,
) -> None:
    ex = create_schedule(schedule(), first_run_at="2026-01-03T00:00:00Z")
    [result] = about(validator, ex, "PAYOUT-004")
    assert result.outcome is Outcome.FAILED
    assert "first_run_at" in result.message


def test_a_next_run_at_equal_to_first_run_at_passes_payout_004(
    validator: ExchangeValidator,
) -> None:
    answer = schedule(next_run_at="2026-01-03T00:00:00.000Z")
    ex = create_schedule(answer, first_run_at="2026-01-03T00:00:00Z")
    assert outcomes(validator, ex, "PAYOUT-004") == [Outcome.PASSED]


def test_a_replace_whose_next_run_at_ignores_first_run_at_fails_payout_010(
    validator: ExchangeValidator,
) -> None:
    def replace_schedule(answer: dict[str, Any]) -> Exchange:
        return exchange(
            "PUT", "/v1/payout-schedules/ps_1", request_headers=POST,
            request_body={**SCHEDULE_REQUEST, "first_run_at": "2026-01-03T00:00:00Z"},
            status=200, response_body=answer, started_at=STARTED,
        )  # fmt: skip

    [result] = about(validator, replace_schedule(schedule()), "PAYOUT-010")
    assert result.outcome is Outcome.FAILED and "first_run_at" in result.message
    kept = replace_schedule(schedule(next_run_at="2026-01-03T00:00:00.000Z"))
    assert outcomes(validator, kept, "PAYOUT-010") == [Outcome.PASSED]


def test_without_first_run_at_next_run_at_is_created_at_plus_the_interval_payout_006(
    validator: ExchangeValidator,
) -> None:
    assert outcomes(validator, create_schedule(schedule()), "PAYOUT-006") == [Outcome.PASSED]
    late = schedule(next_run_at="2026-01-01T00:00:00Z")  # "now", not now + interval
    assert outcomes(validator, create_schedule(late), "PAYOUT-006") == [Outcome.FAILED]


def test_without_created_at_next_run_at_follows_the_time_of_the_create_payout_006(
    validator: ExchangeValidator,
) -> None:
    undated = schedule(created_at=None)
    assert outcomes(validator, create_schedule(undated), "PAYOUT-006") == [Outcome.PASSED]
    late = schedule(created_at=None, next_run_at="2026-01-02T00:00:00Z")
    assert outcomes(validator, create_schedule(late), "PAYOUT-006") == [Outcome.FAILED]


def test_a_create_answered_with_other_fields_fails_ops_003(validator: ExchangeValidator) -> None:
    [result] = about(validator, create_schedule(schedule(mode="manual")), "OPS-003")
    assert result.outcome is Outcome.FAILED and "mode 'manual'" in result.message


def test_an_accepted_create_with_too_many_decimals_is_judged_by_payout_003_alone(
    validator: ExchangeValidator,
) -> None:
    answer = schedule(min_send_amount="1.1", min_send_raw="1100000000000000000")
    ex = create_schedule(answer, min_send_amount="1." + "1" * 19)  # eth has 18 decimals
    assert outcomes(validator, ex, "PAYOUT-003") == [Outcome.FAILED]
    for rid in ("OPS-003", "PAYOUT-001", "PAYOUT-002", "PAYOUT-006"):  # the fields: not judged
        assert outcomes(validator, ex, rid) == []


# ----------------------------------------------------------------------------- amounts
def test_a_raw_amount_not_scaled_by_the_currencys_decimals_fails_payout_002(
    validator: ExchangeValidator,
) -> None:
    ex = create_schedule(schedule(min_send_raw="1500000"))  # scaled like USDC (6), not ETH (18)
    [result] = about(validator, ex, "PAYOUT-002")
    assert result.outcome is Outcome.FAILED
    assert "expected 1500000000000000000" in result.message
    assert outcomes(validator, create_schedule(schedule()), "PAYOUT-002") == [Outcome.PASSED]


ENTRY = {
    "scheme": "exact",
    "network": "base",
    "asset": "0x" + "1" * 40,
    "pay_to": "0x" + "2" * 40,
    "max_amount_required": "12500000",
    "resource": "https://api.example.com/x402/pay_1",
    "nonce": "0x" + "3" * 64,
    "valid_before": 1767225600 + 300,
    "extra": {"name": "USD Coin", "version": "2", "chain_id": 8453,
              "verifying_contract": "0x" + "4" * 40},
}  # fmt: skip
ISSUED = ("X402-001", "X402-002", "X402-003", "X402-004", "X402-005", "X402-006", "X402-008",
          "X402-009", "X402-029")  # fmt: skip


def requirements(asked: str | None = None, **changes: Any) -> Exchange:
    """Requirements for 12.5 usdc on base (``asked``: the scheme requested, if any), the entry
    with ``changes``."""
    request = {"currency_id": "usdc", "chain_id": "base", "amount": "12.5"}
    if asked is not None:
        request["scheme"] = asked
    return exchange(
        "POST", "/v1/x402/requirements", request_headers=POST, request_body=request, status=201,
        response_body={"payment_id": "pay_1", "accepts": [{**ENTRY, **changes}]},
        started_at=STARTED,
    )  # fmt: skip


def test_x402_requirements_follow_the_request_and_the_profile(
    validator: ExchangeValidator,
) -> None:
    ex = requirements()
    for rid in (*ISSUED, "OPS-030"):
        assert outcomes(validator, ex, rid) == [Outcome.PASSED], rid
    assert outcomes(validator, ex, "X402-010") == []  # no scheme requested: OPS-030's
    assert outcomes(validator, requirements("exact"), "X402-010") == [Outcome.PASSED]
    assert outcomes(validator, requirements("exact"), "OPS-030") == []


@pytest.mark.parametrize(
    ("changes", "rid"),
    [
        ({"max_amount_required": "12500000000000000000"}, "X402-005"),  # scaled like ETH
        ({"resource": "/x402/pay_1"}, "X402-009"),
        ({"asset": "native"}, "X402-003"),  # a token deployment
        ({"pay_to": "0x12"}, "X402-004"),
        ({"nonce": "0x" + "3" * 63}, "X402-006"),
        ({"valid_before": 1767225600 + 3000}, "X402-008"),  # ten times the offset
        ({"valid_before": "1767225900"}, "X402-008"),  # not Unix seconds
        ({"extra": {"name": "USD Coin", "version": "2"}}, "X402-029"),
        ({"scheme": "upto"}, "OPS-030"),  # no scheme requested: the contract's default, exact
    ],
)
def test_an_issued_entry_the_profile_rules_out_fails(
    validator: ExchangeValidator, changes: dict[str, Any], rid: str
) -> None:
    assert outcomes(validator, requirements(**changes), rid) == [Outcome.FAILED]


def test_another_scheme_than_the_requested_one_fails_x402_010(
    validator: ExchangeValidator,
) -> None:
    assert outcomes(validator, requirements("upto"), "X402-010") == [Outcome.FAILED]


def settlement(tx_hash: str) -> Exchange:
    return exchange(
        "POST", "/v1/x402/settle", request_headers=AUTH,
        request_body={"payment_id": "pay_1", "payment_payload": {}, "payment_requirements": {}},
        response_body={"success": True, "tx_hash": tx_hash, "payment_id": "pay_1"},
    )  # fmt: skip


def test_a_settlement_without_the_profiles_tx_hash_fails_x402_012(
    validator: ExchangeValidator,
) -> None:
    assert outcomes(validator, settlement("0x" + "a" * 64), "X402-012") == [Outcome.PASSED]
    assert outcomes(validator, settlement("a" * 64), "X402-012") == [Outcome.FAILED]


def refused_settlement(answer: dict[str, Any], status: int = 422) -> Exchange:
    return replace(
        settlement("0x" + "a" * 64), status=status, response_body=json.dumps(answer).encode()
    )


def test_a_failed_settlement_names_its_reason_as_code_x402_022(
    validator: ExchangeValidator,
) -> None:
    named = refused_settlement({"code": "invalid_exact_evm_payload_signature", "message": "m"})
    assert outcomes(validator, named, "X402-022") == [Outcome.PASSED]
    assert outcomes(validator, refused_settlement({"message": "m"}), "X402-022") == [Outcome.FAILED]
    # another of the profile's answers with that status: a refusal of another kind
    reused = refused_settlement({"code": "idempotency_key_reused", "message": "m"})
    assert outcomes(validator, reused, "X402-022") == []


def usage(max_raw: str, actual_raw: str, scheme: str = "upto") -> Exchange:
    answer = {
        "payment_id": "pay_1",
        "scheme": scheme,
        "max_raw": max_raw,
        "actual_raw": actual_raw,
        "usage_id": "u-1",
    }
    request = {"actual_amount": "2", "usage_id": "u-1", "evidence": {}}
    return exchange(
        "POST", "/v1/x402/pay_1/usage", request_headers=POST, request_body=request,
        response_body=answer,
    )  # fmt: skip


def test_a_usage_answer_with_actual_raw_above_its_own_max_raw_fails_x402_026(
    validator: ExchangeValidator,
) -> None:
    assert outcomes(validator, usage("1000000", "2000000"), "X402-026") == [Outcome.FAILED]
    assert outcomes(validator, usage("3000000", "2000000"), "X402-026") == [Outcome.PASSED]


def test_a_usage_answer_of_another_scheme_fails_x402_027(validator: ExchangeValidator) -> None:
    assert outcomes(validator, usage("3000000", "2000000"), "X402-027") == [Outcome.PASSED]
    assert outcomes(validator, usage("3000000", "2000000", "flat"), "X402-027") == [Outcome.FAILED]


def test_a_usage_answer_of_an_exact_payment_fails_x402_025(validator: ExchangeValidator) -> None:
    # the server accepted a usage report of a payment that takes none (not X402-027's answer)
    ex = usage("3000000", "2000000", "exact")
    assert outcomes(validator, ex, "X402-025") == [Outcome.FAILED]
    assert outcomes(validator, ex, "X402-027") == [Outcome.PASSED]


# ----------------------------------------------------------------------------- quotes
def create_answered(quotes: dict[str, Any]) -> Exchange:
    request = {"quotes": {"usdc": {"amount": "25.00", "chain_ids": ["base"]}}}
    return exchange(
        "POST", "/v1/payments", request_headers=POST, request_body=request, status=201,
        response_body=payment("2026-01-01T01:00:00Z") | {"quotes": quotes}, started_at=STARTED,
    )  # fmt: skip


def test_a_quote_as_requested_passes_every_quote_rule(validator: ExchangeValidator) -> None:
    ex = create_answered({"usdc": QUOTE})
    for rid in ("PAY-006", "PAY-007", "PAY-008", "PAY-009", "FIX-003", "FIX-004"):
        assert outcomes(validator, ex, rid) == [Outcome.PASSED], rid


def test_a_deployment_of_the_wrong_asset_kind_fails_pay_008_and_fix_004(
    validator: ExchangeValidator,
) -> None:
    native = {**QUOTE, "deployments": [{"chain_id": "base", "asset_kind": "native"}]}
    ex = create_answered({"usdc": native})
    for rid in ("PAY-008", "FIX-004"):
        [result] = about(validator, ex, rid)
        assert result.outcome is Outcome.FAILED and "asset_kind 'native'" in result.message


def test_an_answer_without_a_requested_currency_fails_pay_006(
    validator: ExchangeValidator,
) -> None:
    ex = create_answered({"eth": QUOTE | {"code": "ETH"}})
    [result] = about(validator, ex, "PAY-006")
    assert result.outcome is Outcome.FAILED and "expected entries for ['usdc']" in result.message


# ------------------------------------------------------------------------------ lists
def list_payments(query: str, statuses: list[str]) -> Exchange:
    items = [
        payment("2026-01-01T01:00:00Z", s) | {"id": f"pay_{i}"} for i, s in enumerate(statuses)
    ]
    return exchange(
        "GET", f"/v1/payments{query}", request_headers=AUTH, response_body={"payments": items}
    )


def test_a_status_filter_answered_with_another_status_fails_pay_014(
    validator: ExchangeValidator,
) -> None:
    ex = list_payments("?status=pending", ["pending", "canceled"])
    [result] = about(validator, ex, "PAY-014")
    assert result.outcome is Outcome.FAILED and "'canceled'" in result.message
    ok = list_payments("?status=pending", ["pending", "pending"])
    assert outcomes(validator, ok, "PAY-014") == [Outcome.PASSED]


def test_more_items_than_the_limit_fails_pay_016(validator: ExchangeValidator) -> None:
    assert outcomes(validator, list_payments("?limit=1", ["pending"] * 2), "PAY-016") == [
        Outcome.FAILED
    ]
    assert outcomes(validator, list_payments("?limit=1", ["pending"]), "PAY-016") == [
        Outcome.PASSED
    ]


def test_a_payment_listed_in_a_status_outside_the_profile_fails_pay_state_002(
    validator: ExchangeValidator,
) -> None:
    [result] = about(validator, list_payments("", ["pending", "refunded"]), "PAY-STATE-002")
    assert result.outcome is Outcome.FAILED and "'refunded'" in result.message
    ok = list_payments("", ["pending", "settled", "expired"])
    assert outcomes(validator, ok, "PAY-STATE-002") == [Outcome.PASSED]


def test_a_listed_payment_quoted_under_another_name_fails_pay_007(
    validator: ExchangeValidator,
) -> None:
    renamed = payment("2026-01-01T01:00:00Z") | {"quotes": {"usdc": QUOTE | {"name": "USDC"}}}
    ex = exchange(
        "GET", "/v1/payments", request_headers=AUTH, response_body={"payments": [renamed]}
    )
    [result] = about(validator, ex, "PAY-007")
    assert result.outcome is Outcome.FAILED and "pay_1: quotes.usdc.name 'USDC'" in result.message
    ok = list_payments("", ["pending"])
    for rid in ("PAY-007", "PAY-008", "FIX-003", "FIX-004"):
        assert outcomes(validator, ok, rid) == [Outcome.PASSED], rid


def test_without_a_default_limit_a_page_holds_at_most_the_maximum_pay_016(
    tmp_path: Path,
) -> None:
    text = (
        resolve_profile_path("default")
        .read_text(encoding="utf-8")
        .replace(
            "list_limit = { min = 1, max = 100, default = 20 }", "list_limit = { min = 1, max = 2 }"
        )
    )
    (tmp_path / "no-default.toml").write_text(text, encoding="utf-8")
    validator = ExchangeValidator(load_profile(tmp_path / "no-default.toml"))
    assert outcomes(validator, list_payments("", ["pending"] * 3), "PAY-016") == [Outcome.FAILED]
    assert outcomes(validator, list_payments("", ["pending"] * 2), "PAY-016") == [Outcome.PASSED]


# ------------------------------------------------------------------------- statements
def line(entry: int, signed: str, balance: str, direction: str = "credit") -> dict[str, Any]:
    return {
        "ledger_entry_id": entry,
        "ledger_transaction_id": f"tx_{entry}",
        "tx_type": "payment",
        "business_type": "payment_income",
        "direction": direction,
        "canonical_amount": signed.lstrip("-"),
        "signed_canonical_amount": signed,
        "balance_after_canonical": balance,
        "platform_fee_canonical": "0.000000",
        "is_split_recipient_income": False,
        "created_at": "2026-01-01T00:30:00Z",
    }


def get_statement(
    lines: list[dict[str, Any]], closing: str, query_limit: int | None = None, **changes: Any
) -> Exchange:
    body = {
        "merchant_id": "m_alpha",
        "currency_id": "usdc",
        "code": "USDC",
        "symbol": "$",
        "accounting_decimals": 6,
        "opening_canonical": "0.000000",
        "closing_canonical": closing,
        "window_entry_count": len(lines),
        "limit": 100,
        "lines": lines,
        "reconciles": True,
        **changes,
    }
    query = "?currency_id=usdc&from=2026-01-01T00:00:00Z&to=2026-01-01T01:00:00Z"
    if query_limit is not None:
        query += f"&limit={query_limit}"
    return exchange("GET", f"/v1/statements{query}", request_headers=AUTH, response_body=body)


def test_statement_amounts_without_accounting_decimals_places_fail_stmt_009(
    validator: ExchangeValidator,
) -> None:
    trimmed = get_statement([line(1, "10.5", "10.5")], "10.5")
    [result] = about(validator, trimmed, "STMT-009")
    assert result.outcome is Outcome.FAILED and "not 6" in result.message
    whole = get_statement([line(1, "10.500000", "10.500000")], "10.500000")
    assert outcomes(validator, whole, "STMT-009") == [Outcome.PASSED]


def test_a_whole_window_page_is_judged_whole(validator: ExchangeValidator) -> None:
    lines = [line(1, "10.000000", "10.000000"), line(2, "-4.000000", "6.000000", "debit")]
    ok = get_statement(lines, "6.000000")
    for rid in ("STMT-001", "STMT-002", "STMT-004", "STMT-005", "STMT-007", "STMT-008"):
        assert outcomes(validator, ok, rid) == [Outcome.PASSED], rid
    positive = [line(1, "10.000000", "10.000000"), line(2, "4.000000", "14.000000", "debit")]
    assert outcomes(validator, get_statement(positive, "14.000000"), "STMT-004") == [Outcome.FAILED]
    assert outcomes(validator, get_statement(lines, "6.000000", reconciles=False), "STMT-008") == [
        Outcome.FAILED
    ]


def test_a_count_of_the_page_only_with_a_next_cursor_is_left_to_the_walk(
    validator: ExchangeValidator,
) -> None:
    # a wrong count or a wrong cursor: what the cursor reads tells (validator/walks.py)
    page = get_statement([line(1, "1.000000", "1.000000")], "9.000000", next_cursor="c2")
    assert about(validator, page, "STMT-010") == about(validator, page, "STMT-013") == []


def test_a_first_pages_opening_is_the_balance_before_its_first_line(
    validator: ExchangeValidator,
) -> None:
    """A window starting after earlier lines (an incremental sync): the opening is not zero."""
    since = [line(5, "4.000000", "10.000000")]
    ok = get_statement(since, "10.000000", opening_canonical="6.000000")
    assert outcomes(validator, ok, "STMT-006") == [Outcome.PASSED]
    # another opening: a wrong opening, or a wrong balance; another read tells (walks.py)
    assert about(validator, get_statement(since, "10.000000"), "STMT-006") == []


def test_a_page_read_without_limit_states_the_profiles_default_size(
    validator: ExchangeValidator,
) -> None:
    lines = [line(1, "10.000000", "10.000000")]
    assert outcomes(validator, get_statement(lines, "10.000000"), "STMT-011") == [Outcome.PASSED]
    [result] = about(validator, get_statement(lines, "10.000000", limit=50), "STMT-011")
    assert result.outcome is Outcome.FAILED
    assert "limit 50, where the profile's default is 100" in result.message


def test_a_limit_that_must_be_refused_is_not_judged_by_the_size_the_page_states(
    validator: ExchangeValidator,
) -> None:
    # 1001 is above the profile's 1000: accepting it fails STMT-012 (the request's rule); the
    # page stating 1000 is that same fault, as the suite's boundaries family judges it
    lines = [line(1, "10.000000", "10.000000")]
    clamped = get_statement(lines, "10.000000", query_limit=1001, limit=1000)
    assert Outcome.FAILED not in outcomes(validator, clamped, "STMT-011")
    assert Outcome.FAILED in outcomes(validator, clamped, "STMT-012")


# ----------------------------------------------------------------------------- states
def pause(status: str, enabled: bool) -> Exchange:
    answer = schedule(status=status, enabled=enabled)
    return exchange(
        "POST", "/v1/payout-schedules/ps_1/pause", request_headers=POST, response_body=answer
    )


def test_a_paused_schedule_that_says_it_is_enabled_fails_payout_011(
    validator: ExchangeValidator,
) -> None:
    [result] = about(validator, pause("paused", True), "PAYOUT-011")
    assert result.outcome is Outcome.FAILED and "enabled True" in result.message
    assert outcomes(validator, pause("paused", False), "PAYOUT-011") == [Outcome.PASSED]


def test_an_accepted_transition_ends_in_its_target_state(validator: ExchangeValidator) -> None:
    assert outcomes(validator, pause("paused", False), "PAYOUT-STATE-007") == [Outcome.PASSED]
    assert outcomes(validator, pause("active", True), "PAYOUT-STATE-007") == [Outcome.FAILED]


def test_a_pause_answer_agrees_with_its_own_currency_fields_payout_001_002(
    validator: ExchangeValidator,
) -> None:
    def paused(**changes: Any) -> Exchange:
        answer = schedule(status="paused", enabled=False, **changes)
        return exchange(
            "POST", "/v1/payout-schedules/ps_1/pause", request_headers=POST, response_body=answer
        )

    assert outcomes(validator, paused(), "PAYOUT-001") == [Outcome.PASSED]
    assert outcomes(validator, paused(currency_chain_id="eth:base"), "PAYOUT-001") == [
        Outcome.FAILED
    ]
    assert outcomes(validator, paused(min_send_raw="1500000"), "PAYOUT-002") == [Outcome.FAILED]


def test_a_schedule_answered_without_retired_at_fails_payout_012(
    validator: ExchangeValidator,
) -> None:
    answer = schedule(status="paused", enabled=False)
    del answer["retired_at"]
    ex = exchange(
        "POST", "/v1/payout-schedules/ps_1/pause", request_headers=POST, response_body=answer
    )
    [result] = about(validator, ex, "PAYOUT-012")
    assert result.outcome is Outcome.FAILED and "retired_at absent" in result.message


def test_a_canceled_subscription_carries_its_own_currency_chain_id_sub_005(
    validator: ExchangeValidator,
) -> None:
    def cancel(pair: str) -> Exchange:
        answer = {
            "id": "sub_1",
            "status": "canceled",
            "currency_id": "usdc",
            "chain_id": "base",
            "currency_chain_id": pair,
            "amount": "5",
            "interval_secs": 3600,
            "next_bill_at": "2026-01-01T01:00:00Z",
        }
        return exchange(
            "POST", "/v1/subscriptions/sub_1/cancel", request_headers=POST, response_body=answer
        )

    assert outcomes(validator, cancel("usdc:base"), "SUB-005") == [Outcome.PASSED]
    assert outcomes(validator, cancel("base:usdc"), "SUB-005") == [Outcome.FAILED]


def test_an_answer_the_recorder_did_not_capture_is_not_judged(
    validator: ExchangeValidator,
) -> None:
    ex = exchange(
        "POST", "/v1/payout-schedules/ps_1/pause", request_headers=POST, response_body=b""
    )
    assert not [r for r in validator.validate(ex) if r.check_id.startswith("validate.answer")]


# ----------------------------------------------------------------------- test helpers
def helper(
    action: str,
    answer: Any,
    status: int = 200,
    body: Any = b"",
    headers: tuple[tuple[str, str], ...] = POST,
) -> Exchange:
    path = f"/v1/test-helpers/payments/pay_1/{action}"
    return exchange(
        "POST", path, request_headers=headers, request_body=body, status=status,
        response_body=answer,
    )  # fmt: skip


def test_the_expire_helper_must_leave_the_payment_expired_help_005(
    validator: ExchangeValidator,
) -> None:
    expired = helper("expire", payment("2026-01-01T01:00:00Z", "expired"))
    assert outcomes(validator, expired, "HELP-005") == [Outcome.PASSED]
    pending = helper("expire", payment("2026-01-01T01:00:00Z", "pending"))
    assert outcomes(validator, pending, "HELP-005") == [Outcome.FAILED]


def test_a_deposit_of_the_full_quote_must_settle_help_002(validator: ExchangeValidator) -> None:
    full = {"currency_id": "usdc", "chain_id": "base", "amount": "30"}
    stays = helper("deposit", payment("2026-01-01T01:00:00Z", "underpaid"), body=full)
    assert outcomes(validator, stays, "HELP-002") == [Outcome.FAILED]
    settled = helper("deposit", payment("2026-01-01T01:00:00Z", "settled"), body=full)
    assert outcomes(validator, settled, "HELP-002") == [Outcome.PASSED]
    short = {"currency_id": "usdc", "chain_id": "base", "amount": "5"}
    underpaid = helper("deposit", payment("2026-01-01T01:00:00Z", "underpaid"), body=short)
    assert outcomes(validator, underpaid, "HELP-001") == [Outcome.PASSED]


def test_a_helper_accepted_without_authentication_fails_help_007(
    validator: ExchangeValidator,
) -> None:
    ex = helper("expire", payment("2026-01-01T01:00:00Z", "expired"), headers=())
    assert Outcome.FAILED in outcomes(validator, ex, "HELP-007")
    refused = helper("expire", {"code": "unauthorized", "message": "no"}, 401, headers=())
    assert outcomes(validator, refused, "HELP-007") == [Outcome.PASSED]


def test_a_helper_refused_for_lacking_an_idempotency_key_fails_help_008(
    validator: ExchangeValidator,
) -> None:
    missing = {"code": "idempotency_key_missing", "message": "need a key"}
    ex = helper("expire", missing, 400, headers=AUTH)
    assert outcomes(validator, ex, "HELP-008") == [Outcome.FAILED]
    accepted = helper("expire", payment("2026-01-01T01:00:00Z", "expired"), headers=AUTH)
    assert outcomes(validator, accepted, "HELP-008") == [Outcome.PASSED]


# ------------------------------------------------------------------------------ echoes
def put_endpoint(sent: list[str], answered: list[str]) -> Exchange:
    url = "https://hooks.example.com/pay"
    return exchange(
        "PUT", "/v1/webhook-endpoints/we_1", request_headers=POST,
        request_body={"url": url, "event_types": sent}, status=200,
        response_body={"id": "we_1", "url": url, "event_types": answered, "active": True,
                       "created_at": "2026-01-01T00:00:00Z"},
    )  # fmt: skip


def test_a_replaced_endpoint_that_keeps_its_old_event_types_fails_wh_005(
    validator: ExchangeValidator,
) -> None:
    kept = put_endpoint(["payment.settled"], ["payment.settled", "payment.created"])
    assert outcomes(validator, kept, "WH-005") == [Outcome.FAILED]
    assert outcomes(validator, kept, "WH-001") == [Outcome.FAILED]


def test_an_endpoint_answered_with_the_event_types_put_passes_wh_005(
    validator: ExchangeValidator,
) -> None:
    same = put_endpoint(
        ["payment.settled", "payment.created"], ["payment.created", "payment.settled"]
    )
    assert outcomes(validator, same, "WH-005") == [Outcome.PASSED]


def put_split(sent: list[dict[str, Any]], answered: list[dict[str, Any]]) -> Exchange:
    return exchange(
        "PUT", "/v1/split-template", request_headers=POST, request_body={"shares": sent},
        status=200, response_body={"shares": answered, "updated_at": "2026-01-01T00:00:00Z"},
    )  # fmt: skip


def test_an_emptied_split_template_answered_with_shares_fails_split_008(
    validator: ExchangeValidator,
) -> None:
    kept = put_split([], [{"merchant_id": "m_gamma", "bps": 1000}])
    assert outcomes(validator, kept, "SPLIT-008") == [Outcome.FAILED]
    assert outcomes(validator, put_split([], []), "SPLIT-008") == [Outcome.PASSED]


def test_split_shares_answered_as_put_pass_split_007(validator: ExchangeValidator) -> None:
    shares = [{"merchant_id": "m_gamma", "bps": 1000}]
    assert outcomes(validator, put_split(shares, shares), "SPLIT-007") == [Outcome.PASSED]
    other = [{"merchant_id": "m_gamma", "bps": 500}]
    assert outcomes(validator, put_split(shares, other), "SPLIT-007") == [Outcome.FAILED]


def accept_underpaid(accepted_raw: str) -> Exchange:
    return exchange(
        "POST", "/v1/payments/pay_1/accept-underpaid", request_headers=POST, status=200,
        response_body={"payment_id": "pay_1", "currency_id": "usdc",
                       "currency_chain_id": "usdc:base", "accepted_raw": accepted_raw,
                       "status": "settled"},
    )  # fmt: skip


def test_accept_underpaid_of_a_payment_that_received_nothing_fails_pay_state_008(
    validator: ExchangeValidator,
) -> None:
    assert outcomes(validator, accept_underpaid("0"), "PAY-STATE-008") == [Outcome.FAILED]
    assert outcomes(validator, accept_underpaid("4000000"), "PAY-STATE-008") == [Outcome.PASSED]
