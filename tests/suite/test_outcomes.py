"""Which answer is the profile's validation error (``outcomes.is_validation_error``): its status
and its code, so that a business-rule refusal sharing the status is never judged as one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx
import pytest

from conformance.core.profile import Profile, load_profile
from conformance.suite.outcomes import is_validation_error

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
