"""OpenAPI links wire the flows, every link names a real operation, every $ref resolves.

openapi-spec-validator does not check a link's ``operationId``; schemathesis fails on a bad one
when it builds its state machine. These tests check both, and that every runtime expression
points at a field the source response schema has and every target parameter exists.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis

from conformance.core.contract import effective_contract
from conformance.core.openapi import ContractError, operations, resolve
from conformance.core.profile import load_profile
from tests.openapi.support import document, operation_object, walk

DOC = document()
EFFECTIVE = effective_contract(load_profile())

# (source operation, link name, target operation): the flows of the specification.
EXPECTED_LINKS = [
    ("createPayment", "CancelPayment", "cancelPayment"),
    ("createPayment", "AcceptUnderpaidPayment", "acceptUnderpaidPayment"),
    ("createSubscription", "CancelSubscription", "cancelSubscription"),
    ("createPayoutSchedule", "ReplacePayoutSchedule", "replacePayoutSchedule"),
    ("createPayoutSchedule", "PausePayoutSchedule", "pausePayoutSchedule"),
    ("createPayoutSchedule", "RetirePayoutSchedule", "retirePayoutSchedule"),
    ("putWebhookEndpoint", "RotateSecret", "rotateWebhookEndpointSecret"),
    ("listWebhookDeliveries", "ResendFirstDelivery", "resendWebhookDelivery"),
    ("createX402Requirements", "SettleX402Payment", "settleX402Payment"),
    ("createX402Requirements", "ReportX402Usage", "reportX402Usage"),
]


def _links(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(source operationId, link name, link, source response) for every link of ``doc``."""
    found = []
    for entry in operations(doc):
        for response in entry.operation["responses"].values():
            response = resolve(doc, response)
            for name, link in response.get("links", {}).items():
                found.append((entry.operation_id, name, resolve(doc, link), response))
    return found


def _schema_at(doc: dict[str, Any], schema: dict[str, Any], pointer: str) -> dict[str, Any]:
    """The sub-schema a JSON pointer into an instance of ``schema`` lands on."""
    node = resolve(doc, schema)
    for token in [t for t in pointer.split("/") if t]:
        if "allOf" in node:
            node = resolve(doc, node["allOf"][0])
        if token.isdigit():
            assert node.get("type") == "array", f"{pointer}: {token} indexes a non-array"
            node = resolve(doc, node["items"])
        else:
            assert token in node.get("properties", {}), f"{pointer}: no property {token}"
            node = resolve(doc, node["properties"][token])
    assert isinstance(node, dict)
    return node


def _body_expression(expression: str) -> str:
    assert expression.startswith("$response.body#"), expression
    return expression[len("$response.body#") :]


@pytest.mark.parametrize("doc", [DOC, EFFECTIVE], ids=["document", "effective"])
def test_the_flows_are_wired(doc: dict[str, Any]) -> None:
    found = sorted((src, name, link["operationId"]) for src, name, link, _ in _links(doc))
    assert found == sorted(EXPECTED_LINKS)


@pytest.mark.parametrize("doc", [DOC, EFFECTIVE], ids=["document", "effective"])
def test_every_link_targets_an_existing_operation_and_parameter(doc: dict[str, Any]) -> None:
    operation_ids = {entry.operation_id for entry in operations(doc)}
    for source, name, link, response in _links(doc):
        assert "operationRef" not in link
        assert link["operationId"] in operation_ids, f"{source}.{name}"
        target = operation_object(doc, link["operationId"])
        source_schema = response["content"]["application/json"]["schema"]
        target_params = {
            f"{p['in']}.{p['name']}" for p in (resolve(doc, q) for q in target["parameters"])
        }
        for param, expression in link.get("parameters", {}).items():
            assert param in target_params, f"{source}.{name}: {param}"
            value = _schema_at(doc, source_schema, _body_expression(expression))
            assert value.get("type") == "string", f"{source}.{name}: {expression}"
        if "requestBody" in link:
            body = resolve(doc, target["requestBody"])["content"]["application/json"]["schema"]
            for field, expression in link["requestBody"].items():
                _schema_at(doc, body, field)
                _schema_at(doc, source_schema, _body_expression(expression))


def test_a_link_to_a_missing_operation_would_be_caught() -> None:
    broken = document()
    links = operation_object(broken, "createPayment")["responses"]["2XX"]["links"]
    links["CancelPayment"]["operationId"] = "cancelPaymnet"
    operation_ids = {entry.operation_id for entry in operations(broken)}
    assert any(link["operationId"] not in operation_ids for _, _, link, _ in _links(broken))
    with pytest.raises(Exception, match="cancelPaymnet"):
        schemathesis.openapi.from_dict(broken).as_state_machine()


@pytest.mark.parametrize("doc", [DOC, EFFECTIVE], ids=["document", "effective"])
def test_schemathesis_state_machine_carries_every_link(doc: dict[str, Any]) -> None:
    machine = schemathesis.openapi.from_dict(doc).as_state_machine()
    rules = [name for name in dir(machine) if "__" in name and not name.startswith("_")]
    for _, link_name, _ in EXPECTED_LINKS:
        assert any(f"_{link_name}__" in rule for rule in rules), link_name


@pytest.mark.parametrize("doc", [DOC, EFFECTIVE], ids=["document", "effective"])
def test_every_ref_resolves(doc: dict[str, Any]) -> None:
    refs = [node["$ref"] for _, node in walk(doc) if isinstance(node, dict) and "$ref" in node]
    assert len(refs) > 50
    for ref in refs:
        assert ref.startswith("#/components/"), ref
        resolve(doc, {"$ref": ref})


def test_a_dangling_ref_is_reported() -> None:
    with pytest.raises(ContractError, match="Nope"):
        resolve(DOC, {"$ref": "#/components/schemas/Nope"})
