"""Constraint derivation and boundary cases (conformance/suite/boundaries/), without a server."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.catalogue import Layer, load_catalogue
from conformance.core.contract import effective_contract, load_document
from conformance.core.formats import conforms
from conformance.core.patterns import ecma_search as pattern_matches
from conformance.core.profile import load_profile
from conformance.suite.boundaries.constraints import (
    ARRAY_ITEM,
    MAP_VALUE,
    Constraint,
    FieldRef,
    iter_constraints,
    profile_key,
    satisfies,
)
from conformance.suite.boundaries.near_misses import (
    Case,
    cases_for,
    format_near_misses,
    near_miss_corpus,
    string_of_length,
)
from conformance.suite.boundaries.requests import can_set, get_value, with_value
from conformance.suite.boundaries.requirements import RequirementMap
from conformance.suite.factories import ABSENT, RequestSpec
from conformance.suite.selection import SKIPPED_HEADERS, quick_subset

DECIMAL = "^(0|[1-9][0-9]*)(\\.[0-9]+)?$"
RAW = "^(0|[1-9][0-9]*)$"


@pytest.fixture(scope="module")
def contract() -> dict[str, Any]:
    return effective_contract(load_profile())


def constraint(kind: str, value: Any, schema: dict[str, Any], where: str = "body") -> Constraint:
    return Constraint("op", FieldRef(where, ("field",)), kind, value, schema)  # type: ignore[arg-type]


def by_validity(cases: list[Case]) -> tuple[list[Any], list[Any]]:
    return [c.value for c in cases if c.valid], [c.value for c in cases if not c.valid]


# ------------------------------------------------------------------ near-miss corpus
def test_near_misses_of_a_decimal_amount_never_match_it() -> None:
    corpus = dict(near_miss_corpus(DECIMAL, ["12.5", "10"]))
    assert corpus["leading zero"] == "012.5"
    assert corpus["trailing newline"] == "12.5\n"
    assert corpus["non-ASCII digits"] == "١٢.٥"
    assert corpus["empty"] == ""
    for label in ("plus sign", "minus sign", "exponent", "trailing dot", "surrounding spaces"):
        assert label in corpus
    assert all(not pattern_matches(DECIMAL, value) for value in corpus.values())


def test_a_mutation_that_still_matches_is_left_out() -> None:
    corpus = dict(near_miss_corpus("^[0-9 ]+$", ["10"]))
    assert "trailing space" not in corpus and "leading space" not in corpus
    assert "trailing newline" in corpus


def test_no_corpus_without_a_valid_example() -> None:
    assert near_miss_corpus(RAW, ["abc", "01"]) == []


# ------------------------------------------------------------------ values of a given length
def test_string_of_length_pads_a_valid_example_keeping_the_pattern() -> None:
    schema = {"type": "string", "maxLength": 128, "pattern": DECIMAL}
    value = string_of_length(schema, 129, "12.5", ignore=frozenset({"maxLength"}))
    assert value is not None and len(value) == 129 and pattern_matches(DECIMAL, value)


def test_string_of_length_keeps_a_uri_a_uri() -> None:
    schema = {"type": "string", "format": "uri", "maxLength": 2048}
    value = string_of_length(schema, 2048, "https://x.example/a", ignore=frozenset())
    assert value is not None and value.startswith("https://x.example/a") and len(value) == 2048


def test_string_of_length_gives_up_when_the_pattern_fixes_the_length() -> None:
    schema = {"type": "string", "pattern": "^[0-9]{3}$"}
    assert string_of_length(schema, 5, "123", ignore=frozenset()) is None


# ------------------------------------------------------------------ cases per keyword
def test_length_cases_sit_on_both_sides_of_the_edge() -> None:
    schema = {"type": "string", "minLength": 1, "maxLength": 128}
    valid, invalid = by_validity(cases_for(constraint("maxLength", 128, schema), "usdc"))
    assert [len(v) for v in valid] == [128] and [len(v) for v in invalid] == [129]
    valid, invalid = by_validity(cases_for(constraint("minLength", 1, schema), "usdc"))
    assert valid == ["u"] and invalid == [""]


def test_range_cases_are_the_edges_and_one_beyond() -> None:
    schema = {"type": "integer", "minimum": 60, "maximum": 31536000}
    assert by_validity(cases_for(constraint("minimum", 60, schema), 86400)) == ([60], [59])
    assert by_validity(cases_for(constraint("maximum", 31536000, schema), 86400)) == (
        [31536000],
        [31536001],
    )


def test_an_integer_written_as_a_float_is_accepted_and_a_fraction_refused() -> None:
    schema = {"type": "integer", "minimum": 60}
    cases = cases_for(constraint("integer", True, schema), 86400)
    valid, invalid = by_validity(cases)
    assert valid == [86400.0] and isinstance(valid[0], float)
    assert invalid == [86400.5]
    no_float = cases_for(constraint("integer", True, schema), 86400, integer_float_form=False)
    assert by_validity(no_float) == ([], [86400.5])


def test_query_values_travel_as_text() -> None:
    schema = {"type": "integer", "minimum": 1, "maximum": 100}
    cases = cases_for(constraint("maximum", 100, schema, where="query"), "20")
    assert by_validity(cases) == (["100"], ["101"])
    integer = cases_for(constraint("integer", True, schema, where="query"), "20")
    assert by_validity(integer) == ([], ["20.5"])


def test_enum_near_misses_are_outside_the_enum() -> None:
    schema = {"type": "string", "enum": ["auto_request", "notify_only"]}
    valid, invalid = by_validity(cases_for(constraint("enum", tuple(schema["enum"]), schema), None))
    assert valid == ["auto_request", "notify_only"]
    assert {"AUTO_REQUEST", "auto_request ", " notify_only", "notify_onl", ""} <= set(invalid)
    assert not set(invalid) & set(schema["enum"])


def test_unique_items_case_repeats_the_first_item() -> None:
    schema = {"type": "array", "uniqueItems": True, "items": {"type": "string"}}
    valid, invalid = by_validity(cases_for(constraint("uniqueItems", True, schema), ["a", "b"]))
    assert valid == [["a", "b"]] and invalid == [["a", "b", "a"]]


def test_pattern_cases_keep_only_provable_sides() -> None:
    schema = {"type": "string", "maxLength": 78, "pattern": RAW}
    cases = cases_for(constraint("pattern", RAW, schema), "12500000")
    valid, invalid = by_validity(cases)
    assert "12500000" in valid
    assert all(pattern_matches(RAW, v) for v in valid)
    assert all(not pattern_matches(RAW, v) for v in invalid)
    assert {"012500000", "12500000\n", "+12500000", "1e7", ""} <= set(invalid)


def test_header_cases_drop_values_http_cannot_carry_or_would_trim() -> None:
    schema = {"type": "string", "pattern": RAW}
    cases = cases_for(constraint("pattern", RAW, schema, where="header"), "10")
    values = [c.value for c in cases]
    assert all(v == v.strip() and "\n" not in v and v.isascii() and v for v in values)


def test_path_cases_never_send_an_empty_segment() -> None:
    schema = {"type": "string", "minLength": 1, "maxLength": 128}
    cases = cases_for(constraint("minLength", 1, schema, where="path"), "we_1")
    assert [c.value for c in cases] == ["w"]


def test_satisfies_checks_the_varied_keywords() -> None:
    schema = {"type": "string", "maxLength": 3, "pattern": RAW}
    assert satisfies(schema, "100")
    assert not satisfies(schema, "1000")
    assert satisfies(schema, "1000", ignore=frozenset({"maxLength"}))
    assert not satisfies(schema, 100)


def test_quick_subset_keeps_edges_and_key_near_misses() -> None:
    schema = {"type": "string", "pattern": DECIMAL}
    cases = cases_for(constraint("pattern", DECIMAL, schema), "12.5")
    kept = quick_subset(cases)
    assert {c.label for c in kept if not c.valid} == {
        "leading zero",
        "trailing newline",
        "non-ASCII digits",
        "surrounding spaces",
        "exponent",
    }
    assert sum(c.valid for c in kept) == 1


def test_format_near_misses_really_lack_the_format() -> None:
    uri = dict(format_near_misses("uri", "https://shop.example/return"))
    assert uri["no scheme"] == "shop.example/return"
    assert uri["relative reference"] == "//shop.example/return"
    assert all(not conforms("uri", v) for v in uri.values())
    stamp = dict(format_near_misses("date-time", "2026-11-21T04:00:00Z"))
    assert stamp["no time zone"] == "2026-11-21T04:00:00"
    assert stamp["space instead of T"] == "2026-11-21 04:00:00Z"
    assert stamp["month 13"] == "2026-13-21T04:00:00Z"
    assert all(not conforms("date-time", v) for v in stamp.values())


def test_format_cases_keep_the_example_and_refuse_the_misses() -> None:
    schema = {"type": "string", "format": "date-time"}
    cases = cases_for(
        constraint("format", "date-time", schema, where="query"), "2026-11-21T04:00:00Z"
    )
    valid, invalid = by_validity(cases)
    assert valid == ["2026-11-21T04:00:00Z"]
    assert "2026-11-21 04:00:00Z" in invalid and "" in invalid


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
    kinds = {c.kind for c in iter_constraints(load_document(), "listPayments")}
    assert kinds == {"integer"}


def test_other_families_headers_can_be_left_out(contract: dict[str, Any]) -> None:
    everything = list(iter_constraints(contract, "createPayment"))
    assert any(c.field.location == "header" for c in everything)
    kept = list(iter_constraints(contract, "createPayment", skip_headers=SKIPPED_HEADERS))
    assert not any(c.field.location == "header" for c in kept)


def test_every_constraint_of_the_default_contract_has_a_refused_case(
    contract: dict[str, Any],
) -> None:
    examples = {
        "url": "https://hooks.example.test/x",
        "resource": "https://api.example.test/r",
        "event_types": ["payment.created", "payment.settled"],
        # the x402 payload formats the default profile pins
        "signature": "0x" + "ab" * 65,
        "from": "0x" + "1f" * 20,
        "to": "0x" + "2e" * 20,
        "nonce": "0x" + "3d" * 32,
    }
    from conformance.core.contract import operations

    for op in operations(contract):
        for c in iter_constraints(contract, op.operation_id, skip_headers=SKIPPED_HEADERS):
            example = examples.get(c.field.name)
            if c.kind == "format":
                example = {"uri": "https://x.example/a", "date-time": "2026-01-01T00:00:00Z"}[
                    c.value
                ]
            cases = cases_for(c, example)
            if c.kind == "minLength" and c.field.location == "path":
                continue  # an empty path segment is a routing matter, not a value
            assert any(not case.valid for case in cases), c.id


# ------------------------------------------------------------------ requirement ids
def test_requirement_map_names_catalogue_ids_of_the_right_layer() -> None:
    catalogue = load_catalogue()
    mapping = RequirementMap.load()
    for requirement_id in mapping.every_id():
        assert requirement_id in catalogue, requirement_id
    for rule in mapping.rules:
        for requirement_id in rule.get("reject", []):
            assert catalogue.get(requirement_id).layer is Layer.CONTRACT, requirement_id  # type: ignore[union-attr]
        for requirement_id in rule.get("reject_with_status", []):
            assert catalogue.get(requirement_id).layer is Layer.PROFILE, requirement_id  # type: ignore[union-attr]


def test_each_constraint_kind_maps_to_its_status_requirement(contract: dict[str, Any]) -> None:
    mapping = RequirementMap.load()
    interval = next(
        c
        for c in iter_constraints(contract, "createPayoutSchedule")
        if c.kind == "maximum" and c.field.name == "interval_secs"
    )
    ids = mapping.ids_for(interval, created=True)
    assert ids.rejected == ("LIMIT-005",)
    assert ids.rejected_with_status == ("STATUS-008",)
    assert "LIMIT-010" in ids.accepted and "STATUS-001" in ids.accepted
    limit = next(c for c in iter_constraints(contract, "listPayments") if c.kind == "maximum")
    assert set(mapping.ids_for(limit, created=False).rejected_with_status) == {
        "STATUS-008",
        "STATUS-011",
        "PAY-017",
    }


# ------------------------------------------------------------------ varying one field
def spec() -> RequestSpec:
    return RequestSpec(
        "createPayment",
        "POST",
        "/v1/payments/{id}",
        path_params={"id": "p 1"},
        query={"limit": "20"},
        headers={"Idempotency-Key": "k"},
        body={"quotes": {"usdc": {"amount": "1"}}, "splits": [{"bps": 5}]},
    )


def test_get_and_with_value_follow_items_and_map_values() -> None:
    request = spec()
    bps = FieldRef("body", ("splits", ARRAY_ITEM, "bps"))
    amount = FieldRef("body", ("quotes", MAP_VALUE, "amount"))
    assert get_value(request, bps) == 5 and get_value(request, amount) == "1"
    changed = with_value(with_value(request, bps, 10001), amount, "01")
    assert changed.body == {"quotes": {"usdc": {"amount": "01"}}, "splits": [{"bps": 10001}]}
    assert request.body["splits"][0]["bps"] == 5  # the original is untouched


def test_with_value_sets_a_missing_optional_field_but_not_a_missing_parent() -> None:
    request = spec()
    assert get_value(request, FieldRef("body", ("memo",))) is ABSENT
    assert with_value(request, FieldRef("body", ("memo",)), "x").body["memo"] == "x"
    assert not can_set(request, FieldRef("body", ("nothing", "deeper")))
    with pytest.raises(KeyError):
        with_value(request, FieldRef("body", ("nothing", "deeper")), 1)


def test_parameters_are_replaced_in_place() -> None:
    request = spec()
    assert with_value(request, FieldRef("query", ("limit",)), "101").query == {"limit": "101"}
    moved = with_value(request, FieldRef("path", ("id",)), "a/b")
    assert moved.path == "/v1/payments/a%2Fb"
    header = with_value(request, FieldRef("header", ("idempotency-key",)), "new")
    assert header.headers == {"idempotency-key": "new"}
