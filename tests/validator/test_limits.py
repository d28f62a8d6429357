"""A recorded request that breaks a constraint is judged under the boundaries family's ids
(``judge.constraint_ids``), as the suite judges it."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.validator.checks import ExchangeValidator
from conformance.validator.exchange import Exchange
from tests.validator.samples import exchange
from tests.validator.test_admission import POST

SHARES = {"shares": [{"merchant_id": "m_gamma", "bps": 10001}]}


@pytest.fixture(scope="module")
def validator() -> ExchangeValidator:
    return ExchangeValidator(load_profile("default"))


def split_template(status: int, answer: Any) -> Exchange:
    return exchange(
        "PUT", "/v1/split-template", request_headers=POST, request_body=SHARES, status=status,
        response_body=answer,
    )  # fmt: skip


def test_a_bps_above_10000_accepted_fails_the_boundaries_ids(validator: ExchangeValidator) -> None:
    [result] = [
        r
        for r in validator.validate(split_template(200, SHARES))
        if "LIMIT-008" in r.requirement_ids
    ]
    assert result.outcome is Outcome.FAILED
    assert {"LIMIT-008", "SPLIT-006"} <= set(result.requirement_ids)


def test_the_same_request_refused_with_the_validation_error_passes_them(
    validator: ExchangeValidator,
) -> None:
    refused = {"code": "validation_error", "message": "bps", "details": []}
    results = validator.validate(split_template(400, refused))
    assert [r.outcome for r in results if "SPLIT-006" in r.requirement_ids] == [Outcome.PASSED]


PAYOUT = {
    "currency_id": "USDC", "target_chain_id": "base", "withdraw_address_id": "wa_1",
    "interval_secs": 3600, "min_send_amount": "01.5", "mode": "auto_request",
}  # fmt: skip


def test_an_amount_with_a_leading_zero_accepted_fails_the_pattern_rules_alone(
    validator: ExchangeValidator,
) -> None:
    answer = {
        **PAYOUT, "id": "ps_1", "status": "active", "currency_chain_id": "USDC:base",
        "min_send_raw": "1500000", "next_run_at": "2026-01-01T01:00:00Z", "enabled": True,
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "retired_at": None,
    }  # fmt: skip
    accepted = exchange(
        "POST", "/v1/payout-schedules", request_headers=POST, request_body=PAYOUT, status=201,
        response_body=answer,
    )  # fmt: skip
    failed = {
        rid
        for r in validator.validate(accepted)
        if r.outcome is Outcome.FAILED
        for rid in r.requirement_ids
    }
    # the pattern's ids, as the boundaries family names them: not every requirement whose text
    # names min_send_amount (LIMIT-006, OPS-022); the answer echoing the value is the same fault,
    # not a shape failure of its own (SHAPE-002, SHAPE-010)
    assert failed == {"SHAPE-040", "STATUS-006"}
