"""Loading the effective contract into schemathesis (conformance/suite/schema/loading.py)."""

from __future__ import annotations

from dataclasses import replace

import requests

from conformance.core.contract import effective_contract
from conformance.core.profile import Profile, load_profile
from conformance.core.signing import verify
from conformance.judge.schema_requirements import requirement_operations
from conformance.suite.schema.loading import (
    DISABLED_BUILTIN_CHECKS,
    SignedRequests,
    expected_statuses,
    load_schemas,
    our_check_settings,
    signed_session,
)

PROFILE = load_profile()


def prepared(method: str, url: str, body: bytes | str | None = None) -> requests.PreparedRequest:
    request = requests.Request(method, url, data=body, auth=signed_session(PROFILE).auth)
    return request.prepare()


def test_every_request_is_signed_over_the_target_and_the_body_as_sent() -> None:
    request = prepared("POST", "http://127.0.0.1:1/v1/payments?x=1", b'{"a": 1}')
    headers = {k: str(v) for k, v in request.headers.items()}
    credential = PROFILE.primary
    assert headers["X-Api-Key"] == credential.api_key
    assert verify(
        credential.api_secret,
        PROFILE.string_to_sign,
        headers,
        "POST",
        "/v1/payments?x=1",
        b'{"a": 1}',
    )
    assert not verify(
        credential.api_secret, PROFILE.string_to_sign, headers, "POST", "/v1/payments", b'{"a": 1}'
    )


def test_a_request_without_a_body_is_signed_over_nothing_after_the_target() -> None:
    request = prepared("GET", "http://127.0.0.1:1/v1/payments")
    headers = {k: str(v) for k, v in request.headers.items()}
    assert verify(
        PROFILE.primary.api_secret, PROFILE.string_to_sign, headers, "GET", "/v1/payments", b""
    )
    assert isinstance(signed_session(PROFILE).auth, SignedRequests)


def test_expected_statuses_of_a_valid_request_come_from_the_profile_rules() -> None:
    requirements = requirement_operations()
    create = expected_statuses(PROFILE, "createPayment", requirements)
    assert create.positive == (201, 422)
    cancel = expected_statuses(PROFILE, "cancelPayment", requirements)
    assert cancel.positive == (200, 404, 409)
    listing = expected_statuses(PROFILE, "listPayments", requirements)
    assert listing.positive == (200,)
    assert listing.negative == (400,)
    assert cancel.negative == (400, 404)
    assert create.missing_header == (400,)


def test_a_negative_case_may_get_the_profiles_answers_to_a_bad_idempotency_key() -> None:
    """Validation moved to 422: a case that leaves out or breaks the Idempotency-Key may get
    the profile's idempotency answers, which keep their own statuses."""
    profile = profile_with(
        status={"validation": {"status": 422, "code": "invalid_request"}},
        idempotency={
            "missing": {"status": 428, "code": "key_required"},
            "invalid": {"status": 400, "code": "key_malformed"},
        },
    )
    requirements = requirement_operations()
    assert expected_statuses(profile, "createPayment", requirements).negative == (400, 422, 428)
    assert expected_statuses(profile, "settleX402Payment", requirements).negative == (400, 404, 422)
    assert expected_statuses(profile, "listPayments", requirements).negative == (422,)


def profile_with(**sections: dict[str, object]) -> Profile:
    data = {**PROFILE.data, **{k: {**PROFILE.data[k], **v} for k, v in sections.items()}}
    return replace(PROFILE, data=data)


def test_our_class_checks_get_the_profiles_codes() -> None:
    settings = our_check_settings(PROFILE)["ErrorCodeMatchesProfile"]
    assert settings["codes"]["404"] == ["not_found"]
    assert "validation_error" in settings["codes"]["400"]
    assert "422" in settings["open_statuses"]
    assert settings["validation"] == {"status": 400, "code": "validation_error"}


def test_schemas_are_loaded_without_security_parameters_or_unsound_checks() -> None:
    schemas = load_schemas(
        effective_contract(PROFILE),
        PROFILE,
        requirement_operations(),
        base_url="http://127.0.0.1:1",
        seed=3,
        max_examples=2,
        stateful_steps=4,
    )
    for schema in (schemas.contract, schemas.generation):
        config = schema.config
        assert config.generation.with_security_parameters is False
        checks = config.checks_config_for()
        for name in DISABLED_BUILTIN_CHECKS:
            assert not checks.get_by_name(name=name).enabled
    assert [m.value for m in schemas.generation.config.generation.modes] == ["positive"]
    assert [m.value for m in schemas.contract.config.generation.modes] == ["negative"]
    operation = schemas.contract.find_operation_by_id("createPayment")
    per_operation = schemas.contract.config.checks_config_for(operation=operation)
    assert per_operation.positive_data_acceptance.expected_statuses == ["201", "422"]
