"""A settlement against the requirements issued for its payment (X402-014 to X402-020)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.profile import ErrorSpec
from conformance.core.results import Outcome
from conformance.judge.x402_settlements import (
    IssuedEntry,
    contradictions,
    settlement_findings,
)
from conformance.validator.findings import Call
from tests.validator.samples import exchange

NOW = 1_767_225_600
ENTRY = {
    "scheme": "exact",
    "pay_to": "0x" + "Ab" * 20,
    "max_amount_required": "1000",
    "nonce": "0x" + "1" * 64,
    "valid_before": NOW + 300,
}
ISSUED = [IssuedEntry.of(ENTRY)]
HONEST = {
    "to": ENTRY["pay_to"].lower(),  # an address is compared in lower case
    "value": "1000",
    "nonce": ENTRY["nonce"],
    "valid_after": NOW - 10,
    "valid_before": NOW + 300,
}
FAILURE = ErrorSpec(402, "payment_invalid")


def broken_ids(requirements: Any = ENTRY, **changes: Any) -> list[str]:
    authorization = {**HONEST, **changes}
    return [rid for rid, _ in contradictions(ISSUED, requirements, authorization, NOW)]


def test_the_honest_settlement_contradicts_nothing() -> None:
    assert broken_ids() == []


@pytest.mark.parametrize(
    ("changes", "rid"),
    [
        ({"to": "0x" + "cd" * 20}, "X402-015"),
        ({"nonce": "0x" + "2" * 64}, "X402-016"),
        ({"valid_after": NOW + 120}, "X402-017"),
        ({"valid_before": NOW - 60}, "X402-018"),
        ({"value": "999"}, "X402-019"),
    ],
)
def test_each_tampering_breaks_its_rule(changes: dict[str, Any], rid: str) -> None:
    assert broken_ids(**changes) == [rid]


def test_times_within_the_clock_margin_are_not_judged() -> None:
    assert broken_ids(valid_after=NOW + 20, valid_before=NOW - 20) == []


def test_other_requirements_break_x402_014_alone() -> None:
    assert broken_ids({**ENTRY, "max_amount_required": "500"}, value="500") == ["X402-014"]


def test_an_upto_value_may_be_below_its_maximum_not_above() -> None:
    upto = {**ENTRY, "scheme": "upto"}
    issued = [IssuedEntry.of(upto)]
    below = contradictions(issued, upto, {**HONEST, "value": "10"}, NOW)
    above = contradictions(issued, upto, {**HONEST, "value": "1001"}, NOW)
    assert below == [] and [rid for rid, _ in above] == ["X402-020"]


def answer(status: int, body: Any) -> Call:
    sent = exchange("POST", "/v1/x402/settle", status=status, response_body=body)
    return Call(sent, "settleX402Payment", {}, status, body)


BROKEN = [("X402-016", "authorization.nonce is not the issued nonce")]


def test_an_accepted_contradiction_fails() -> None:
    found = settlement_findings(
        BROKEN, answer(200, {"success": True}), FAILURE, known_valid=False, what="settle"
    )
    assert [(f.ids, f.outcome) for f in found] == [(("X402-016",), Outcome.FAILED)]


def test_the_code_of_the_failure_is_judged_only_for_a_request_known_valid() -> None:
    other_code = answer(402, {"code": "other", "message": "m"})
    lenient = settlement_findings(BROKEN, other_code, FAILURE, known_valid=False, what="settle")
    strict = settlement_findings(BROKEN, other_code, FAILURE, known_valid=True, what="settle")
    assert [f.outcome for f in lenient] == [Outcome.PASSED]
    assert [f.outcome for f in strict] == [Outcome.FAILED]
    assert "expected 402 payment_invalid, got 402 other" in strict[0].message


def test_another_refusal_is_left_unjudged_for_a_recorded_request() -> None:
    conflict = answer(409, {"code": "already_settled", "message": "m"})
    assert settlement_findings(BROKEN, conflict, FAILURE, known_valid=False, what="s") == []
    assert [
        f.outcome
        for f in settlement_findings(BROKEN, conflict, FAILURE, known_valid=True, what="s")
    ] == [Outcome.FAILED]
