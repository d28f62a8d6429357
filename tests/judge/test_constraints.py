"""The constraints of the contract's requests (conformance/judge/constraints.py)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.contract import effective_contract, load_document
from conformance.core.profile import load_profile
from conformance.judge.constraints import (
    FieldRef,
    iter_constraints,
    profile_key,
    satisfies,
)
from conformance.suite.selection import SKIPPED_HEADERS

DECIMAL = "^(0|[1-9][0-9]*)(\\.[0-9]+)?$"
RAW = "^(0|[1-9][0-9]*)$"


@pytest.fixture(scope="module")
def contract() -> dict[str, Any]:
    return effective_contract(load_profile())


def test_satisfies_checks_the_varied_keywords() -> None:
    schema = {"type": "string", "maxLength": 3, "pattern": RAW}
    assert satisfies(schema, "100")
    assert not satisfies(schema, "1000")
    assert satisfies(schema, "1000", ignore=frozenset({"maxLength"}))
    assert not satisfies(schema, 100)


# ------------------------------------------------------------------ the contract's constraints
def test_constraints_come_from_every_request_part_of_the_contract(contract: dict[str, Any]) -> None:
    found = {
        (c.operation_id, str(c.field), c.kind, c.value)
        for op in ("createPayoutSchedule", "putWebhookEndpoint", "listPayments", "createPayment")
        for c in iter_constraints(contract, op, skip_headers=SKIPPED_HEADERS)
    }
    assert ("createPayoutSchedule", "body.interval_secs", "minimum", 60) in found
    assert ("createPayoutSchedule", "body.interval_secs", "maximum", 31536000) in found
    assert ("createPayoutSchedule", "body.min_send_amount", "pattern", DECIMAL) in found
    assert ("createPayoutSchedule", "body.mode", "enum", ("auto_request", "notify_only")) in found
    assert ("putWebhookEndpoint", "path.id", "maxLength", 128) in found
    assert ("putWebhookEndpoint", "body.url", "maxLength", 2048) in found
    assert ("putWebhookEndpoint", "body.event_types", "uniqueItems", True) in found
    assert ("listPayments", "query.limit", "maximum", 100) in found
    assert ("createPayment", "body.splits.[].bps", "maximum", 10000) in found


def test_profile_pinned_limits_are_profile_layer(contract: dict[str, Any]) -> None:
    limits = [
        c
        for c in iter_constraints(contract, "listPayments")
        if str(c.field) == "query.limit" and c.kind in ("minimum", "maximum")
    ]
    assert {c.layer for c in limits} == {"profile"}
    assert {profile_key(c) for c in limits} == {"payments.list_limit"}
    interval = [
        c for c in iter_constraints(contract, "createPayoutSchedule") if c.kind == "maximum"
    ]
    assert [c.layer for c in interval] == ["contract"]


def test_the_plain_document_has_no_profile_limits() -> None:
    limit = FieldRef("query", ("limit",))
    kinds = {c.kind for c in iter_constraints(load_document(), "listPayments") if c.field == limit}
    assert kinds == {"type", "integer", "encoding"}  # no minimum or maximum: the profile's


def test_every_field_has_its_type_and_every_required_field_its_presence(
    contract: dict[str, Any],
) -> None:
    found = {(str(c.field), c.kind) for c in iter_constraints(contract, "createPayoutSchedule")}
    assert ("body", "type") in found  # the body itself must be an object
    assert ("body.min_send_amount", "type") in found
    assert ("body.min_send_amount", "required") in found
    assert ("body.first_run_at", "type") in found
    assert ("body.first_run_at", "required") not in found  # optional


def test_query_and_path_parameters_have_their_encoding_and_cursors_their_issuer(
    contract: dict[str, Any],
) -> None:
    listing = {(str(c.field), c.kind, c.layer) for c in iter_constraints(contract, "listPayments")}
    assert ("query.cursor", "encoding", "contract") in listing
    assert ("query.cursor", "cursor", "profile") in listing
    assert ("query.status", "required", "contract") not in listing
    statement = {(str(c.field), c.kind) for c in iter_constraints(contract, "getStatement")}
    assert {("query.from", "required"), ("query.currency_id", "required")} <= statement
    cancel = {(str(c.field), c.kind) for c in iter_constraints(contract, "cancelPayment")}
    assert ("path.id", "encoding") in cancel
    assert ("path.id", "required") not in cancel  # leaving it out changes the route


def test_amounts_carry_the_decimal_places_pin(contract: dict[str, Any]) -> None:
    pinned = {
        (c.operation_id, str(c.field), c.layer)
        for op in ("createPayment", "createPayoutSchedule", "createX402Requirements")
        for c in iter_constraints(contract, op)
        if c.kind == "decimals"
    }
    assert pinned == {
        ("createPayment", "body.quotes.{}.amount", "profile"),
        ("createPayoutSchedule", "body.min_send_amount", "profile"),
        ("createX402Requirements", "body.amount", "profile"),
    }


def test_other_families_headers_can_be_left_out(contract: dict[str, Any]) -> None:
    everything = list(iter_constraints(contract, "createPayment"))
    assert any(c.field.location == "header" for c in everything)
    kept = list(iter_constraints(contract, "createPayment", skip_headers=SKIPPED_HEADERS))
    assert not any(c.field.location == "header" for c in kept)
