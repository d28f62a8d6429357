"""The contract module: the document, its operations, and a profile's effective contract."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import jsonschema
import pytest
import schemathesis
from openapi_spec_validator import validate
from referencing import Registry
from referencing.jsonschema import DRAFT202012
from schemathesis.core.result import Ok

from conformance.core.contract import (
    document_sha256,
    effective_contract,
    error_cases,
    load_document,
    operation,
    operations,
)
from conformance.core.openapi import find, resolve
from conformance.core.profile import Profile, load_profile
from conformance.core.resources import openapi_document_path

PROFILE = load_profile()
EFFECTIVE = effective_contract(PROFILE)

CREATES = {"createPayment", "createSubscription", "createPayoutSchedule", "createX402Requirements"}
PATH_ID_OPERATIONS = {
    "putWebhookEndpoint",
    "rotateWebhookEndpointSecret",
    "resendWebhookDelivery",
    "cancelPayment",
    "acceptUnderpaidPayment",
    "cancelSubscription",
    "replacePayoutSchedule",
    "pausePayoutSchedule",
    "retirePayoutSchedule",
    "reportX402Usage",
}


def _op(doc: dict[str, Any], operation_id: str) -> dict[str, Any]:
    return find(doc, operation_id).operation


def _validator(doc: dict[str, Any], schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """Validate against ``schema`` with ``#/components/...`` resolved inside ``doc``."""
    resource = DRAFT202012.create_resource(doc)
    registry: Registry[Any] = Registry().with_resource("urn:doc", resource)

    def rebase(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: f"urn:doc{v}" if k == "$ref" and v.startswith("#") else rebase(v)
                for k, v in node.items()
            }
        return [rebase(v) for v in node] if isinstance(node, list) else node

    return jsonschema.Draft202012Validator(
        rebase(schema),
        registry=registry,
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )


def _response_schema(doc: dict[str, Any], operation_id: str, status: str) -> dict[str, Any]:
    response = resolve(doc, _op(doc, operation_id)["responses"][status])
    schema: dict[str, Any] = response["content"]["application/json"]["schema"]
    return schema


def _variant(**changes: Any) -> Profile:
    """The default profile with some keys replaced: ``_variant(status={"created": 202})``."""
    data = copy.deepcopy(PROFILE.data)
    for section, values in changes.items():
        data[section].update(values)
    return Profile(name="variant", source="<test>", sha256="0" * 64, data=data)


# ------------------------------------------------------------------------------ the document
def test_load_document_returns_an_independent_copy_each_time() -> None:
    first = load_document()
    paths = len(first["paths"])
    first["paths"].clear()
    assert paths == 18 and len(load_document()["paths"]) == paths


def test_document_sha256_is_the_hash_of_the_file() -> None:
    expected = hashlib.sha256(openapi_document_path().read_bytes()).hexdigest()
    assert document_sha256() == expected


def test_operations_lists_the_twenty_with_their_idempotency_rule() -> None:
    ops = operations()
    assert len(ops) == 20 and len({o.operation_id for o in ops}) == 20
    for op in ops:
        if op.method == "GET":
            assert not op.accepts_idempotency_key and not op.requires_idempotency_key
        elif op.operation_id == "settleX402Payment":
            assert op.accepts_idempotency_key and not op.requires_idempotency_key
        else:
            assert op.requires_idempotency_key


def test_operation_describes_parameters_bodies_and_schemas() -> None:
    statement = operation("getStatement")
    assert statement.label == "GET /v1/statements"
    assert statement.required_query_parameters == ("currency_id", "from", "to")
    assert statement.success_schema == "Statement" and not statement.has_request_body
    usage = operation("reportX402Usage")
    assert usage.path_parameters == ("payment_id",)
    assert usage.request_schema == "X402UsageReport"
    with pytest.raises(KeyError, match="nope"):
        operation("nope")


# --------------------------------------------------------------------- the effective contract
def test_effective_contract_is_valid_openapi_and_loads_in_schemathesis() -> None:
    validate(EFFECTIVE)
    loaded = schemathesis.openapi.from_dict(EFFECTIVE)
    results = list(loaded.get_all_operations())
    assert len(results) == 20
    assert all(isinstance(r, Ok) for r in results)


