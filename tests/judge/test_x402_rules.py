"""X402Rules and usage_against_payment: the x402 answer rules the family and the validator share
(the validator's use of them through AnswerChecks: tests/validator/test_answers.py)."""

from __future__ import annotations

from typing import Any

from conformance.core.profile import load_profile
from conformance.judge.payment_rules import expected_raw
from conformance.judge.x402_rules import (
    Rule,
    X402Rules,
    default_scheme,
    settle_result,
    usage_against_payment,
)

RULES = X402Rules(load_profile("default"))
NATIVE = {
    "scheme": "exact",
    "network": "ethereum",
    "asset": "native",
    "pay_to": "0x" + "2" * 40,
    "max_amount_required": "1500000000000000000",
    "resource": "https://api.example.com/x402/pay_1",
    "nonce": "0x" + "3" * 64,
    "valid_before": 1767225900,
    "extra": {
        "name": "Ether",
        "version": "1",
        "chain_id": 1,
        "verifying_contract": "0x" + "4" * 40,
    },
}


def failed(rules: list[Rule]) -> dict[str, str]:
    return {ids[0]: problem for ids, problem in rules if problem is not None}


def issued(request: dict[str, Any], *entries: dict[str, Any]) -> list[Rule]:
    return list(RULES.requirements(request.get, list(entries)))


def test_the_contract_states_exact_for_a_request_without_scheme() -> None:
    assert default_scheme() == "exact"


def test_a_raw_amount_uses_every_decimal_of_the_currency() -> None:
    assert expected_raw("1.5", 18) == 1_500_000_000_000_000_000
    assert expected_raw("1.0000001", 6) is None  # more places than the currency has: refused
    assert expected_raw("1e3", 6) is None


def test_a_native_deployment_is_issued_with_the_native_asset() -> None:
    request = {"currency_id": "eth", "chain_id": "ethereum", "amount": "1.5"}
    found = issued(request, NATIVE)
    assert failed(found) == {}
    assert {ids[0] for ids, _ in found} >= {"X402-001", "X402-003", "X402-005", "OPS-030"}
    token = failed(issued(request, {**NATIVE, "asset": "0x" + "1" * 40}))
    assert list(token) == ["X402-003"]


def test_one_entry_per_deployment_of_the_currency_on_the_chain() -> None:
    request = {"currency_id": "eth", "chain_id": "ethereum", "amount": "1.5"}
    assert failed(issued(request, NATIVE, NATIVE))["X402-001"] == "2 accepts entries, not 1"


def test_an_amount_over_the_authorised_value_accepted_fails_x402_026() -> None:
    answer = {"max_raw": "3000000", "actual_raw": "3500000"}
    found = failed(list(usage_against_payment("3.5", answer, decimals=6, authorised=3_000_000)))
    assert list(found) == ["X402-026"]


def test_a_usage_answer_shows_the_authorised_value_and_the_raw_amount() -> None:
    right = {"max_raw": "3000000", "actual_raw": "1500000"}
    assert failed(list(usage_against_payment("1.5", right, decimals=6, authorised=3_000_000))) == {}
    wrong = {"max_raw": "3750000", "actual_raw": "1"}
    problem = failed(list(usage_against_payment("1.5", wrong, decimals=6, authorised=3_000_000)))
    assert problem == {"X402-027": "max_raw '3750000', expected '3000000'; actual_raw '1', "
                       "expected '1500000'"}  # fmt: skip


def test_a_settlement_shows_success_the_tx_hash_and_its_payment() -> None:
    good = {"success": True, "tx_hash": "0x" + "a" * 64, "payment_id": "pay_1"}
    assert RULES.settlement("pay_1", good) == (("X402-012",), None)
    _, problem = RULES.settlement("pay_2", {**good, "success": False})
    assert problem == "a 2xx settlement with success False; payment_id 'pay_1', settled 'pay_2'"


def test_a_settlements_result_is_its_success_tx_hash_and_payment() -> None:
    answer = {"payment_id": "pay_1", "success": True, "tx_hash": "0x" + "a" * 64, "at": 1}
    assert settle_result(answer) == (True, "0x" + "a" * 64, "pay_1")
    assert settle_result(["not", "an", "object"]) is None


def test_a_failed_settlement_has_the_code_the_profile_pins() -> None:
    divergent = X402Rules(load_profile("divergent"))  # settle_failure: 402 payment_invalid
    assert divergent.settle_refusal(402, "payment_invalid") == (("X402-022",), None)
    assert divergent.settle_refusal(402, "invalid_signature") == (
        ("X402-022",),
        "code 'invalid_signature', expected 'payment_invalid'",
    )
    assert divergent.settle_refusal(409, "already_settled") is None  # not a settle failure


def test_a_usage_answer_echoes_the_requested_usage_id_unless_the_request_broke_its_type() -> None:
    answer = {"payment_id": "pay_1", "usage_id": "u-2", "scheme": "upto"}
    assert "X402-027" in failed(list(RULES.usage("pay_1", "u-1", answer)))
    assert "X402-027" not in failed(list(RULES.usage("pay_1", "u-2", answer)))
    # an object usage_id accepted is SHAPE-031's failure, its echo (as JSON text) no other
    stored = {**answer, "usage_id": '{"conformance": 1}'}
    assert "X402-027" not in failed(list(RULES.usage("pay_1", {"conformance": 1}, stored)))
