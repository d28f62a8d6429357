"""Helpers shared by the OpenAPI document tests: the document, walking it, validating with it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import jsonschema
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from conformance.core.contract import load_document
from conformance.core.openapi import find, resolve

# The 20 operations of COMMON.md: (method, path, operationId).
EXPECTED_OPERATIONS = [
    ("GET", "/v1/webhook-endpoints", "listWebhookEndpoints"),
    ("PUT", "/v1/webhook-endpoints/{id}", "putWebhookEndpoint"),
    ("POST", "/v1/webhook-endpoints/{id}/rotate-secret", "rotateWebhookEndpointSecret"),
    ("GET", "/v1/webhook-deliveries", "listWebhookDeliveries"),
    ("POST", "/v1/webhook-deliveries/{id}/resend", "resendWebhookDelivery"),
    ("POST", "/v1/payments", "createPayment"),
    ("GET", "/v1/payments", "listPayments"),
    ("POST", "/v1/payments/{id}/cancel", "cancelPayment"),
    ("POST", "/v1/payments/{id}/accept-underpaid", "acceptUnderpaidPayment"),
    ("POST", "/v1/subscriptions", "createSubscription"),
    ("POST", "/v1/subscriptions/{id}/cancel", "cancelSubscription"),
    ("POST", "/v1/payout-schedules", "createPayoutSchedule"),
    ("PUT", "/v1/payout-schedules/{id}", "replacePayoutSchedule"),
    ("POST", "/v1/payout-schedules/{id}/pause", "pausePayoutSchedule"),
    ("DELETE", "/v1/payout-schedules/{id}", "retirePayoutSchedule"),
    ("PUT", "/v1/split-template", "replaceSplitTemplate"),
    ("POST", "/v1/x402/requirements", "createX402Requirements"),
    ("POST", "/v1/x402/settle", "settleX402Payment"),
    ("POST", "/v1/x402/{payment_id}/usage", "reportX402Usage"),
    ("GET", "/v1/statements", "getStatement"),
]

AUTH_HEADERS = {"X-Api-Key", "X-Signature", "X-Timestamp", "X-Nonce"}


def document() -> dict[str, Any]:
    return load_document()


def operation_object(doc: dict[str, Any], operation_id: str) -> dict[str, Any]:
    return find(doc, operation_id).operation


def walk(node: Any, path: str = "#") -> Iterator[tuple[str, Any]]:
    """Every (JSON pointer, node) of a parsed document, depth first."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk(value, f"{path}/{index}")


def schema_nodes(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The schema objects of the components section (and everything nested in them)."""
    for pointer, node in walk(doc["components"]["schemas"], "#/components/schemas"):
        if isinstance(node, dict):
            yield pointer, node


def ecma_fullmatch(pattern: str, text: str) -> bool:
    """An anchored ``^body$`` pattern with ECMA-262 meaning: ``$`` is the end of the string."""
    assert pattern.startswith("^") and pattern.endswith("$"), pattern
    return re.fullmatch(pattern[1:-1], text, re.ASCII) is not None


def _ecma_pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if isinstance(instance, str) and not ecma_fullmatch(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


# Draft 2020-12 with ECMA pattern semantics (jsonschema uses Python's re.search, whose ``$``
# also matches before a trailing newline).
EcmaValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"pattern": _ecma_pattern}
)


def validator(doc: dict[str, Any], schema: dict[str, Any], *, ecma: bool = True) -> Any:
    """A validator for ``schema`` whose ``#/components/...`` references resolve in ``doc``."""
    registry: Registry[Any] = Registry().with_resource(
        "urn:payment-service", DRAFT202012.create_resource(doc)
    )
    cls = EcmaValidator if ecma else jsonschema.Draft202012Validator
    return cls(
        _rebase(schema),
        registry=registry,
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )


def _rebase(node: Any) -> Any:
    """Point local ``#/...`` references at the registered document."""
    if isinstance(node, dict):
        return {
            k: (f"urn:payment-service{v}" if k == "$ref" and v.startswith("#/") else _rebase(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_rebase(v) for v in node]
    return node


def schema_validator(doc: dict[str, Any], name: str, *, ecma: bool = True) -> Any:
    return validator(doc, {"$ref": f"#/components/schemas/{name}"}, ecma=ecma)


def request_schema(doc: dict[str, Any], operation_id: str) -> dict[str, Any]:
    body = resolve(doc, operation_object(doc, operation_id)["requestBody"])
    schema: dict[str, Any] = body["content"]["application/json"]["schema"]
    return schema
