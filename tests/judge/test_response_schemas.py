"""Success bodies against their schema (conformance/judge/response_schemas.py) and the
requirement ids a broken one fails (``broken_ids``, among the responses family's candidates)."""

from __future__ import annotations

from typing import Any

from conformance.core.contract import effective_contract
from conformance.core.profile import load_profile
from conformance.judge.response_schemas import Problem, ResponseSchemas, broken_ids, code_only
from conformance.suite.responses.test_responses import shape_ids

SCHEMAS = ResponseSchemas(effective_contract(load_profile()))
USAGE: dict[str, Any] = {
    "payment_id": "pay_1",
    "scheme": "upto",
    "max_raw": "10",
    "actual_raw": "5",
    "usage_id": "usage_1",
}


def test_a_valid_usage_result_has_no_problem() -> None:
    assert SCHEMAS.problems("reportX402Usage", 200, USAGE) == []


def test_a_missing_field_names_it_and_fails_the_ids_that_name_it() -> None:
    body = {k: v for k, v in USAGE.items() if k != "usage_id"}
    problems = SCHEMAS.problems("reportX402Usage", 200, body)
    assert [p.fields for p in problems] == [frozenset({"usage_id"})]
    assert broken_ids(shape_ids("reportX402Usage"), problems) == {"SHAPE-024", "OPS-034"}


def test_patterns_have_ecma_semantics() -> None:
    problems = SCHEMAS.problems("reportX402Usage", 200, {**USAGE, "max_raw": "10\n"})
    assert [p.where for p in problems] == ["max_raw"]


def test_a_broken_date_time_is_tagged_with_its_format() -> None:
    body = {"endpoints": [{"id": "we_1", "url": "https://x.test/h", "event_types": []}]}
    body["endpoints"][0].update(active=True, created_at="2024-01-01 00:00:00")
    problems = SCHEMAS.problems("listWebhookEndpoints", 200, body)
    assert any("format:date-time" in p.tags for p in problems), problems
    assert "SHAPE-001" in broken_ids(shape_ids("listWebhookEndpoints"), problems)


def test_an_undocumented_status_is_a_problem() -> None:
    assert SCHEMAS.problems("reportX402Usage", 299, USAGE)


def test_a_refusal_breaking_its_schema_in_its_code_alone_is_the_profiles_code_rule() -> None:
    code = Problem(
        "code", "'resource_not_found' is not one of ['not_found']", frozenset({"code"}), frozenset()
    )
    message = Problem(
        "message", "None is not of type 'string'", frozenset({"message"}), frozenset()
    )
    assert code_only(404, [code])
    assert not code_only(404, [code, message])  # the shape too: the error shape's ids
    assert not code_only(200, [code]) and not code_only(404, [])