def test_effective_contract_records_the_profile_and_the_document() -> None:
    x_profile = EFFECTIVE["info"]["x-profile"]
    assert x_profile["name"] == PROFILE.name == "default"
    assert x_profile["sha256"] == PROFILE.sha256
    assert x_profile["document_sha256"] == document_sha256()
    anywhere = x_profile["responses_of_any_path"]
    assert anywhere["method_not_allowed"] == {"status": 405, "allow_header": True}
    assert anywhere["payload_too_large"] == {"status": 413, "max_body_bytes": 1048576}


def test_effective_contract_does_not_change_the_document() -> None:
    before = load_document()
    effective_contract(PROFILE)
    assert load_document() == before
    assert "2XX" in _op(before, "createPayment")["responses"]


@pytest.mark.parametrize("op", operations(), ids=lambda o: o.operation_id)
def test_success_status_is_the_profiles_exact_code(op: Any) -> None:
    responses = _op(EFFECTIVE, op.operation_id)["responses"]
    success = [s for s in responses if s.startswith("2")]
    assert success == [str(PROFILE.success_status(op.operation_id))]
    assert success == ["201" if op.operation_id in CREATES else "200"]
    assert "2XX" not in responses and "4XX" not in responses


@pytest.mark.parametrize("op", operations(), ids=lambda o: o.operation_id)
def test_error_statuses_follow_the_profile(op: Any) -> None:
    statuses = {s for s in _op(EFFECTIVE, op.operation_id)["responses"] if not s.startswith("2")}
    assert "401" in statuses
    assert ("404" in statuses) == (op.operation_id in PATH_ID_OPERATIONS | {"settleX402Payment"})
    if op.accepts_idempotency_key:
        assert {"400", "409", "422"} <= statuses
    assert not any(s.startswith("5") for s in statuses)


def test_get_operations_document_only_the_errors_they_can_meet() -> None:
    def statuses(operation_id: str) -> list[str]:
        return list(_op(EFFECTIVE, operation_id)["responses"])

    assert statuses("listWebhookEndpoints") == ["200", "401"]
    assert statuses("listWebhookDeliveries") == ["200", "401"]
    assert statuses("listPayments") == ["200", "400", "401"]
    assert statuses("getStatement") == ["200", "400", "401", "422"]


def test_error_responses_name_their_codes_and_keep_the_error_shape() -> None:
    schema = _response_schema(EFFECTIVE, "cancelPayment", "409")
    check = _validator(EFFECTIVE, schema)
    assert check.is_valid({"code": "invalid_state", "message": "payment is settled"})
    assert check.is_valid({"code": "idempotency_key_in_use", "message": "busy"})
    assert not check.is_valid({"code": "conflict", "message": "x"})
    assert not check.is_valid({"code": "invalid_state"})
    unauthorized = _validator(EFFECTIVE, _response_schema(EFFECTIVE, "listPayments", "401"))
    assert unauthorized.is_valid({"code": "unauthorized", "message": "bad signature"})
    assert not unauthorized.is_valid({"code": "forbidden", "message": "x"})


def test_a_business_rule_error_without_a_pinned_code_accepts_any_code() -> None:
    check = _validator(EFFECTIVE, _response_schema(EFFECTIVE, "createPayment", "422"))
    assert check.is_valid({"code": "unknown_currency", "message": "no such currency"})
    assert not check.is_valid({"message": "no code"})


def test_validation_errors_carry_field_message_details() -> None:
    check = _validator(EFFECTIVE, _response_schema(EFFECTIVE, "createPayment", "400"))
    details = [{"field": "quotes", "message": "required"}]
    assert check.is_valid({"code": "validation_error", "message": "bad", "details": details})
    assert not check.is_valid({"code": "validation_error", "message": "bad"})
    assert not check.is_valid(
        {"code": "validation_error", "message": "bad", "details": [{"field": "quotes"}]}
    )
    assert check.is_valid({"code": "idempotency_key_missing", "message": "send one"})


def test_idempotency_cases_follow_the_key_rule() -> None:
    cases = {op.operation_id: error_cases(PROFILE, op) for op in operations()}
    assert ("idempotency", "missing") in cases["createPayment"]
    assert ("idempotency", "missing") not in cases["settleX402Payment"]
    assert ("idempotency", "invalid") in cases["settleX402Payment"]
    assert not any(c[0] == "idempotency" for c in cases["listPayments"])


