"""Which answer is the profile's validation error (``outcomes.is_validation_error``): its status
and its code, so that a business-rule refusal sharing the status is never judged as one; and the
one-line summary of an answer that failure messages quote."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx
import pytest

from conformance.core.profile import Profile, load_profile
from conformance.judge.outcomes import (
    error_shape_findings,
    error_shape_problems,
    is_contract_refusal,
    is_validation_error,
    media_type,
    success_media_problem,
    summary,
)

DEFAULT = load_profile()


def answer(status: int, code: str | None = None) -> httpx.Response:
    return httpx.Response(status, json={"code": code, "message": "no"} if code else {})


def with_status(**changes: Any) -> Profile:
    status = {**DEFAULT.data["status"], **changes}
    return replace(DEFAULT, data={**DEFAULT.data, "status": status})


@pytest.mark.parametrize(
    ("profile", "response", "expected"),
    [
        (DEFAULT, answer(400, "validation_error"), True),
        (DEFAULT, answer(400, "bad_request"), False),
        (DEFAULT, answer(422, "unknown_currency"), False),
        (
            with_status(validation={"status": 422, "code": "invalid_request"}),
            answer(422, "unknown_currency"),
            False,
        ),
        (
            with_status(validation={"status": 422, "code": "invalid_request"}),
            answer(422, "invalid_request"),
            True,
        ),
        # no code pinned and the business rules share the status: nothing tells them apart
        (with_status(validation={"status": 422}), answer(422, "invalid_request"), False),
        (with_status(validation={"status": 400}), answer(400, "anything"), True),
    ],
)
def test_the_validation_error_is_its_status_and_its_code(
    profile: Profile, response: httpx.Response, expected: bool
) -> None:
    assert is_validation_error(response, profile) is expected


VALIDATION_422 = with_status(validation={"status": 422, "code": "invalid_request"})


@pytest.mark.parametrize(
    ("profile", "response", "expected"),
    [
        # validation alone on its status: the status tells, whatever the code (as before)
        (DEFAULT, answer(400, "validation_error"), True),
        (DEFAULT, answer(400, "bad_request"), True),
        (DEFAULT, answer(422, "unknown_currency"), False),
        # validation shares 422 with the business rules: the code tells
        (VALIDATION_422, answer(422, "invalid_request"), True),
        (VALIDATION_422, answer(422, "unknown_currency"), False),
        (VALIDATION_422, answer(422, "amount_too_large"), False),
        (VALIDATION_422, answer(400, "validation_error"), False),
    ],
)
def test_a_business_rule_code_is_never_the_refusal_of_a_malformed_request(
    profile: Profile, response: httpx.Response, expected: bool
) -> None:
    assert is_contract_refusal(response, profile) is expected


def test_a_summary_is_the_status_and_the_start_of_the_body_on_one_line() -> None:
    response = httpx.Response(201, content=b'{"id": "pay_1",\n "amount": "10.00"}')
    assert summary(response) == '201 {"id": "pay_1",  "amount": "10.00"}'


def test_a_long_body_is_cut_and_said_to_be_and_its_secrets_never_shown() -> None:
    body = '{"secret": "whsec_c2VjcmV0", "note": "' + "\u00e9" * 2_000_000 + '"}'
    shown = summary(httpx.Response(200, content=body.encode()), limit=60)
    assert shown == "200 " + ('{"secret": "[redacted]", "note": "' + "\u00e9" * 60)[:60] + "..."


def test_an_answer_of_the_declared_charset_is_read_in_it() -> None:
    response = httpx.Response(
        400,
        content="caf\u00e9".encode("latin-1"),
        headers={"Content-Type": "text/plain; charset=latin-1"},
    )
    assert summary(response) == "400 caf\u00e9"


@pytest.mark.parametrize(
    ("media", "body", "missing"),
    [
        ("application/json", {"code": "not_found", "message": "no such payment"}, set()),
        ("text/plain", {"code": "not_found", "message": "x"}, {"ERR-001"}),
        ("application/json", ["not_found"], {"ERR-002", "ERR-003", "ERR-004"}),
        ("application/json", None, {"ERR-002", "ERR-003", "ERR-004"}),
        ("application/json", {"code": 404, "message": "x"}, {"ERR-003"}),
        ("application/json", {"code": "not_found"}, {"ERR-004"}),
    ],
)
def test_an_error_has_the_shape_of_spec_7(media: str, body: Any, missing: set[str]) -> None:
    assert set(error_shape_problems(media, body)) == missing


def test_a_response_is_judged_by_the_same_rule_and_err_005_holds_them_all() -> None:
    response = httpx.Response(404, text="not found", headers={"content-type": "text/plain"})
    found = error_shape_findings(response)
    assert {rid for rid, problems in found.items() if problems} == {
        "ERR-001", "ERR-002", "ERR-003", "ERR-004", "ERR-005",
    }  # fmt: skip
    assert len(found["ERR-005"]) == 4


def test_the_media_type_is_read_without_its_parameters_and_case() -> None:
    assert media_type("Application/JSON; charset=utf-8") == "application/json"
    assert media_type(None) == ""


def test_a_success_is_json_served_as_application_json() -> None:
    assert success_media_problem("application/json", json=True) is None
    assert success_media_problem("text/plain", json=True) == "served as 'text/plain'"
    assert success_media_problem("", json=False, refused="too deep") == (
        "served as 'no media type', the body is not JSON (too deep)"
    )
