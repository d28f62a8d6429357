"""The coverage gate names each thing without a check (conformance/core/coverage_gate.py)."""

from __future__ import annotations

import copy
from typing import Any

from conformance.core.case_coverage import CaseKey
from conformance.core.catalogue import load_catalogue
from conformance.core.contract import effective_contract
from conformance.core.coverage_gate import Gap, case_gaps, gaps
from conformance.core.profile import load_profile

CATALOGUE = load_catalogue()
CONTRACT = effective_contract(load_profile())
EVERY_ID = {r.id for r in CATALOGUE.requirements}


def operation(contract: dict[str, Any], operation_id: str) -> dict[str, Any]:
    for item in contract["paths"].values():
        for value in item.values():
            if isinstance(value, dict) and value.get("operationId") == operation_id:
                return value
    raise KeyError(operation_id)


def test_with_every_requirement_checked_there_is_no_gap() -> None:
    assert gaps(CATALOGUE, CONTRACT, EVERY_ID) == []


def test_a_requirement_without_a_check_is_named() -> None:
    assert gaps(CATALOGUE, CONTRACT, EVERY_ID - {"AUTH-016"}) == [
        Gap("requirement", "requirement AUTH-016")
    ]


def test_a_status_no_checked_requirement_states_is_named() -> None:
    contract = copy.deepcopy(CONTRACT)
    operation(contract, "cancelPayment")["responses"]["418"] = {"description": "a teapot"}
    assert [str(g) for g in gaps(CATALOGUE, contract, EVERY_ID)] == [
        "operation cancelPayment status 418 has no check"
    ]


def test_a_new_required_field_no_checked_requirement_names_is_named() -> None:
    contract = copy.deepcopy(CONTRACT)
    body = operation(contract, "createPayment")["requestBody"]
    schema = body["content"]["application/json"]["schema"]
    schema = {"allOf": [schema, {"required": ["loyalty_tier"]}]}
    body["content"]["application/json"]["schema"] = schema
    assert [str(g) for g in gaps(CATALOGUE, contract, EVERY_ID)] == [
        "operation createPayment request body required field loyalty_tier has no check"
    ]


def test_a_new_operation_is_named_with_its_statuses() -> None:
    contract = copy.deepcopy(CONTRACT)
    contract["paths"]["/v1/refunds"] = {
        "post": {"operationId": "createRefund", "responses": {"201": {"description": "made"}}}
    }
    assert [str(g) for g in gaps(CATALOGUE, contract, EVERY_ID)] == [
        "operation createRefund has no check",
        "operation createRefund status 201 has no check",
    ]


def test_losing_every_check_of_the_requirements_that_state_a_status_names_it() -> None:
    stating = {
        r.id
        for r in CATALOGUE.requirements
        if "pausePayoutSchedule" in r.operations and "409" in r.text
    }
    assert stating  # the catalogue states when a pause is refused with 409
    found = [str(g) for g in gaps(CATALOGUE, CONTRACT, EVERY_ID - stating)]
    assert "operation pausePayoutSchedule status 409 has no check" in found


# ------------------------------------------------------------------ constraint cases
SCHEDULE_AMOUNT = [
    CaseKey("createPayoutSchedule", "body.min_send_amount", "pattern", near_miss)
    for near_miss in ("leading-zero", "trailing-dot", "newline")
]


def test_a_default_run_that_sent_every_class_has_no_case_gap() -> None:
    assert case_gaps(SCHEDULE_AMOUNT, SCHEDULE_AMOUNT) == []


def test_a_class_without_a_case_is_named_with_its_operation_and_field() -> None:
    sent = [k for k in SCHEDULE_AMOUNT if k.near_miss != "trailing-dot"]
    assert [str(g) for g in case_gaps(SCHEDULE_AMOUNT, sent)] == [
        "createPayoutSchedule body.min_send_amount: no trailing-dot case (pattern)"
    ]


def test_a_quick_run_needs_one_case_per_constraint_not_per_class() -> None:
    one = SCHEDULE_AMOUNT[:1]
    assert case_gaps(SCHEDULE_AMOUNT, one, sampled=True) == []
    assert [str(g) for g in case_gaps(SCHEDULE_AMOUNT, [], sampled=True)] == [
        "createPayoutSchedule body.min_send_amount: no case (pattern)"
    ]
