"""Boundary cases (conformance/suite/boundaries/near_misses.py), without a server."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.contract import effective_contract
from conformance.core.formats import conforms
from conformance.core.patterns import ecma_search as pattern_matches
from conformance.core.profile import load_profile
from conformance.judge.constraints import (
    PARAMETER_KINDS,
    Constraint,
    FieldRef,
    iter_constraints,
)
from conformance.suite.boundaries.classes import applicable
from conformance.suite.boundaries.near_misses import (
    REPAIRS,
    Case,
    cases_for,
    format_near_misses,
    near_miss_corpus,
    one_defect,
    string_of_length,
)
from conformance.suite.factories import ABSENT
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


def test_each_near_miss_is_the_form_closest_to_valid_for_its_name() -> None:
    # Issue 27: "12.5." proves nothing about a parser that takes "12." (it refuses both).
    corpus = dict(near_miss_corpus(DECIMAL, ["12.5", "10"]))
    assert corpus["trailing dot"] == "12."
    assert corpus["leading dot"] == ".5"
    assert corpus["minus sign"] == "-12.5"
    assert corpus["decimal comma"] == "12,5"
    # a separator between two digits, taken from the next example when the first has none
    assert dict(near_miss_corpus(DECIMAL, ["1.5", "10"]))["digit separator"] == "1_0"
    raw = dict(near_miss_corpus(RAW, ["10"]))
    assert (raw["trailing dot"], raw["leading dot"], raw["decimal comma"]) == ("10.", ".10", "10,5")


@pytest.mark.parametrize("pattern", [DECIMAL, RAW, "^[0-9]+$"])
def test_each_near_miss_differs_from_a_valid_value_by_its_one_defect(pattern: str) -> None:
    for label, value in near_miss_corpus(pattern, ["12.5", "10", "1", "0"]):
        repair = REPAIRS[label]
        assert not pattern_matches(pattern, value), (label, value)
        if repair is not None:  # removing the defect gives a value the pattern accepts
            assert any(pattern_matches(pattern, fixed) for fixed in repair(value)), (label, value)


def test_every_pattern_case_of_the_default_contract_has_exactly_its_one_defect(
    contract: dict[str, Any],
) -> None:
    from conformance.core.contract import operations

    examples = {"min_send_amount": "1.5", "amount": "12.5", "max_amount_required": "1000"}
    seen = 0
    for op in operations(contract):
        for c in iter_constraints(contract, op.operation_id, skip_headers=SKIPPED_HEADERS):
            if c.kind != "pattern":
                continue
            for case in cases_for(c, examples.get(c.field.name)):
                if case.valid or REPAIRS.get(case.label) is None:
                    continue
                seen += 1
                assert one_defect(str(c.value), case.label, case.value), (c.id, case.label)
    assert seen > 50


def test_a_value_with_two_defects_is_not_a_near_miss() -> None:
    assert not one_defect(DECIMAL, "trailing dot", "12.5.")  # "12.5" + dot: still no match
    assert not one_defect(DECIMAL, "leading dot", ".12.5")
    assert one_defect(DECIMAL, "trailing dot", "12.")


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


def test_quick_subset_keeps_edges_and_key_near_misses() -> None:
    schema = {"type": "string", "pattern": DECIMAL}
    cases = cases_for(constraint("pattern", DECIMAL, schema), "12.5")
    kept = quick_subset(cases)
    assert {c.label for c in kept if not c.valid} == {
        "leading zero",
        "trailing dot",
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
def test_every_class_that_applies_to_a_constraint_of_the_default_contract_has_a_case(
    contract: dict[str, Any],
) -> None:
    """The static form of the case-coverage gate: from known-valid examples alone, every
    (operation, constraint, near-miss class) triple this module generates gets a refused case."""
    examples = {
        "url": "https://hooks.example.test/x",
        "resource": "https://api.example.test/r",
        "event_types": ["payment.created", "payment.settled"],
        # the x402 payload formats the default profile pins
        "signature": "0x" + "ab" * 65,
        "from": "0x" + "1f" * 20,
        "to": "0x" + "2e" * 20,
        "nonce": "0x" + "3d" * 32,
        "value": "1000",
        "max_amount_required": "1000",
        "min_send_amount": "1.5",
        "amount": "12.5",
    }
    from conformance.core.contract import operations

    missing = []
    for op in operations(contract):
        for c in iter_constraints(contract, op.operation_id, skip_headers=SKIPPED_HEADERS):
            if c.kind in PARAMETER_KINDS:
                continue  # whole requests, sent by test_parameters.py
            example = examples.get(c.field.name)
            if c.kind == "format":
                example = {"uri": "https://x.example/a", "date-time": "2026-01-01T00:00:00Z"}[
                    c.value
                ]
            cases = cases_for(c, example, decimals=6)
            sent = {case.near_miss for case in cases}
            missing += [
                f"{c.id}: no {near_miss}" for near_miss in applicable(c) if near_miss not in sent
            ]
    assert missing == []


def test_a_case_of_each_other_json_type_and_null() -> None:
    text = constraint("type", ("string",), {"type": "string"})
    assert {c.near_miss: c.value for c in cases_for(text, "x")} == {
        "null": None,
        "object": {"conformance": 1},
        "array": ["conformance"],
        "number": 12,
        "boolean": True,
    }
    number = constraint("type", ("integer",), {"type": "integer"})
    by_class = {c.near_miss: c.value for c in cases_for(number, 86400)}
    assert by_class["string"] == "86400"  # the digit string a coercing parser lets through
    assert "number" not in by_class  # a fraction is the integer kind's case
    nullable = constraint("type", ("string",), {"type": "string", "nullable": True})
    assert "null" not in {c.near_miss for c in cases_for(nullable, "x")}
    limit = constraint("type", ("integer",), {"type": "integer"}, where="query")
    assert [(c.near_miss, c.value) for c in cases_for(limit, "20")] == [("string", "abc")]


def test_a_required_field_is_left_out() -> None:
    [case] = cases_for(constraint("required", True, {"type": "string"}), "x")
    assert (case.value, case.valid, case.near_miss) == (ABSENT, False, "missing")


def test_decimal_places_of_the_currency_are_accepted_and_one_more_refused() -> None:
    amount = constraint("decimals", "currency", {"type": "string", "pattern": DECIMAL})
    assert by_validity(cases_for(amount, "12.00005", decimals=6)) == (
        ["12.111111"],
        ["12.1111111"],
    )
    assert [c.near_miss for c in cases_for(amount, "12", decimals=6) if not c.valid] == [
        "too-many-decimals"
    ]
    assert cases_for(amount, "12", decimals=None) == []  # the currency is not known


def test_quick_keeps_null_and_the_types_a_coercing_parser_confuses() -> None:
    text = constraint("type", ("string",), {"type": "string"})
    assert [c.near_miss for c in quick_subset(cases_for(text, "x"))] == ["null", "object", "number"]
    number = constraint("type", ("integer",), {"type": "integer"})
    assert [c.near_miss for c in quick_subset(cases_for(number, 60))] == ["null", "string"]