def test_replay_header_is_documented_on_every_operation_that_takes_a_key() -> None:
    for op in operations():
        success = _op(EFFECTIVE, op.operation_id)["responses"][
            str(PROFILE.success_status(op.operation_id))
        ]
        headers = success.get("headers", {})
        assert ("Idempotent-Replayed" in headers) == op.accepts_idempotency_key
        if op.accepts_idempotency_key:
            assert headers["Idempotent-Replayed"]["schema"]["enum"] == ["true"]


def test_states_are_pinned_from_the_profile() -> None:
    schemas = EFFECTIVE["components"]["schemas"]
    assert schemas["Payment"]["properties"]["status"]["enum"] == PROFILE.data["payments"]["states"]
    assert schemas["Subscription"]["properties"]["status"]["enum"] == [
        "pending_authorization",
        "canceled",
    ]
    assert schemas["PayoutSchedule"]["properties"]["status"]["enum"] == [
        "active",
        "paused",
        "retired",
    ]
    assert schemas["WebhookDelivery"]["properties"]["status"]["enum"] == [
        "pending",
        "succeeded",
        "failed",
    ]
    assert schemas["WebhookDelivery"]["properties"]["status"]["maxLength"] == 64
    assert schemas["StatementLine"]["properties"]["direction"]["enum"] == ["credit", "debit"]


@pytest.mark.parametrize(
    ("operation_id", "status", "accepted", "rejected"),
    [
        ("createPayment", "201", "pending", "settled"),
        ("cancelPayment", "200", "canceled", "pending"),
        ("acceptUnderpaidPayment", "200", "settled", "underpaid"),
        ("createSubscription", "201", "pending_authorization", "canceled"),
        ("cancelSubscription", "200", "canceled", "pending_authorization"),
        ("createPayoutSchedule", "201", "active", "paused"),
        ("replacePayoutSchedule", "200", "active", "retired"),
        ("pausePayoutSchedule", "200", "paused", "active"),
        ("retirePayoutSchedule", "200", "retired", "paused"),
    ],
)
def test_each_state_changing_operation_answers_with_its_target_state(
    operation_id: str, status: str, accepted: str, rejected: str
) -> None:
    schema = _response_schema(EFFECTIVE, operation_id, status)
    assert schema["allOf"][1]["properties"]["status"]["enum"] == [accepted]
    status_only = _validator(EFFECTIVE, schema["allOf"][1])
    assert status_only.is_valid({"status": accepted})
    assert not status_only.is_valid({"status": rejected})
    assert not status_only.is_valid({})


def test_retired_at_is_null_exactly_until_the_schedule_is_retired() -> None:
    check = _validator(EFFECTIVE, {"$ref": "#/components/schemas/PayoutSchedule"})
    schedule = {
        "id": "ps_1",
        "currency_id": "usdc",
        "currency_chain_id": "usdc:base",
        "target_chain_id": "base",
        "withdraw_address_id": "wa_alpha_base",
        "interval_secs": 86400,
        "min_send_amount": "100",
        "min_send_raw": "100000000",
        "mode": "auto_request",
        "status": "active",
        "enabled": True,
        "next_run_at": "2026-11-23T03:00:00Z",
        "created_at": "2026-11-22T03:00:00Z",
        "updated_at": "2026-11-22T03:00:00Z",
        "retired_at": None,
    }
    assert check.is_valid(schedule)
    assert not check.is_valid({**schedule, "retired_at": "2026-11-22T04:00:00Z"})
    retired = {**schedule, "status": "retired", "enabled": False}
    assert check.is_valid({**retired, "retired_at": "2026-11-22T04:00:00Z"})
    assert not check.is_valid(retired)
    assert not check.is_valid({**schedule, "status": "archived"})


def test_limits_the_spec_leaves_open_come_from_the_profile() -> None:
    def query_limit(operation_id: str) -> dict[str, Any]:
        params = {p["name"]: p for p in _op(EFFECTIVE, operation_id)["parameters"] if "name" in p}
        schema: dict[str, Any] = params["limit"]["schema"]
        return schema

    assert (query_limit("listPayments")["minimum"], query_limit("listPayments")["maximum"]) == (
        1,
        100,
    )
    assert query_limit("listPayments")["default"] == 20
    assert (query_limit("getStatement")["minimum"], query_limit("getStatement")["maximum"]) == (
        1,
        1000,
    )
    schemas = EFFECTIVE["components"]["schemas"]
    expires = schemas["PaymentCreate"]["properties"]["expires_in_secs"]
    assert (expires["minimum"], expires["maximum"], expires["default"]) == (60, 86400, 3600)
    interval = schemas["SubscriptionCreate"]["properties"]["interval_secs"]
    assert (interval["minimum"], interval["maximum"]) == (60, 31536000)


