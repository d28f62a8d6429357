"""Our registered checks (conformance/suite/schema/checks.py), each shown passing and failing.

The checks are called the way schemathesis calls them, on responses built by hand.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from schemathesis import Response

from conformance.suite.schema.checks import (
    ErrorCodeMatchesProfile,
    ReplayHeaderOnlyOnReplays,
    error_body_shape,
    error_content_type,
    no_server_error,
    refused_body,
    success_content_type,
)
from conformance.suite.schema.runner import defuse

JSON = "application/json"


def response(
    status: int,
    body: Any = None,
    *,
    content_type: str | None = JSON,
    headers: dict[str, str] | None = None,
    key: str | None = None,
    raw: bytes | None = None,
) -> Response:
    request = requests.Request("POST", "http://127.0.0.1:1/v1/payments", data=b"{}")
    prepared = request.prepare()
    if key is not None:
        prepared.headers["Idempotency-Key"] = key
    all_headers = {name: [value] for name, value in (headers or {}).items()}
    if content_type is not None:
        all_headers["Content-Type"] = [content_type]
    content = raw if raw is not None else json.dumps(body).encode()
    return Response(status, all_headers, content, prepared, elapsed=0.01, verify=True)


class Case:
    """The little of a schemathesis case our checks read."""

    method = "POST"
    formatted_path = "/v1/payments"


CASE: Any = Case()
CTX: Any = None  # our checks do not read the schemathesis context


def test_no_server_error_fails_any_5xx_and_passes_the_rest() -> None:
    assert no_server_error(CTX, response(404, {"code": "not_found", "message": "m"}), CASE) is None
    with pytest.raises(AssertionError, match="500"):
        no_server_error(CTX, response(500, {"code": "x", "message": "m"}), CASE)


def test_error_content_type_wants_json_on_every_4xx_and_skips_the_rest() -> None:
    assert error_content_type(CTX, response(422, {}), CASE) is None
    assert (
        error_content_type(CTX, response(422, {}, content_type=f"{JSON}; charset=utf-8"), CASE)
        is None
    )
    assert error_content_type(CTX, response(200, {}, content_type="text/plain"), CASE) is True
    with pytest.raises(AssertionError, match="text/plain"):
        error_content_type(CTX, response(404, {}, content_type="text/plain"), CASE)
    with pytest.raises(AssertionError, match="no Content-Type"):
        error_content_type(CTX, response(404, {}, content_type=None), CASE)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ([], "not a JSON object"),
        ({"message": "m"}, "code is missing"),
        ({"code": "x"}, "message is missing"),
        ({"code": 4, "message": "m"}, "code is not a string"),
    ],
)
def test_error_body_shape_fails_a_body_without_string_code_and_message(
    body: Any, problem: str
) -> None:
    with pytest.raises(AssertionError, match=problem):
        error_body_shape(CTX, response(400, body), CASE)


def test_error_body_shape_passes_code_message_and_any_details() -> None:
    body = {"code": "validation_error", "message": "m", "details": [{"field": "a", "message": "b"}]}
    assert error_body_shape(CTX, response(400, body), CASE) is None
    with pytest.raises(AssertionError, match="not a JSON object"):
        error_body_shape(CTX, response(400, None, raw=b"oops"), CASE)


def test_success_content_type_wants_a_json_document() -> None:
    assert success_content_type(CTX, response(201, {"id": "p"}), CASE) is None
    assert success_content_type(CTX, response(404, {}, content_type="text/html"), CASE) is True
    with pytest.raises(AssertionError, match="text/html"):
        success_content_type(CTX, response(200, {}, content_type="text/html"), CASE)
    with pytest.raises(AssertionError, match="the body is not JSON"):
        success_content_type(CTX, response(200, None, raw=b"{"), CASE)


PROFILE_CODES = ErrorCodeMatchesProfile(
    codes={
        "400": ["validation_error", "idempotency_key_missing"],
        "404": ["not_found"],
        "422": ["amount_too_large"],
    },
    open_statuses=["422"],
    validation={"status": 400, "code": "validation_error"},
)


def test_a_pinned_status_must_carry_one_of_its_codes() -> None:
    check = PROFILE_CODES.after_response
    assert check(CTX, response(404, {"code": "not_found", "message": "m"}), CASE) is None
    with pytest.raises(AssertionError, match=r"'missing'.*'not_found'"):
        check(CTX, response(404, {"code": "missing", "message": "m"}), CASE)


def test_an_open_status_takes_any_code_not_pinned_to_another_status() -> None:
    check = PROFILE_CODES.after_response
    assert check(CTX, response(422, {"code": "unknown_currency", "message": "m"}), CASE) is None
    assert check(CTX, response(422, {"code": "amount_too_large", "message": "m"}), CASE) is None
    with pytest.raises(AssertionError, match="another status"):
        check(CTX, response(422, {"code": "validation_error", "message": "m"}), CASE)


def test_a_validation_error_lists_field_message_details() -> None:
    check = PROFILE_CODES.after_response
    good = {"code": "validation_error", "message": "m", "details": [{"field": "f", "message": "x"}]}
    assert check(CTX, response(400, good), CASE) is None
    for details in (None, "f is bad", [{"field": "f"}], [{"field": 1, "message": "x"}]):
        with pytest.raises(AssertionError, match="details"):
            check(CTX, response(400, {**good, "details": details}), CASE)
    missing_key = {"code": "idempotency_key_missing", "message": "m"}
    assert check(CTX, response(400, missing_key), CASE) is None


def test_statuses_the_profile_does_not_pin_are_not_this_checks_business() -> None:
    check = PROFILE_CODES.after_response
    assert check(CTX, response(409, {"code": "anything", "message": "m"}), CASE) is True
    assert check(CTX, response(201, {"id": "p"}), CASE) is True


def test_the_replay_header_on_a_first_use_of_a_key_fails() -> None:
    check = ReplayHeaderOnlyOnReplays("Idempotent-Replayed").after_response
    replayed = {"Idempotent-Replayed": "true"}
    with pytest.raises(AssertionError, match="first use"):
        check(CTX, response(201, {}, headers=replayed, key="k1"), CASE)
    # A key seen before may be replayed.
    assert check(CTX, response(201, {}, key="k2"), CASE) is None
    assert check(CTX, response(201, {}, headers=replayed, key="k2"), CASE) is None
    assert check(CTX, response(200, {}), CASE) is True


DEEP = b"[" * 70_000


def test_a_deeply_nested_body_fails_the_body_checks_without_being_parsed() -> None:
    with pytest.raises(
        AssertionError, match=r"the body is not JSON \(JSON text nests deeper than 256"
    ):
        success_content_type(CTX, response(200, raw=DEEP), CASE)
    with pytest.raises(AssertionError, match="not a JSON object"):
        error_body_shape(CTX, response(422, raw=DEEP), CASE)
    assert ErrorCodeMatchesProfile({"422": ["x"]}).after_response(
        CTX, response(422, raw=DEEP), CASE
    )


def test_refused_body_names_what_cannot_be_parsed_safely() -> None:
    assert refused_body(response(200, raw=DEEP)) == "JSON text nests deeper than 256 levels"
    assert refused_body(response(200, raw=b"[" * 200 + b"]" * 200)) is None
    assert refused_body(response(200, raw=b"not json")) is None  # the checks say it is not JSON


def test_a_defused_response_reads_as_null_for_the_links_of_the_stateful_phase() -> None:
    deep = defuse(response(201, raw=DEEP))
    assert deep.json() is None
    assert defuse(response(201, {"id": "pay_1"})).json() == {"id": "pay_1"}
