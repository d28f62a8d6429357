"""The OpenAPI document (the contract layer) and the effective contract of a profile.

``load_document`` reads ``payment-service.yaml``: what the specification states, with 2XX/4XX
ranges where it leaves status codes open. ``effective_contract(profile)`` pins one profile's
choices into a copy of it: exact status codes with their error codes, state enums, the limits
the specification leaves open, the replay header. Every value pinned comes from the profile;
this module only knows *where* in the document each profile key belongs.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml

from conformance.core import openapi
from conformance.core.openapi import ContractError, resolve
from conformance.core.profile import AUTH_ERROR_KINDS, Profile
from conformance.core.resources import openapi_document_path
from conformance.core.yamldata import load_yaml

IDEMPOTENCY_HEADER = "Idempotency-Key"
SUCCESS_RANGE = "2XX"
ERROR_RANGE = "4XX"

_SCHEMAS = "#/components/schemas/"

# An error case is a (profile section, key) pair naming an ErrorSpec entry of the profile.
ErrorCase = tuple[str, str]
VALIDATION: ErrorCase = ("status", "validation")
UNAUTHORIZED: ErrorCase = ("status", "unauthorized")
NOT_FOUND: ErrorCase = ("status", "not_found")
INVALID_STATE: ErrorCase = ("status", "invalid_state")
BUSINESS_RULE: ErrorCase = ("status", "business_rule")
IDEMPOTENCY_MISSING: ErrorCase = ("idempotency", "missing")
IDEMPOTENCY_CASES: tuple[ErrorCase, ...] = (
    ("idempotency", "invalid"),
    ("idempotency", "reused"),
    ("idempotency", "in_use"),
)

# The error cases specific to one operation (docs/profile.md sections 3 and 5). Cases shared
# by a class of operations (authentication, validation, idempotency, unknown path id, state
# transitions) are added by rule in ``error_cases``. The statuses and codes come from the profile.
OPERATION_ERROR_CASES: Mapping[str, tuple[ErrorCase, ...]] = {
    "putWebhookEndpoint": (BUSINESS_RULE,),
    "createPayment": (
        BUSINESS_RULE,
        ("status", "duplicate_order"),
        ("status", "amount_too_large"),
        ("payments", "empty_quotes"),
    ),
    "createSubscription": (BUSINESS_RULE,),
    "createPayoutSchedule": (BUSINESS_RULE,),
    "replacePayoutSchedule": (BUSINESS_RULE,),
    "replaceSplitTemplate": (BUSINESS_RULE,),
    "createX402Requirements": (BUSINESS_RULE,),
    "settleX402Payment": (NOT_FOUND, ("x402", "settle_failure"), ("x402", "settled_conflict")),
    "reportX402Usage": (BUSINESS_RULE, INVALID_STATE),
    "getStatement": (BUSINESS_RULE,),
}

# Resources whose profile section carries ``states`` and ``transitions``, with the schemas
# whose ``status`` property takes those states.
STATEFUL_RESOURCES: Mapping[str, tuple[str, ...]] = {
    "payments": ("Payment", "PaymentCreated"),
    "subscriptions": ("Subscription", "SubscriptionCreated"),
    "payout_schedules": ("PayoutSchedule",),
}
# The create operation of each stateful resource: its response starts in the initial state.
CREATE_OPERATIONS: Mapping[str, str] = {
    "payments": "createPayment",
    "subscriptions": "createSubscription",
    "payout_schedules": "createPayoutSchedule",
}


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    path: str
    operation_id: str
    summary: str
    tags: tuple[str, ...]
    path_parameters: tuple[str, ...]
    query_parameters: tuple[str, ...]
    required_query_parameters: tuple[str, ...]
    has_request_body: bool
    requires_idempotency_key: bool
    accepts_idempotency_key: bool
    request_schema: str | None  # a components/schemas name
    success_schema: str | None

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"


# ----------------------------------------------------------------------------- the document
@cache
def _document_bytes() -> bytes:
    path = openapi_document_path()
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ContractError(f"cannot read the OpenAPI document {path}: {exc}") from None


@cache
def _parsed_document() -> dict[str, Any]:
    try:
        loaded = load_yaml(_document_bytes())
    except yaml.YAMLError as exc:
        raise ContractError(f"the OpenAPI document is not valid YAML: {exc}") from None
    if not isinstance(loaded, dict) or "paths" not in loaded:
        raise ContractError("the OpenAPI document is not an OpenAPI mapping with paths")
    return loaded


def load_document() -> dict[str, Any]:
    """The parsed OpenAPI document; a fresh copy each call, so callers may change it."""
    return copy.deepcopy(_parsed_document())


def document_sha256() -> str:
    return hashlib.sha256(_document_bytes()).hexdigest()


def _schema_name(node: Any) -> str | None:
    """The components name a schema refers to, also through a narrowing ``allOf: [$ref, ...]``."""
    if isinstance(node, Mapping):
        if node.get("allOf"):
            return _schema_name(node["allOf"][0])
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_SCHEMAS):
            return ref[len(_SCHEMAS) :]
    return None


def _success_response(op: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    for status, response in op.get("responses", {}).items():
        if str(status).startswith("2"):
            return str(status), response
    return None


def _operation(doc: Mapping[str, Any], entry: openapi.PathOperation) -> Operation:
    op = entry.operation
    params = [resolve(doc, p) for p in op.get("parameters", [])]
    idem = [p for p in params if p["in"] == "header" and p["name"] == IDEMPOTENCY_HEADER]
    body = resolve(doc, op["requestBody"]) if "requestBody" in op else None
    request_schema = _schema_name(body["content"]["application/json"]["schema"]) if body else None
    success_schema = None
    success = _success_response(op)
    if success is not None:
        content = resolve(doc, success[1]).get("content", {}).get("application/json", {})
        success_schema = _schema_name(content.get("schema"))
    return Operation(
        method=entry.method,
        path=entry.path,
        operation_id=entry.operation_id,
        summary=op.get("summary", ""),
        tags=tuple(op.get("tags", ())),
        path_parameters=tuple(p["name"] for p in params if p["in"] == "path"),
        query_parameters=tuple(p["name"] for p in params if p["in"] == "query"),
        required_query_parameters=tuple(
            p["name"] for p in params if p["in"] == "query" and p.get("required", False)
        ),
        has_request_body=body is not None,
        requires_idempotency_key=any(p.get("required", False) for p in idem),
        accepts_idempotency_key=bool(idem),
        request_schema=request_schema,
        success_schema=success_schema,
    )


def operations(doc: Mapping[str, Any] | None = None) -> list[Operation]:
    """Every operation of ``doc`` (default: the OpenAPI document), in document order."""
    source = _parsed_document() if doc is None else doc
    return [_operation(source, entry) for entry in openapi.operations(source)]


def operation(operation_id: str, doc: Mapping[str, Any] | None = None) -> Operation:
    for candidate in operations(doc):
        if candidate.operation_id == operation_id:
            return candidate
    raise KeyError(f"no operation {operation_id!r} in the OpenAPI document")


# ----------------------------------------------------------------------- error cases
def error_cases(profile: Profile, op: Operation) -> list[ErrorCase]:
    """The profile error cases ``op`` can meet, in a stable order, without duplicates."""
    cases: list[ErrorCase] = []
    if op.has_request_body or op.query_parameters or op.path_parameters:
        cases.append(VALIDATION)
    if op.accepts_idempotency_key:
        if profile.idempotency_required(op.method, op.operation_id):
            cases.append(IDEMPOTENCY_MISSING)
        cases.extend(IDEMPOTENCY_CASES)
        if VALIDATION not in cases:
            cases.insert(0, VALIDATION)
    cases.append(UNAUTHORIZED)
    cases.extend(auth_kind_cases(profile))
    if op.path_parameters:
        cases.append(NOT_FOUND)
    if any(
        t.operation == op.operation_id
        for resource in STATEFUL_RESOURCES
        for t in profile.transitions(resource)
    ):
        cases.append(INVALID_STATE)
    cases.extend(OPERATION_ERROR_CASES.get(op.operation_id, ()))
    return [case for i, case in enumerate(cases) if case not in cases[:i]]


def auth_kind_cases(profile: Profile) -> list[ErrorCase]:
    """The ``auth.errors`` kinds answered otherwise than ``status.unauthorized``: any operation
    may meet them (none under the default profile)."""
    unauthorized = profile.error(*UNAUTHORIZED)
    return [
        ("auth", f"errors.{kind}")
        for kind in AUTH_ERROR_KINDS
        if profile.auth.errors.get(kind, unauthorized) != unauthorized
    ]


def _case_name(case: ErrorCase) -> str:
    return f"{case[0]}.{case[1]}"


def _error_response(profile: Profile, status: int, cases: list[ErrorCase]) -> dict[str, Any]:
    specs = [(case, profile.error(*case)) for case in cases]
    described = ", ".join(
        f"{_case_name(case)} ({spec.code})" if spec.code else _case_name(case)
        for case, spec in specs
    )
    codes = sorted({spec.code for _, spec in specs if spec.code})
    schema: dict[str, Any] = {"$ref": f"{_SCHEMAS}Error"}
    refinements: list[dict[str, Any]] = []
    if all(spec.code for _, spec in specs):
        refinements.append({"properties": {"code": {"enum": codes}}})
    validation = profile.error(*VALIDATION)
    if VALIDATION in cases and validation.code and profile.status.field_message_details:
        refinements.append(
            {
                "if": {"properties": {"code": {"const": validation.code}}, "required": ["code"]},
                "then": {
                    "required": ["details"],
                    "properties": {"details": {"$ref": f"{_SCHEMAS}ValidationDetails"}},
                },
            }
        )
    if refinements:
        schema = {"allOf": [schema, *refinements]}
    return {
        "description": f"Profile {profile.name}: {described}.",
        "x-profile-cases": [
            {"case": _case_name(case), **({"code": spec.code} if spec.code else {})}
            for case, spec in specs
        ],
        "content": {"application/json": {"schema": schema}},
    }


# ----------------------------------------------------------------- the effective contract
def _set_range(schema: dict[str, Any], profile: Profile, section: str, key: str) -> None:
    limits = profile.range(section, key)
    schema["minimum"] = limits.min
    schema["maximum"] = limits.max
    if limits.default is not None:
        schema["default"] = limits.default
    schema.pop("x-unspecified", None)
    schema["x-profile"] = f"{section}.{key}"


def _query_schema(doc: dict[str, Any], operation_id: str, name: str) -> dict[str, Any]:
    for param in openapi.find(doc, operation_id).operation.get("parameters", []):
        param = resolve(doc, param)
        if param["in"] == "query" and param["name"] == name:
            schema: dict[str, Any] = param["schema"]
            return schema
    raise ContractError(f"{operation_id} has no query parameter {name!r}")


def _pin_status(schema: dict[str, Any], values: list[str], note: str) -> None:
    schema["properties"]["status"] = {"type": "string", "enum": values, "x-profile": note}


def _pin_schemas(doc: dict[str, Any], profile: Profile) -> None:
    schemas = doc["components"]["schemas"]
    for resource, names in STATEFUL_RESOURCES.items():
        states = list(profile.lifecycle(resource).states)
        for name in names:
            _pin_status(schemas[name], states, f"{resource}.states")

    retired_states = [
        t.target
        for t in profile.transitions("payout_schedules")
        if t.operation == "retirePayoutSchedule"
    ]
    retired_at = schemas["PayoutSchedule"]["properties"]["retired_at"]
    if retired_states:
        retired_at["x-profile"] = f"null until the schedule is {' or '.join(retired_states)}"
        schemas["PayoutSchedule"]["allOf"] = [
            {
                "if": {"properties": {"status": {"enum": retired_states}}, "required": ["status"]},
                "then": {"properties": {"retired_at": {"type": "string", "format": "date-time"}}},
                "else": {"properties": {"retired_at": {"type": "null"}}},
            }
        ]

    webhooks = profile.webhooks
    schemas["WebhookDelivery"]["properties"]["status"] = {
        "type": "string",
        "minLength": 1,
        "maxLength": 64,
        "enum": list(webhooks.delivery_statuses),
        "x-profile": "webhooks.delivery_statuses",
    }
    schemas["WebhookDeliveryResend"]["properties"]["status"] = {
        "type": "string",
        "enum": [webhooks.resend_status],
        "x-profile": "webhooks.resend_status",
    }
    event_types = list(webhooks.event_types)
    schemas["WebhookEndpoint"]["properties"]["event_types"]["items"] = {
        "type": "string",
        "enum": event_types,
        "x-profile": "webhooks.event_types",
    }
    # An unknown event type in a request is a business-rule error (422), not a contract
    # violation (400): the request schema names the values without an enum.
    request_items = schemas["WebhookEndpointPut"]["properties"]["event_types"]["items"]
    request_items.pop("x-unspecified", None)
    request_items["x-profile-allowed"] = {
        "values": event_types,
        "otherwise": profile.error(*BUSINESS_RULE).status,
    }

    expires = schemas["PaymentCreate"]["properties"]["expires_in_secs"]
    _set_range(expires, profile, "payments", "expires_in_secs")
    interval = schemas["SubscriptionCreate"]["properties"]["interval_secs"]
    _set_range(interval, profile, "subscriptions", "interval_secs")
    _set_range(_query_schema(doc, "listPayments", "limit"), profile, "payments", "list_limit")
    _set_range(_query_schema(doc, "getStatement", "limit"), profile, "statements", "limit")

    line = schemas["StatementLine"]["properties"]
    line["direction"] = {
        "type": "string",
        "enum": list(profile.statements.directions),
        "x-profile": "statements.directions",
    }
    schemas["X402SettleResult"]["properties"]["tx_hash"] = {
        "type": "string",
        "pattern": profile.x402.tx_hash_pattern,
        "x-profile": "x402.tx_hash_pattern",
    }

    _pin_payment_payload(schemas, profile)

    key = schemas["IdempotencyKeyValue"]
    key["minLength"] = profile.idempotency.min_length
    key["maxLength"] = profile.idempotency.max_length

    if profile.status.field_message_details:
        schemas["ValidationDetails"] = {
            "description": "The fields a validation error names.",
            "type": "array",
            "items": {
                "type": "object",
                "required": ["field", "message"],
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            },
        }


def x402_payload_schemas(profile: Profile) -> dict[str, dict[str, Any]] | None:
    """The ``X402PaymentPayload`` and ``X402Authorization`` schemas the profile pins (every
    field required, with its format), or None when the profile leaves the payload open.

    Each is the specification's schema with keywords added (``required``, ``pattern``,
    ``format``), so anything valid under the pinned schema is valid under the spec's."""
    shape = profile.x402_payload
    if shape is None:
        return None
    schemas = _parsed_document()["components"]["schemas"]
    payload = copy.deepcopy(schemas["X402PaymentPayload"])
    authorization = copy.deepcopy(schemas["X402Authorization"])
    note = "x402.payment_payload"
    for schema in (payload, authorization):
        schema.pop("x-unspecified", None)
        schema["required"] = list(schema["properties"])
        schema["x-profile"] = note
    payload["properties"]["signature"]["pattern"] = shape.signature_pattern
    fields = authorization["properties"]
    for name in ("from", "to"):
        fields[name]["pattern"] = shape.address_pattern
    fields["value"]["pattern"] = shape.value_pattern
    for name in ("valid_after", "valid_before"):
        fields[name]["format"] = shape.time_format
    fields["nonce"]["pattern"] = shape.nonce_pattern
    return {"X402PaymentPayload": payload, "X402Authorization": authorization}


