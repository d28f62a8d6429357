"""The hand-written OpenAPI document states what the specification states, and no more."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from openapi_spec_validator import validate
from schemathesis.core.result import Ok

from conformance.core.openapi import operations, resolve
from conformance.core.resources import openapi_document_path
from tests.openapi.support import (
    AUTH_HEADERS,
    EXPECTED_OPERATIONS,
    document,
    operation_object,
    request_schema,
    schema_nodes,
    schema_validator,
    validator,
    walk,
)

DOC = document()
SCHEMAS = DOC["components"]["schemas"]
OPERATION_IDS = [op_id for _, _, op_id in EXPECTED_OPERATIONS]


def test_openapi_spec_validator_accepts_the_document() -> None:
    validate(DOC)
    assert DOC["openapi"] == "3.1.0"


def test_schemathesis_loads_the_document_with_the_twenty_operations() -> None:
    schema = schemathesis.openapi.from_path(str(openapi_document_path()))
    found = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result
        op = result.ok()
        found.append((op.method.upper(), op.path, op.definition.raw["operationId"]))
    assert sorted(found) == sorted(EXPECTED_OPERATIONS)


def test_the_operations_are_exactly_the_twenty_of_the_specification() -> None:
    found = [(e.method, e.path, e.operation_id) for e in operations(DOC)]
    assert sorted(found) == sorted(EXPECTED_OPERATIONS)
    assert len({op_id for _, _, op_id in found}) == 20


def test_every_path_lives_under_v1() -> None:
    assert all(path.startswith("/v1/") for path in DOC["paths"])


def test_the_one_server_is_the_base_url_the_paths_are_relative_to() -> None:
    # The specification: "All paths are relative to {base_url}". A server variable says exactly
    # that, without inventing a host; the default is only where `serve` listens by default.
    assert len(DOC.get("servers", [])) == 1
    (server,) = DOC["servers"]
    assert server["url"] == "{base_url}"
    assert set(server["variables"]) == {"base_url"}
    variable = server["variables"]["base_url"]
    assert variable["default"].startswith(("http://", "https://"))
    assert "enum" not in variable and variable["description"].strip()


@pytest.mark.parametrize("operation_id", OPERATION_IDS)
def test_every_operation_has_a_tag_and_a_summary(operation_id: str) -> None:
    op = operation_object(DOC, operation_id)
    declared_tags = {tag["name"] for tag in DOC["tags"]}
    assert op["tags"] and set(op["tags"]) <= declared_tags
    assert op["summary"].strip()


def _security_headers(requirement: dict[str, list[str]]) -> set[str]:
    schemes = DOC["components"]["securitySchemes"]
    headers = set()
    for name in requirement:
        scheme = schemes[name]
        assert scheme["type"] == "apiKey" and scheme["in"] == "header"
        headers.add(scheme["name"])
    return headers


@pytest.mark.parametrize("operation_id", OPERATION_IDS)
def test_every_operation_requires_the_four_auth_headers_together(operation_id: str) -> None:
    op = operation_object(DOC, operation_id)
    requirements = op.get("security", DOC["security"])
    # One requirement object naming all four: OpenAPI ANDs the schemes of one object and ORs
    # the objects, so every alternative must carry all four headers.
    assert requirements, "an empty security list would make authentication optional"
    for requirement in requirements:
        assert _security_headers(requirement) == AUTH_HEADERS


def _idempotency_parameters(op: dict[str, Any]) -> list[dict[str, Any]]:
    params = [resolve(DOC, p) for p in op.get("parameters", [])]
    return [p for p in params if p["in"] == "header" and p["name"] == "Idempotency-Key"]


@pytest.mark.parametrize(("method", "path", "operation_id"), EXPECTED_OPERATIONS)
def test_idempotency_key_rule_holds_operation_by_operation(
    method: str, path: str, operation_id: str
) -> None:
    op = operation_object(DOC, operation_id)
    params = _idempotency_parameters(op)
    if method == "GET":
        assert params == []
    elif operation_id == "settleX402Payment":
        assert len(params) == 1 and params[0]["required"] is False
    else:
        assert len(params) == 1 and params[0]["required"] is True
    for param in params:
        assert resolve(DOC, param["schema"]) == {"type": "string", "minLength": 1, "maxLength": 128}
    # Header and path parameters are used by reference to components; only queries are inline.
    inline = [p for p in op.get("parameters", []) if "$ref" not in p]
    assert all(p["in"] == "query" for p in inline)


@pytest.mark.parametrize("operation_id", OPERATION_IDS)
def test_success_is_a_2xx_range_and_errors_a_4xx_range_of_the_one_error_shape(
    operation_id: str,
) -> None:
    responses = operation_object(DOC, operation_id)["responses"]
    assert set(responses) == {"2XX", "4XX"}, "status codes are the profile's to pin"
    assert responses["4XX"] == {"$ref": "#/components/responses/Error"}
    success = responses["2XX"]["content"]["application/json"]["schema"]
    assert success["$ref"].startswith("#/components/schemas/")


def test_the_error_shape_is_one_component_with_code_and_message_required() -> None:
    error = SCHEMAS["Error"]
    assert error["required"] == ["code", "message"]
    assert set(error["properties"]) == {"code", "message", "details"}
    assert "type" not in error["properties"]["details"], "details is not typed by the spec"
    response = DOC["components"]["responses"]["Error"]
    assert response["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }
    check = schema_validator(DOC, "Error")
    assert check.is_valid({"code": "x", "message": "y"})
    assert check.is_valid({"code": "x", "message": "y", "details": [{"field": "f"}]})
    assert not check.is_valid({"message": "y"})
    assert not check.is_valid({"code": 1, "message": "y"})


def _operations_with_body() -> list[str]:
    return [e.operation_id for e in operations(DOC) if "requestBody" in e.operation]


def test_bodies_are_exactly_where_the_specification_has_them() -> None:
    assert sorted(_operations_with_body()) == sorted(
        [
            "putWebhookEndpoint",
            "createPayment",
            "createSubscription",
            "createPayoutSchedule",
            "replacePayoutSchedule",
            "replaceSplitTemplate",
            "createX402Requirements",
            "settleX402Payment",
            "reportX402Usage",
        ]
    )


@pytest.mark.parametrize("operation_id", _operations_with_body())
def test_every_request_body_has_examples_that_satisfy_its_schema(operation_id: str) -> None:
    body = operation_object(DOC, operation_id)["requestBody"]
    assert body["required"] is True
    media = body["content"]["application/json"]
    examples = media["examples"]
    assert examples
    check = validator(DOC, media["schema"])
    for name, example in examples.items():
        errors = [e.message for e in check.iter_errors(example["value"])]
        assert errors == [], f"example {name}: {errors}"


# (schema, property) -> the constraints the specification states for it.
STATED_CONSTRAINTS: list[tuple[str, str, dict[str, Any]]] = [
    ("WebhookEndpointPut", "url", {"type": "string", "format": "uri", "maxLength": 2048}),
    ("WebhookEndpointPut", "event_types", {"type": "array", "uniqueItems": True}),
    ("WebhookEndpoint", "id", {"minLength": 1, "maxLength": 128}),
    ("WebhookEndpoint", "event_types", {"type": "array", "uniqueItems": True}),
    ("WebhookEndpoint", "created_at", {"format": "date-time"}),
    ("WebhookDelivery", "id", {"minLength": 1, "maxLength": 128}),
    ("WebhookDelivery", "status", {"minLength": 1, "maxLength": 64}),
    ("WebhookDelivery", "attempts", {"type": "integer", "format": "int32"}),
    ("PayoutScheduleCreate", "currency_id", {"minLength": 1, "maxLength": 128}),
    ("PayoutScheduleCreate", "target_chain_id", {"minLength": 1, "maxLength": 128}),
    ("PayoutScheduleCreate", "withdraw_address_id", {"minLength": 1, "maxLength": 128}),
    (
        "PayoutScheduleCreate",
        "interval_secs",
        {"type": "integer", "format": "int64", "minimum": 60, "maximum": 31536000},
    ),
    (
        "PayoutScheduleCreate",
        "min_send_amount",
        {"maxLength": 128, "pattern": "^(0|[1-9][0-9]*)(\\.[0-9]+)?$"},
    ),
    ("PayoutScheduleCreate", "mode", {"enum": ["auto_request", "notify_only"]}),
    ("PayoutScheduleCreate", "first_run_at", {"format": "date-time"}),
    ("PayoutSchedule", "currency_chain_id", {"minLength": 1, "maxLength": 128}),
    ("PayoutSchedule", "min_send_raw", {"maxLength": 78, "pattern": "^(0|[1-9][0-9]*)$"}),
    ("PayoutSchedule", "status", {"enum": ["active", "paused", "retired"]}),
    ("PayoutSchedule", "enabled", {"type": "boolean"}),
    ("PaymentCreate", "expires_in_secs", {"type": "integer", "format": "int64"}),
    ("PaymentCreate", "redirect_url", {"format": "uri"}),
    ("PaymentCreated", "checkout_url", {"format": "uri"}),
    ("Payment", "expires_at", {"format": "date-time"}),
    ("SplitEntry", "type", {"enum": ["percentage"]}),
    ("SplitEntry", "merchant_id", {"minLength": 1, "maxLength": 128}),
    ("SplitEntry", "bps", {"type": "integer", "format": "int32", "minimum": 1, "maximum": 10000}),
    ("SplitTemplateShare", "bps", {"type": "integer", "format": "int32"}),
    ("SubscriptionCreate", "interval_secs", {"type": "integer", "format": "int64"}),
    ("SubscriptionCreated", "authorize_url", {"format": "uri"}),
    ("Subscription", "next_bill_at", {"format": "date-time"}),
    ("X402RequirementsCreate", "scheme", {"enum": ["exact", "upto"], "default": "exact"}),
    (
        "X402RequirementsCreate",
        "amount",
        {"maxLength": 128, "pattern": "^(0|[1-9][0-9]*)(\\.[0-9]+)?$"},
    ),
    ("X402RequirementsCreate", "resource", {"format": "uri", "maxLength": 2048}),
    ("X402RequirementsCreate", "user_id", {"minLength": 1, "maxLength": 128}),
    ("X402PaymentRequirements", "scheme", {"enum": ["exact", "upto"]}),
    (
        "X402PaymentRequirements",
        "max_amount_required",
        {"maxLength": 78, "pattern": "^(0|[1-9][0-9]*)$"},
    ),
    ("X402PaymentRequirements", "resource", {"format": "uri"}),
    ("X402PaymentRequirements", "valid_before", {"type": "integer", "format": "int64"}),
    ("X402SettleResult", "success", {"type": "boolean"}),
    ("X402UsageReport", "evidence", {"type": "object"}),
    ("Statement", "accounting_decimals", {"type": "integer", "format": "int32"}),
    ("Statement", "window_entry_count", {"type": "integer", "format": "int64"}),
    ("Statement", "limit", {"type": "integer", "format": "int64"}),
    ("Statement", "reconciles", {"type": "boolean"}),
    ("StatementLine", "ledger_entry_id", {"type": "integer", "format": "int64"}),
    ("StatementLine", "is_split_recipient_income", {"type": "boolean"}),
    ("StatementLine", "created_at", {"format": "date-time"}),
]


@pytest.mark.parametrize(("schema", "prop", "expected"), STATED_CONSTRAINTS)
def test_stated_constraint(schema: str, prop: str, expected: dict[str, Any]) -> None:
    actual = resolve(DOC, SCHEMAS[schema]["properties"][prop])
    assert {k: actual.get(k) for k in expected} == expected


# schema -> its required fields, as the specification lists them.
STATED_REQUIRED: dict[str, set[str]] = {
    "WebhookEndpointPut": {"url", "event_types"},
    "WebhookEndpoint": {"id", "url", "event_types", "active", "created_at"},
    "WebhookEndpointSecret": {"id", "secret"},
    "WebhookDelivery": {"id", "event_type", "status", "attempts", "created_at"},
    "WebhookDeliveryResend": {"status"},
    "PayoutScheduleCreate": {
        "currency_id",
        "target_chain_id",
        "withdraw_address_id",
        "interval_secs",
        "min_send_amount",
        "mode",
    },
    "PayoutSchedule": {
        "id",
        "currency_id",
        "currency_chain_id",
        "target_chain_id",
        "withdraw_address_id",
        "interval_secs",
        "min_send_amount",
        "min_send_raw",
        "mode",
        "status",
        "enabled",
        "next_run_at",
        "created_at",
        "updated_at",
        "retired_at",
    },
    "PaymentCreate": {"quotes", "merchant_order_no"},
    "QuoteRequest": {"amount"},
    "Quote": {"amount", "code", "symbol", "name"},
    "Payment": {"id", "status", "quotes", "expires_at", "merchant_order_no"},
    "PaymentCreated": {"id", "status", "quotes", "expires_at", "merchant_order_no", "checkout_url"},
    "PaymentList": {"payments"},
    "AcceptUnderpaidResult": {
        "payment_id",
        "currency_id",
        "currency_chain_id",
        "accepted_raw",
        "status",
    },
    "SplitEntry": {"type", "merchant_id", "bps"},
    "SplitTemplateShare": {"merchant_id", "bps"},
    "SplitTemplateReplace": {"shares"},
    "SubscriptionCreate": {"currency_id", "chain_id", "amount", "interval_secs"},
    "X402RequirementsCreate": {"currency_id", "chain_id", "amount"},
    "X402Requirements": {"payment_id", "accepts"},
    "X402PaymentRequirements": {
        "scheme",
        "network",
        "asset",
        "pay_to",
        "max_amount_required",
        "resource",
        "nonce",
        "valid_before",
    },
    "X402SettleRequest": {"payment_id", "payment_payload", "payment_requirements"},
    "X402SettleResult": {"success", "tx_hash", "payment_id"},
    "X402UsageReport": {"actual_amount", "usage_id", "evidence"},
    "X402UsageResult": {"payment_id", "scheme", "max_raw", "actual_raw", "usage_id"},
    "Statement": {
        "merchant_id",
        "currency_id",
        "code",
        "symbol",
        "accounting_decimals",
        "opening_canonical",
        "closing_canonical",
        "window_entry_count",
        "limit",
        "lines",
        "reconciles",
    },
    "StatementLine": {
        "ledger_entry_id",
        "ledger_transaction_id",
        "tx_type",
        "business_type",
        "direction",
        "canonical_amount",
        "signed_canonical_amount",
        "balance_after_canonical",
        "platform_fee_canonical",
        "is_split_recipient_income",
        "created_at",
    },
    # "Which response fields are required: not shown."
    "Subscription": set(),
    "SubscriptionCreated": set(),
}


@pytest.mark.parametrize(("schema", "required"), sorted(STATED_REQUIRED.items()))
def test_required_fields_are_the_stated_ones(schema: str, required: set[str]) -> None:
    declared = SCHEMAS[schema]
    assert set(declared.get("required", [])) == required
    assert required <= set(declared["properties"])


@pytest.mark.parametrize(
    ("request_name", "response_name", "request_only", "response_only"),
    [
        (
            "PayoutScheduleCreate",
            "PayoutSchedule",
            {"first_run_at"},
            {
                "id",
                "currency_chain_id",
                "min_send_raw",
                "status",
                "enabled",
                "next_run_at",
                "created_at",
                "updated_at",
                "retired_at",
            },
        ),
        (
            "PaymentCreate",
            "PaymentCreated",
            {"user_id", "splits", "overpay_policy", "expires_in_secs", "memo", "redirect_url"},
            {"id", "status", "expires_at", "checkout_url"},
        ),
        (
            "SubscriptionCreate",
            "SubscriptionCreated",
            {"splits", "allowance_mode"},
            {"id", "status", "currency_chain_id", "next_bill_at", "authorize_url"},
        ),
        ("WebhookEndpointPut", "WebhookEndpoint", set(), {"id", "active", "created_at"}),
    ],
)
def test_request_only_and_response_only_fields_live_in_separate_schemas(
    request_name: str, response_name: str, request_only: set[str], response_only: set[str]
) -> None:
    request_fields = set(SCHEMAS[request_name]["properties"])
    response_fields = set(SCHEMAS[response_name]["properties"])
    assert request_only <= request_fields and not request_only & response_fields
    assert response_only <= response_fields and not response_only & request_fields


def test_checkout_url_and_authorize_url_appear_only_in_create_responses() -> None:
    assert "checkout_url" not in SCHEMAS["Payment"]["properties"]
    listed = schema_validator(DOC, "Payment")
    payment = {
        "id": "pay_1",
        "status": "pending",
        "quotes": {},
        "expires_at": "2026-11-22T10:00:00Z",
        "merchant_order_no": "A-1",
    }
    assert listed.is_valid(payment)
    assert not listed.is_valid({**payment, "checkout_url": "https://pay.example/c"})
    cancel = schema_validator(DOC, "Subscription")
    assert cancel.is_valid({"id": "sub_1", "status": "canceled"})
    assert not cancel.is_valid({"id": "sub_1", "authorize_url": "https://pay.example/a"})


def test_retired_at_is_null_or_a_date_time_and_records_the_choice() -> None:
    retired_at = SCHEMAS["PayoutSchedule"]["properties"]["retired_at"]
    assert "x-unspecified" in retired_at
    check = validator(DOC, retired_at)
    assert check.is_valid(None)
    assert check.is_valid("2026-11-22T03:00:00Z")
    assert not check.is_valid("")
    assert not check.is_valid("yesterday")
    assert not check.is_valid(0)


def test_quotes_is_a_map_of_quote_entries() -> None:
    check = validator(DOC, request_schema(DOC, "createPayment"))
    base = {"merchant_order_no": "order-1"}
    assert check.is_valid({**base, "quotes": {"usdc": {"amount": "1", "chain_ids": ["base"]}}})
    assert not check.is_valid({**base, "quotes": {"usdc": {"chain_ids": ["base"]}}})
    assert not check.is_valid({**base, "quotes": [{"amount": "1"}]})


def test_split_template_shares_have_no_type_and_split_entries_require_it() -> None:
    assert "type" not in SCHEMAS["SplitTemplateShare"]["properties"]
    entry = schema_validator(DOC, "SplitEntry")
    assert entry.is_valid({"type": "percentage", "merchant_id": "m_gamma", "bps": 10000})
    assert not entry.is_valid({"type": "fixed", "merchant_id": "m_gamma", "bps": 1})
    assert not entry.is_valid({"type": "percentage", "merchant_id": "m_gamma", "bps": 0})
    assert not entry.is_valid({"type": "percentage", "merchant_id": "", "bps": 1})


def test_statement_query_parameters() -> None:
    params = {p["name"]: p for p in operation_object(DOC, "getStatement")["parameters"]}
    assert {n for n, p in params.items() if p["required"]} == {"currency_id", "from", "to"}
    assert params["from"]["schema"]["format"] == params["to"]["schema"]["format"] == "date-time"
    assert params["limit"]["schema"] == {"type": "integer", "format": "int64"}
    assert not params["cursor"]["required"]


def test_list_payments_query_parameters_are_all_optional() -> None:
    params = {p["name"]: p for p in operation_object(DOC, "listPayments")["parameters"]}
    assert set(params) == {"status", "merchant_order_no", "cursor", "limit"}
    assert not any(p["required"] for p in params.values())
    assert "enum" not in params["status"]["schema"], "allowed status values are not shown"


def test_what_the_spec_leaves_open_is_noted_instead_of_invented() -> None:
    notes = [
        pointer for pointer, node in walk(DOC) if isinstance(node, dict) and "x-unspecified" in node
    ]
    # A note on each open point the document touches.
    for expected in (
        "#/info",
        "#/components/schemas/PayoutSchedule/properties/retired_at",
        "#/components/schemas/PaymentCreate/properties/expires_in_secs",
        "#/components/schemas/PaymentCreate/properties/overpay_policy",
        "#/components/schemas/WebhookEndpointPut/properties/event_types/items",
        "#/components/schemas/Subscription",
        "#/components/schemas/StatementLine",
        "#/components/schemas/SplitTemplateResult",
        "#/components/responses/Error",
    ):
        assert expected in notes
    # ... and no invented value lists where the spec says "not shown".
    assert "enum" not in SCHEMAS["PaymentCreate"]["properties"]["overpay_policy"]
    assert "enum" not in SCHEMAS["SubscriptionCreate"]["properties"]["allowance_mode"]
    assert "enum" not in SCHEMAS["Payment"]["properties"]["status"]
    assert "enum" not in SCHEMAS["StatementLine"]["properties"]["direction"]
    assert "enum" not in SCHEMAS["WebhookDelivery"]["properties"]["status"]


def test_objects_are_not_closed_because_the_spec_does_not_close_them() -> None:
    closed = [p for p, node in schema_nodes(DOC) if node.get("additionalProperties") is False]
    assert closed == []


def test_every_schema_component_is_used() -> None:
    refs = {node["$ref"] for _, node in walk(DOC) if isinstance(node, dict) and "$ref" in node}
    unused = [name for name in SCHEMAS if f"#/components/schemas/{name}" not in refs]
    assert unused == []
