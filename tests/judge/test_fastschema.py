"""fastschema: the quick yes/no answer agrees with jsonschema on every schema of the contract.

The checks trust a "valid" from ``compile_schema`` without asking jsonschema, so a fast check
more lenient than jsonschema would hide a fault. Every response and request schema of the
effective contract is compared with jsonschema on real bodies of the reference server and on
mutations of each of their fields (wrong types, bad patterns, lengths, formats, missing keys).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.core import jsonsafe
from conformance.core.formats import format_checker
from conformance.core.profile import Profile, load_profile
from conformance.judge.fastschema import compile_schema
from conformance.judge.response_schemas import SchemaValidator
from conformance.validator.checks import ExchangeValidator
from conformance.validator.exchange import Exchange
from tests.validator.test_checks import _traffic

REPLACEMENTS: tuple[Any, ...] = (
    "01",
    "",
    "x" * 129,
    "2026-01-01 00:00:00",
    "not a uri",
    -1,
    0,
    60.0,
    2**63,
    1.5,
    True,
    None,
    [],
    {},
    ["a", "a"],
)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*at, index))


def _mutations(body: Any) -> Iterator[Any]:
    yield body
    for path in _paths(body):
        if not path:
            continue
        for replacement in REPLACEMENTS:
            changed = copy.deepcopy(body)
            parent = changed
            for part in path[:-1]:
                parent = parent[part]
            parent[path[-1]] = replacement
            yield changed
        removed = copy.deepcopy(body)
        parent = removed
        for part in path[:-1]:
            parent = parent[part]
        del parent[path[-1]]
        yield removed


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile("default")


@pytest.fixture(scope="module")
def traffic(profile: Profile) -> list[Exchange]:
    return _traffic(profile)


def test_compile_schema_agrees_with_jsonschema(profile: Profile, traffic: list[Exchange]) -> None:
    validator = ExchangeValidator(profile)
    formats = format_checker()
    compared = disagreed = 0
    problems = []
    for ex in traffic:
        op = next(
            (o for o in validator.operations if o.operation_id == validator.identify(ex)), None
        )
        if op is None or ex.status is None:
            continue
        pairs = [(op.response_schemas.get(ex.status), ex.response_body)]
        if op.request.body_schema is not None:
            pairs.append((op.request.body_schema, ex.request_body))
        for schema, raw in pairs:
            if schema is None or not raw:
                continue
            fast = compile_schema(schema, formats)
            assert fast is not None, f"{op.operation_id}: a schema fastschema cannot compile"
            slow = SchemaValidator(schema, format_checker=formats)
            for instance in _mutations(jsonsafe.loads(raw)):
                compared += 1
                expected = next(slow.iter_errors(instance), None) is None
                if fast(instance) != expected:
                    disagreed += 1
                    problems.append((op.operation_id, instance, expected))
    assert compared > 5_000
    assert disagreed == 0, problems[:3]


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        ({"type": "integer"}, 60.0, True),
        ({"type": ["string", "null"]}, None, 1),
        ({"pattern": "^[0-9]+$"}, "60", "60\n"),  # ECMA: $ is the end of the input
        ({"pattern": "^\\d+$"}, "60", "٦٠"),  # ECMA: \d is ASCII
        ({"enum": [1, "a"]}, 1.0, True),
        ({"uniqueItems": True}, [1, True], [1, 1.0]),
        ({"oneOf": [{"type": "string"}, {"minLength": 1}]}, 5, "ab"),
        ({"if": {"const": 1}, "then": {"type": "integer"}, "else": {"type": "string"}}, "x", 2),
        ({"additionalProperties": {"type": "string"}, "properties": {"a": {}}}, {"a": 1}, {"b": 1}),
        ({"format": "date-time"}, "2026-01-01T00:00:00Z", "2026-01-01 00:00:00"),
        # the fused nodes: one closure per string, number, array or object schema
        ({"type": "string", "maxLength": 2, "pattern": "^a", "enum": ["ab", "b"]}, "ab", "b"),
        ({"type": "string", "format": "date-time"}, "2026-01-01T00:00:00Z", "2026-01-01"),
        ({"type": "integer", "minimum": 1, "maximum": 60}, 60.0, 61),
        ({"type": "integer", "minimum": 0}, 0, False),
        ({"type": "number", "maximum": 1}, 0.5, True),
        ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, [1, 2], [1, 1.0]),
        ({"type": "array", "items": {"type": "integer"}}, [], [1, "a"]),
        ({"required": ["a"], "properties": {"a": {"type": "string"}}}, "not an object", {}),
        ({"type": "object", "required": ["a"]}, {"a": None}, []),
        ({"type": "object", "additionalProperties": False, "properties": {"a": {}}}, {}, {"b": 1}),
    ],
)
def test_keywords_have_jsonschema_semantics(schema: Any, good: Any, bad: Any) -> None:
    check = compile_schema(schema, format_checker())
    assert check is not None
    assert (check(good), check(bad)) == (True, False)


def test_a_keyword_it_does_not_handle_leaves_the_schema_to_jsonschema() -> None:
    assert compile_schema({"properties": {"a": {"minItems": 1}}}, format_checker()) is None
    assert compile_schema({"description": "only annotations", "x-note": 1}, format_checker())
