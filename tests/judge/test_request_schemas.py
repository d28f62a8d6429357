"""What a request breaks of the contract's request schemas (judge/request_schemas.py): its path
parameters, query and body, with the fields and coverage tags that pin requirement ids."""

from __future__ import annotations

import json
from typing import Any

from conformance.core.contract import effective_contract
from conformance.core.profile import load_profile
from conformance.judge.findings import NOT_JSON
from conformance.judge.request_schemas import RequestSchemas
from conformance.judge.response_schemas import Problem

SCHEMAS = RequestSchemas(effective_contract(load_profile()))


def problems(
    operation_id: str, *, path: dict[str, str] | None = None, query: str = "", body: Any = None
) -> list[Problem]:
    raw = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    document = NOT_JSON
    if body is not None and not isinstance(body, bytes):
        document = body
    return SCHEMAS.problems(SCHEMAS.shape(operation_id), path or {}, query, raw, document)


def test_a_request_within_the_contract_breaks_nothing() -> None:
    assert problems("listPayments", query="limit=20&status=pending") == []
    assert problems("putWebhookEndpoint", path={"id": "we_1"}, body={
        "url": "https://example.com/hooks", "event_types": ["payment.created"],
    }) == []  # fmt: skip


def test_a_query_integer_out_of_range_or_not_an_integer() -> None:
    [above] = problems("listPayments", query="limit=101")
    assert above.fields == {"limit"} and "value_above_maximum" in above.tags
    [text] = problems("listPayments", query="limit=ten")
    assert text.where == "query.limit" and text.tags == {"incorrect_type"}
    # only the first value of a repeated parameter is read, as a recording's query is
    assert problems("listPayments", query="limit=5&limit=500") == []


def test_a_required_query_parameter_missing() -> None:
    found = problems("getStatement", query="currency_id=usdc&from=2026-01-01T00:00:00Z")
    assert [(p.where, p.tags) for p in found] == [
        ("query.to", {"object_missing_required_property"})
    ]


def test_a_path_parameter_and_a_body_that_break_their_schemas() -> None:
    found = problems("putWebhookEndpoint", path={"id": "x" * 129}, body={"url": 7})
    where = {p.where for p in found}
    assert "path.id" in where
    assert any("incorrect_type" in p.tags and "url" in p.fields for p in found)
    assert any("object_missing_required_property" in p.tags for p in found)


def test_a_body_that_is_missing_or_not_json() -> None:
    [missing] = problems("replaceSplitTemplate")
    assert missing.where == "body" and missing.tags == {"object_missing_required_property"}
    [not_json] = problems("replaceSplitTemplate", body=b"{shares")
    assert not_json.message == "is not JSON" and not_json.tags == {"incorrect_type"}


def test_an_operation_outside_the_contract_has_nothing_to_break() -> None:
    assert problems("testDepositPayment", body={"anything": 1}) == []