def _pin_payment_payload(schemas: dict[str, Any], profile: Profile) -> None:
    pinned = x402_payload_schemas(profile)
    if pinned is not None:
        schemas.update(pinned)


def _response_status_schema(
    success: dict[str, Any], schema_name: str, states: list[str], note: str
) -> None:
    """Narrow one operation's success schema to the given ``status`` values."""
    content = success["content"]["application/json"]
    content["schema"] = {
        "allOf": [
            {"$ref": f"{_SCHEMAS}{schema_name}"},
            {"properties": {"status": {"enum": states}}, "required": ["status"]},
        ],
        "x-profile": note,
    }


def _pin_operation(
    doc: dict[str, Any], profile: Profile, op: Operation, op_obj: dict[str, Any]
) -> None:
    responses: dict[str, Any] = op_obj["responses"]
    found = _success_response(op_obj)
    if found is None:
        raise ContractError(f"{op.operation_id} has no success response")
    old_status, success = found
    success = copy.deepcopy(resolve(doc, success))
    status = profile.success_status(op.operation_id)

    if op.accepts_idempotency_key:
        header = profile.idempotency.replay_header
        if header:  # "": the profile declares no replay header
            success.setdefault("headers", {})[header] = {
                "description": "Present on a replayed response (same key, same request).",
                "required": False,
                "schema": {"type": "string", "enum": ["true"]},
            }
        required = profile.idempotency_required(op.method, op.operation_id)
        wanted = "IdempotencyKey" if required else "IdempotencyKeyOptional"
        op_obj["parameters"] = [
            {"$ref": f"#/components/parameters/{wanted}"}
            if resolve(doc, p).get("name") == IDEMPOTENCY_HEADER
            and resolve(doc, p).get("in") == "header"
            else p
            for p in op_obj["parameters"]
        ]

    for resource, create_id in CREATE_OPERATIONS.items():
        if op.operation_id == create_id and op.success_schema:
            initial = profile.lifecycle(resource).initial_state
            note = f"{resource}.initial_state"
            _response_status_schema(success, op.success_schema, [initial], note)
        moves = [t for t in profile.transitions(resource) if t.operation == op.operation_id]
        if moves and op.success_schema:
            targets = list(dict.fromkeys(t.target for t in moves))
            note = f"{resource}.transitions: " + "; ".join(
                f"{'|'.join(t.sources)} -> {t.target}" for t in moves
            )
            _response_status_schema(success, op.success_schema, targets, note)

    by_status: dict[int, list[ErrorCase]] = {}
    for case in error_cases(profile, op):
        by_status.setdefault(profile.error(*case).status, []).append(case)

    pinned: dict[str, Any] = {str(status): success}
    for error_status in sorted(by_status):
        pinned[str(error_status)] = _error_response(profile, error_status, by_status[error_status])
    for key, value in responses.items():
        if key not in (old_status, ERROR_RANGE) and key not in pinned:
            pinned[key] = value
    op_obj["responses"] = pinned
    op_obj["x-profile-success-status"] = status


