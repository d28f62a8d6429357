"""The generation contract (conformance/suite/schema/generation.py).

It narrows request schemas to the profile's fixtures and never widens them: every positive case
drawn from it is valid under the effective contract, and responses are left as they are.
"""

from __future__ import annotations

from typing import Any

import hypothesis
import jsonschema
import pytest
from schemathesis.generation import GenerationMode

from conformance.core.contract import effective_contract
from conformance.core.openapi import find, inline, operations
from conformance.core.profile import load_profile
from conformance.judge.schema_requirements import requirement_operations
from conformance.suite.schema.generation import (
    ABSENT,
    GenerationRuleError,
    conjoin,
    generation_contract,
    narrow_field,
)
from conformance.suite.schema.loading import load_schemas

PROFILE = load_profile()
CONTRACT = effective_contract(PROFILE)
GENERATION = generation_contract(CONTRACT, PROFILE)
FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER


def operation(document: dict[str, Any], operation_id: str) -> dict[str, Any]:
    return find(document, operation_id).operation


def body_schema(document: dict[str, Any], operation_id: str) -> dict[str, Any]:
    body = inline(document, operation(document, operation_id)["requestBody"])
    schema: dict[str, Any] = body["content"]["application/json"]["schema"]
    return schema


def test_responses_are_those_of_the_effective_contract_without_links_into_lists() -> None:
    for narrowed_entry, original_entry in zip(
        operations(GENERATION), operations(CONTRACT), strict=True
    ):
        narrowed, original = narrowed_entry.operation, original_entry.operation
        for status, response in original["responses"].items():
            links = {
                name: link
                for name, link in (response.get("links") or {}).items()
                if "/0/" not in str(link.get("parameters"))
            }
            expected = {k: v for k, v in response.items() if k != "links"}
            assert narrowed["responses"][status] == expected | ({"links": links} if links else {})


def test_quote_keys_and_chains_come_from_the_profile_fixtures() -> None:
    quotes = body_schema(GENERATION, "createPayment")["properties"]["quotes"]
    assert quotes["propertyNames"] == {"enum": ["eth", "usdc"]}
    assert quotes["minProperties"] == 1
    eth_chains = quotes["properties"]["eth"]["properties"]["chain_ids"]
    assert {"enum": ["ethereum"]} in [
        eth_chains.get("items"),
        *[s.get("items") for s in eth_chains.get("allOf", [])],
    ]
    assert quotes["properties"]["usdc"]["required"] == ["amount"]


def test_payout_addresses_belong_to_the_calling_merchant() -> None:
    schema = body_schema(GENERATION, "createPayoutSchedule")
    address = schema.get("properties", {}).get("withdraw_address_id") or next(
        s["properties"]["withdraw_address_id"] for s in schema["allOf"] if "properties" in s
    )
    validator = jsonschema.Draft202012Validator(address)
    assert validator.is_valid("wa_alpha_base")
    assert not validator.is_valid("wa_beta_base")


def test_new_endpoints_subscribe_only_to_the_events_the_run_emits_least() -> None:
    # every later event of those types queues deliveries to an address nothing listens on
    event_types = body_schema(GENERATION, "putWebhookEndpoint")["properties"]["event_types"]
    validator = jsonschema.Draft202012Validator(event_types)
    assert validator.is_valid(["payment.expired", "subscription.canceled"])
    assert validator.is_valid([])
    assert not validator.is_valid(["payment.created"])


def test_a_cursor_is_never_generated() -> None:
    names = [p["name"] for p in operation(GENERATION, "listPayments")["parameters"]]
    assert "cursor" not in names
    assert "limit" in names


def test_conjoin_merges_disjoint_keywords_and_nests_clashing_ones() -> None:
    assert conjoin({"type": "string"}, {"enum": ["a"]}) == {"type": "string", "enum": ["a"]}
    assert conjoin({"pattern": "^a"}, {"pattern": "^ab"}) == {
        "allOf": [{"pattern": "^a"}, {"pattern": "^ab"}]
    }
    coupled = conjoin({"additionalProperties": {"type": "string"}}, {"properties": {"a": {}}})
    assert "allOf" in coupled
    assert conjoin({"type": "string"}, ABSENT) == ABSENT


def test_an_unknown_source_or_range_is_a_clear_error() -> None:
    with pytest.raises(GenerationRuleError, match="unknown source 'nope'"):
        narrow_field(PROFILE, "nope", {})
    with pytest.raises(GenerationRuleError, match=r"no range payments\.nope"):
        narrow_field(PROFILE, "range payments.nope", {})


@pytest.mark.parametrize(
    "operation_id",
    [
        "createPayment",
        "createSubscription",
        "createPayoutSchedule",
        "createX402Requirements",
        "putWebhookEndpoint",
        "replaceSplitTemplate",
    ],
)
def test_every_generated_positive_body_is_valid_under_the_contract(operation_id: str) -> None:
    schemas = load_schemas(
        CONTRACT,
        PROFILE,
        requirement_operations(),
        base_url="http://127.0.0.1:1",
        seed=9,
        max_examples=2,
        stateful_steps=4,
    )
    strategy = schemas.generation.find_operation_by_id(operation_id).as_strategy(
        generation_mode=GenerationMode.POSITIVE
    )
    validator = jsonschema.Draft202012Validator(
        body_schema(CONTRACT, operation_id), format_checker=FORMATS
    )
    bodies: list[Any] = []

    @hypothesis.settings(
        max_examples=25,
        database=None,
        deadline=None,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(strategy)
    def draw(case: Any) -> None:
        errors = list(validator.iter_errors(case.body))
        assert not errors, f"{case.body} is not valid under the contract: {errors[0].message}"
        bodies.append(case.body)

    draw()
    assert bodies