def test_event_types_are_an_enum_in_responses_and_a_business_rule_in_requests() -> None:
    schemas = EFFECTIVE["components"]["schemas"]
    events = PROFILE.data["webhooks"]["event_types"]
    assert schemas["WebhookEndpoint"]["properties"]["event_types"]["items"]["enum"] == events
    request_items = schemas["WebhookEndpointPut"]["properties"]["event_types"]["items"]
    assert "enum" not in request_items, "the profile answers 422 (not 400) for other types"
    assert request_items["x-profile-allowed"] == {"values": events, "otherwise": 422}


def test_tx_hash_follows_the_profile_pattern() -> None:
    check = _validator(EFFECTIVE, {"$ref": "#/components/schemas/X402SettleResult"})
    good = {"success": True, "tx_hash": "0x" + "ab" * 32, "payment_id": "pay_1"}
    assert check.is_valid(good)
    assert not check.is_valid({**good, "tx_hash": "0xZZ"})


# ------------------------------------------------------------- data-driven, not hard-coded
def test_another_profile_pins_its_own_choices() -> None:
    variant = _variant(
        status={"created": 202, "not_found": {"status": 410, "code": "gone"}},
        payments={
            "states": ["open", "closed", "paid", "short"],
            "initial_state": "open",
            "list_limit": {"min": 5, "max": 50, "default": 10},
            "transitions": [{"operation": "cancelPayment", "from": ["open"], "to": "closed"}],
        },
        webhooks={"event_types": ["payment.created"], "delivery_statuses": ["queued", "done"]},
        idempotency={"replay_header": "X-Replayed"},
    )
    doc = effective_contract(variant)
    validate(doc)
    assert doc["info"]["x-profile"]["name"] == "variant"
    create = _op(doc, "createPayment")["responses"]
    assert "202" in create and "201" not in create
    assert "X-Replayed" in create["202"]["headers"]
    assert create["202"]["content"]["application/json"]["schema"]["allOf"][1]["properties"][
        "status"
    ]["enum"] == ["open"]
    cancel = _op(doc, "cancelPayment")["responses"]
    assert "410" in cancel and "404" not in cancel
    assert cancel["410"]["x-profile-cases"] == [{"case": "status.not_found", "code": "gone"}]
    schemas = doc["components"]["schemas"]
    assert schemas["Payment"]["properties"]["status"]["enum"] == ["open", "closed", "paid", "short"]
    assert schemas["WebhookDelivery"]["properties"]["status"]["enum"] == ["queued", "done"]
    limit = next(p for p in _op(doc, "listPayments")["parameters"] if p.get("name") == "limit")
    assert (limit["schema"]["minimum"], limit["schema"]["maximum"]) == (5, 50)
    # acceptUnderpaidPayment has no transition in this profile: no state conflict documented.
    accept = _op(doc, "acceptUnderpaidPayment")["responses"]
    assert [c["case"] for c in accept["409"]["x-profile-cases"]] == ["idempotency.in_use"]


def test_an_operation_with_several_transitions_answers_with_any_of_their_targets() -> None:
    variant = _variant(
        payout_schedules={
            "transitions": [
                {"operation": "pausePayoutSchedule", "from": ["active"], "to": "paused"},
                {"operation": "pausePayoutSchedule", "from": ["retired"], "to": "retired"},
            ]
        }
    )
    schema = _response_schema(effective_contract(variant), "pausePayoutSchedule", "200")
    assert schema["allOf"][1]["properties"]["status"]["enum"] == ["paused", "retired"]
    assert "active -> paused; retired -> retired" in schema["x-profile"]


def test_operations_of_the_effective_contract_keep_their_schema_names() -> None:
    base = {op.operation_id: op for op in operations()}
    pinned = {op.operation_id: op for op in operations(EFFECTIVE)}
    assert set(base) == set(pinned)
    for operation_id, op in pinned.items():
        assert op.success_schema == base[operation_id].success_schema, operation_id
        assert op.requires_idempotency_key == base[operation_id].requires_idempotency_key
    assert pinned["createX402Requirements"].success_schema == "X402Requirements"