def _pin_issued_requirements(doc: dict[str, Any], profile: Profile) -> None:
    """Requirements the server issues follow the profile's formats. The same schema types the
    settle request, where a malformed entry is a settlement failure, so only the response of
    createX402Requirements is narrowed."""
    x402 = profile.x402
    for found in openapi.operations(doc):
        if found.operation_id != "createX402Requirements":
            continue
        for status, response in found.operation["responses"].items():
            if not status.startswith("2"):
                continue
            media = response["content"]["application/json"]
            media["schema"] = {
                "allOf": [
                    media["schema"],
                    {
                        "properties": {
                            "accepts": {
                                "items": {
                                    "properties": {
                                        "pay_to": {"pattern": x402.address_pattern},
                                        "nonce": {"pattern": x402.nonce_pattern},
                                        "network": {"enum": list(profile.chains)},
                                        "scheme": {"enum": list(x402.schemes)},
                                    }
                                }
                            }
                        }
                    },
                ],
                "x-profile": "x402.address_pattern, x402.nonce_pattern, fixtures.chains",
            }


def effective_contract(profile: Profile) -> dict[str, Any]:
    """The OpenAPI document with ``profile``'s choices pinned; still a valid OpenAPI 3.1."""
    doc = load_document()
    _pin_schemas(doc, profile)
    for entry in openapi.operations(doc):
        _pin_operation(doc, profile, _operation(doc, entry), entry.operation)
    _pin_issued_requirements(doc, profile)
    status = profile.status
    info = doc["info"]
    info["title"] = f"{info['title']} (effective contract, profile {profile.name})"
    info["description"] = (
        f"{info.get('description', '')}\nThis copy is the effective contract of profile "
        f"`{profile.name}`: exact status codes, error codes, states and limits are pinned from "
        "the profile (`x-profile` notes say which key each value comes from).\n"
    )
    info["x-profile"] = {
        "name": profile.name,
        "sha256": profile.sha256,
        "document_sha256": document_sha256(),
        "responses_of_any_path": {
            "method_not_allowed": {
                "status": status.method_not_allowed.status,
                "allow_header": status.method_not_allowed.allow_header,
            },
            "payload_too_large": {
                "status": profile.error("status", "payload_too_large").status,
                "max_body_bytes": status.max_body_bytes,
            },
            "server_errors": "none: no request, however malformed, gets a 5xx",
            "auth_before_routing": status.auth_before_routing,
        },
    }
    return doc
