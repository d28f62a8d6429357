"""LimitIds: a request that breaks a constraint is reported under the boundaries family's ids."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.response_schemas import Problem
from conformance.validator.checks import ExchangeValidator
from conformance.validator.exchange import Exchange
from conformance.validator.limits import LimitIds, _field
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


def test_a_field_is_found_by_its_own_name_and_location() -> None:
    assert _field("shares[0].bps") == ("body", "bps")
    assert _field("query.limit") == ("query", "limit")
    assert _field("path.id") == ("path", "id")


def test_a_problem_of_no_boundary_kind_names_no_id() -> None:
    missing = Problem("shares[0]", "'bps' is a required property", frozenset({"bps"}), frozenset())
    assert LimitIds(load_profile("default")).ids("replaceSplitTemplate", [missing]) == ()
