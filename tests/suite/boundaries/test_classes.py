"""The near-miss classes that apply to a constraint (conformance/suite/boundaries/classes.py)."""

from __future__ import annotations

from typing import Any

from conformance.core.case_coverage import CaseKey
from conformance.core.contract import effective_contract
from conformance.core.profile import load_profile
from conformance.judge.constraints import Constraint, FieldRef
from conformance.suite.boundaries.classes import applicable, applicable_keys, class_of
from conformance.suite.selection import SKIPPED_HEADERS

DECIMAL = "^(0|[1-9][0-9]*)(\\.[0-9]+)?$"


def constraint(
    kind: str, value: Any, schema: dict[str, Any], where: str = "body", name: str = "field"
) -> Constraint:
    return Constraint("op", FieldRef(where, (name,)), kind, value, schema)  # type: ignore[arg-type]


def test_a_pattern_gets_every_pattern_class() -> None:
    classes = applicable(constraint("pattern", DECIMAL, {"type": "string", "pattern": DECIMAL}))
    assert {"leading-zero", "trailing-dot", "newline", "non-ascii-digits", "empty"} <= set(classes)


def test_a_class_the_pattern_allows_is_ruled_out() -> None:
    digits = "^[0-9]+$"
    classes = applicable(constraint("pattern", digits, {"type": "string", "pattern": digits}))
    assert "leading-zero" not in classes  # "012" matches ^[0-9]+$
    assert "trailing-dot" in classes


def test_the_declared_type_and_an_allowed_null_are_not_near_misses() -> None:
    text = applicable(constraint("type", ("string",), {"type": "string"}))
    assert text == ("null", "object", "array", "number", "boolean")
    nullable = applicable(constraint("type", ("string",), {"type": "string", "nullable": True}))
    assert "null" not in nullable
    count = applicable(constraint("type", ("integer",), {"type": "integer"}))
    assert "number" not in count  # a fraction is the integer kind's "fraction"


def test_a_parameter_is_text_so_only_a_non_number_applies() -> None:
    limit = constraint("type", ("integer",), {"type": "integer"}, where="query")
    assert applicable(limit) == ("string",)


def test_an_empty_path_segment_is_no_case_of_a_length() -> None:
    path_id = constraint("minLength", 1, {"type": "string", "minLength": 1}, where="path")
    assert applicable(path_id) == ()
    body_id = constraint("minLength", 1, {"type": "string", "minLength": 1})
    assert applicable(body_id) == ("too-short",)


def test_case_labels_map_to_their_class() -> None:
    pattern = constraint("pattern", DECIMAL, {"type": "string", "pattern": DECIMAL})
    assert class_of(pattern, "plus sign") == "sign"
    assert class_of(pattern, "fullwidth digits") == "non-ascii-digits"
    enum = constraint("enum", ("exact",), {"type": "string", "enum": ["exact"]})
    assert class_of(enum, "upper case of 'exact'") == "wrong-case"
    maximum = constraint("maximum", 10, {"type": "integer", "maximum": 10})
    assert class_of(maximum, "one beyond 11") == "above-maximum"
    assert class_of(pattern, "a label no class has") is None


def test_the_triples_of_an_operation_name_its_fields() -> None:
    contract = effective_contract(load_profile())
    keys = applicable_keys(contract, "createPayoutSchedule", skip_headers=SKIPPED_HEADERS)
    amount = "body.min_send_amount"
    assert CaseKey("createPayoutSchedule", amount, "pattern", "trailing-dot") in keys
    assert CaseKey("createPayoutSchedule", amount, "required", "missing") in keys
    assert CaseKey("createPayoutSchedule", amount, "decimals", "too-many-decimals") in keys
    assert CaseKey("createPayoutSchedule", amount, "type", "string") not in keys
