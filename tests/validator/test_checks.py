"""ExchangeValidator: one recorded exchange judged against the effective contract and profile.

A client may send anything; the server is judged by its answer. A response must have a status
the operation documents (2xx: the profile's success status), a body matching the schema of that
status and, for an error, the error shape. A request that breaks the contract, lacks an
authentication header or an Idempotency-Key must be refused as the profile states; a server
that accepted it fails the requirement the suite names for the same rule.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from conformance.core.contract import effective_contract
from conformance.core.profile import Profile, load_profile
from conformance.core.redaction import REDACTED
from conformance.core.results import CheckResult, Outcome
from conformance.reference.server import ReferenceServer
from conformance.suite.factories import Factories
from conformance.suite.wire.client import SuiteClient
from conformance.validator.checks import ExchangeValidator, api_path
from conformance.validator.exchange import Exchange
from tests.validator.samples import exchange

# Well-formed authentication headers of the default profile (the signature is not verified:
# a recording masks it).
AUTH = (
    ("X-Api-Key", "mk_test_alpha"),
    ("X-Timestamp", "1763802000"),
    ("X-Nonce", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
    ("X-Signature", REDACTED),  # as a recorder masks it: these tests judge other things
)
KEY = (("Idempotency-Key", "order-2026-0001-key"),)
JSON = (("Content-Type", "application/json"),)
PAYMENT_REQUEST = {
    "quotes": {"usdc": {"amount": "25.00", "chain_ids": ["base"]}},
    "merchant_order_no": "o-1",
}
PAYMENT_CREATED = {
    "id": "pay_1",
    "status": "pending",
    "quotes": {
        "usdc": {
            "amount": "25",
            "code": "USDC",
            "symbol": "$",
            "name": "USD Coin",
            "deployments": [{"chain_id": "base", "asset_kind": "token", "address": "0xabc"}],
        }
    },
    "expires_at": "2026-01-01T01:00:00Z",
    "merchant_order_no": "o-1",
    "checkout_url": "https://pay.example.com/pay_1",
}


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile("default")


@pytest.fixture(scope="module")
def validator(profile: Profile) -> ExchangeValidator:
    return ExchangeValidator(profile)


def create_payment(
    *,
    request_headers: tuple[tuple[str, str], ...] = AUTH + KEY + JSON,
    request_body: Any = PAYMENT_REQUEST,
    status: int = 201,
    response_body: Any = PAYMENT_CREATED,
    response_headers: tuple[tuple[str, str], ...] = JSON,
) -> Exchange:
    return exchange(
        "POST",
        "/v1/payments",
        request_headers=request_headers,
        request_body=request_body,
        status=status,
        response_headers=response_headers,
        response_body=response_body,
    )


def failed(results: list[CheckResult]) -> list[CheckResult]:
    return [r for r in results if r.outcome is Outcome.FAILED]


def failed_ids(results: list[CheckResult]) -> set[str]:
    return {rid for r in failed(results) for rid in r.requirement_ids}


def passed_ids(results: list[CheckResult]) -> set[str]:
    return {rid for r in results if r.outcome is Outcome.PASSED for rid in r.requirement_ids}


# ------------------------------------------------------------------------ identification
def test_identify_matches_path_templates_below_v1_whatever_the_base_url(
    validator: ExchangeValidator,
) -> None:
    assert validator.identify(create_payment()) == "createPayment"
    cancel = exchange("POST", "/v1/payments/pay_1/cancel", base_url="https://x.test/api/v2")
    assert validator.identify(cancel) == "cancelPayment"
    usage = exchange("POST", "/v1/x402/pay%2F1/usage?x=1")
    assert validator.identify(usage) == "reportX402Usage"
    assert validator.identify(exchange("GET", "/v1/payments/pay_1/cancel")) is None
    assert validator.identify(exchange("GET", "/v1/nothing-here")) is None
    assert api_path("/prefix/v1/payments") == "/v1/payments"
    assert api_path("/health") is None


def test_the_profiles_test_helpers_are_known_operations(validator: ExchangeValidator) -> None:
    deposit = exchange(
        "POST",
        "/v1/test-helpers/payments/pay_1/deposit",
        request_headers=AUTH + JSON,
        request_body={"currency_id": "usdc", "chain_id": "base", "amount": "1"},
        response_body={"id": "pay_1"},
    )
    assert validator.identify(deposit) == "testDepositPayment"
    assert not failed(validator.validate(deposit))


# ------------------------------------------------------------------------ a valid exchange
def test_a_valid_create_payment_exchange_passes(validator: ExchangeValidator) -> None:
    results = validator.validate(create_payment())
    assert results and not failed(results)
    assert {"STATUS-001", "OPS-008", "SHAPE-014", "SHAPE-017", "OPS-015"} <= passed_ids(results)
    for result in results:
        assert result.family == "validate"
        assert result.operation_id == "createPayment"
        assert result.check_id.startswith("validate.")
        assert result.evidence is not None and result.evidence.status == 201


def test_evidence_is_the_exchange_redacted(validator: ExchangeValidator) -> None:
    secret = "sk_test_alpha_0123456789abcdef"
    signed = tuple((n, "a" * 64 if n == "X-Signature" else v) for n, v in AUTH)
    ex = create_payment(
        request_headers=(*signed, *KEY, *JSON, ("Authorization", "Bearer t0ken")),
        request_body={**PAYMENT_REQUEST, "memo": secret},
        response_body={**PAYMENT_CREATED, "secret": "whsec_abc"},
    )
    evidence = validator.validate(ex)[0].evidence
    assert evidence is not None
    shown = json.dumps(evidence.__dict__)
    assert "a" * 64 not in shown and "t0ken" not in shown
    assert secret not in shown and "whsec_abc" not in shown
    assert evidence.request_headers["x-signature"] == REDACTED
    assert evidence.curl.startswith("curl -X POST http://127.0.0.1:8000/v1/payments")


# ------------------------------------------------------------------------------ response
def test_a_response_missing_a_required_field_fails_the_shape_naming_it(
    validator: ExchangeValidator,
) -> None:
    body = {k: v for k, v in PAYMENT_CREATED.items() if k != "checkout_url"}
    [result] = failed(validator.validate(create_payment(response_body=body)))
    assert result.check_id == "validate.response_schema"
    assert "checkout_url" in result.message
    assert "SHAPE-017" in result.requirement_ids and "OPS-015" in result.requirement_ids
    assert "SHAPE-001" not in result.requirement_ids  # pinned to the field, not every shape id


def test_a_response_date_time_that_is_not_rfc_3339_fails_shape_001(
    validator: ExchangeValidator,
) -> None:
    body = {**PAYMENT_CREATED, "expires_at": "2026-01-01 01:00:00"}
    assert "SHAPE-001" in failed_ids(validator.validate(create_payment(response_body=body)))


def test_a_success_status_other_than_the_profiles_fails(validator: ExchangeValidator) -> None:
    [result] = failed(validator.validate(create_payment(status=200)))
    assert result.check_id == "validate.status"
    assert result.requirement_ids == ("STATUS-001",)
    assert "201" in result.message


def test_a_status_the_operation_does_not_document_fails(validator: ExchangeValidator) -> None:
    error = {"code": "forbidden", "message": "no"}
    results = validator.validate(create_payment(status=403, response_body=error))
    assert [r.check_id for r in failed(results)] == ["validate.status"]


def test_a_server_error_fails_err_006(validator: ExchangeValidator) -> None:
    error = {"code": "internal", "message": "boom"}
    results = validator.validate(create_payment(status=500, response_body=error))
    assert failed_ids(results) == {"ERR-006"}


def test_an_error_body_without_code_fails_err_003(validator: ExchangeValidator) -> None:
    ex = create_payment(status=409, response_body={"message": "duplicate order"})
    results = validator.validate(ex)
    shape = next(r for r in failed(results) if r.check_id == "validate.error_shape")
    assert shape.requirement_ids == ("ERR-003", "ERR-005")


def test_an_error_served_as_text_fails_err_001_and_002(validator: ExchangeValidator) -> None:
    ex = create_payment(
        status=409, response_headers=(("Content-Type", "text/plain"),), response_body="no"
    )
    assert {"ERR-001", "ERR-002", "ERR-003", "ERR-004", "ERR-005"} <= failed_ids(
        validator.validate(ex)
    )


def test_an_error_code_the_profile_does_not_give_that_status_fails(
    validator: ExchangeValidator,
) -> None:
    # The profile answers an illegal transition with 409 invalid_state.
    ex = exchange(
        "POST",
        "/v1/payments/pay_1/cancel",
        request_headers=AUTH + KEY,
        status=409,
        response_body={"code": "not_found", "message": "x"},
    )
    [result] = failed(validator.validate(ex))
    assert result.check_id == "validate.response_schema"
    assert result.requirement_ids == ("STATUS-014",)


def test_a_well_formed_refusal_passes(validator: ExchangeValidator) -> None:
    error = {"code": "duplicate_order", "message": "merchant_order_no already used"}
    results = validator.validate(create_payment(status=409, response_body=error))
    assert not failed(results)
    assert {"ERR-001", "ERR-002", "ERR-003", "ERR-004", "ERR-005"} <= passed_ids(results)


# ------------------------------------------------------------------------------- request
X402_REQUEST = {"currency_id": "usdc", "chain_id": "base", "amount": "01"}


def x402_requirements(status: int, response_body: Any) -> Exchange:
    return exchange(
        "POST",
        "/v1/x402/requirements",
        request_headers=AUTH + KEY + JSON,
        request_body=X402_REQUEST,
        status=status,
        response_body=response_body,
    )


def test_a_request_breaking_a_pattern_that_the_server_accepted_fails(
    validator: ExchangeValidator,
) -> None:
    results = validator.validate(x402_requirements(201, {"accepts": []}))
    [result] = [r for r in failed(results) if r.check_id == "validate.request_schema"]
    assert "amount" in result.message and "'01'" in result.message
    assert "STATUS-006" in result.requirement_ids


def test_the_same_request_refused_with_the_validation_error_passes(
    validator: ExchangeValidator,
) -> None:
    error = {
        "code": "validation_error",
        "message": "invalid",
        "details": [{"field": "amount", "message": "does not match"}],
    }
    results = validator.validate(x402_requirements(400, error))
    assert not failed(results)
    request = next(r for r in results if r.check_id == "validate.request_schema")
    assert "STATUS-006" in request.requirement_ids


def test_an_invalid_request_refused_with_another_status_fails(
    validator: ExchangeValidator,
) -> None:
    error = {"code": "bad_amount", "message": "invalid"}
    results = validator.validate(x402_requirements(422, error))
    assert "STATUS-006" in failed_ids(results)


def validation_422(profile: Profile) -> ExchangeValidator:
    """Contract violations answered 422 ``invalid_request``, the business rules' status."""
    status = {**profile.data["status"], "validation": {"status": 422, "code": "invalid_request"}}
    return ExchangeValidator(replace(profile, data={**profile.data, "status": status}))


@pytest.mark.parametrize(
    ("code", "outcome"), [("invalid_request", Outcome.PASSED), ("unknown_currency", Outcome.FAILED)]
)
def test_when_business_rules_share_the_validation_status_the_code_tells_a_refusal(
    profile: Profile, code: str, outcome: Outcome
) -> None:
    results = validation_422(profile).validate(
        x402_requirements(422, {"code": code, "message": "no"})
    )
    [request] = [r for r in results if r.check_id == "validate.request_schema"]
    assert request.outcome is outcome


def test_a_malformed_request_without_its_key_may_be_refused_for_the_key(profile: Profile) -> None:
    """The key may be looked at before the body: the key's answer is no failure of validation."""
    missing = {"code": "idempotency_key_missing", "message": "no key"}
    bad = create_payment(
        request_headers=AUTH + JSON, request_body={"quotes": 1}, status=400, response_body=missing
    )
    results = validation_422(profile).validate(bad)
    assert not [r for r in failed(results) if r.check_id == "validate.request_schema"]
    assert "IDEM-005" in passed_ids(results)


def test_a_query_parameter_that_is_not_an_integer_accepted_fails(
    validator: ExchangeValidator,
) -> None:
    ex = exchange(
        "GET", "/v1/payments?limit=ten", request_headers=AUTH, response_body={"payments": []}
    )
    assert "OPS-017" in failed_ids(validator.validate(ex))


def test_a_missing_auth_header_accepted_fails(validator: ExchangeValidator) -> None:
    headers = tuple(h for h in AUTH if h[0] != "X-Signature") + KEY + JSON
    results = failed(validator.validate(create_payment(request_headers=headers)))
    assert {r.check_id for r in results} == {"validate.auth"}
    # the spec's rule (a refusal) and the profile's (its answer to a missing header)
    assert [r.requirement_ids for r in results] == [("AUTH-002",), ("AUTH-006",)]


def test_a_missing_auth_header_refused_with_401_passes(validator: ExchangeValidator) -> None:
    headers = tuple(h for h in AUTH if h[0] != "X-Nonce")
    error = {"code": "unauthorized", "message": "missing X-Nonce header"}
    results = validator.validate(
        create_payment(request_headers=headers, status=401, response_body=error)
    )
    assert not failed(results)
    assert {"AUTH-004", "AUTH-006"} <= passed_ids(results)


@pytest.mark.parametrize(
    ("header", "value", "rid"),
    [("X-Timestamp", "2026-01-01T00:00:00Z", "AUTH-007"), ("X-Nonce", "short", "AUTH-008")],
)
def test_a_malformed_auth_header_accepted_fails(
    validator: ExchangeValidator, header: str, value: str, rid: str
) -> None:
    headers = tuple((n, value if n == header else v) for n, v in AUTH) + KEY + JSON
    assert failed_ids(validator.validate(create_payment(request_headers=headers))) == {rid}


def test_a_masked_auth_header_counts_as_present(validator: ExchangeValidator) -> None:
    headers = tuple((n, REDACTED if n == "X-Signature" else v) for n, v in AUTH) + KEY + JSON
    assert not failed(validator.validate(create_payment(request_headers=headers)))


def test_a_create_accepted_without_idempotency_key_fails(validator: ExchangeValidator) -> None:
    [result] = failed(validator.validate(create_payment(request_headers=AUTH + JSON)))
    assert result.check_id == "validate.idempotency"
    assert result.requirement_ids == ("IDEM-001", "IDEM-005")


def test_a_create_refused_for_its_missing_idempotency_key_passes(
    validator: ExchangeValidator,
) -> None:
    error = {"code": "idempotency_key_missing", "message": "an Idempotency-Key is required"}
    ex = create_payment(request_headers=AUTH + JSON, status=400, response_body=error)
    results = validator.validate(ex)
    assert not failed(results)
    assert {"IDEM-001", "IDEM-005"} <= passed_ids(results)


def test_settle_refused_for_lacking_an_idempotency_key_fails(
    validator: ExchangeValidator,
) -> None:
    error = {"code": "idempotency_key_missing", "message": "required"}
    ex = exchange(
        "POST",
        "/v1/x402/settle",
        request_headers=AUTH + JSON,
        request_body={},
        status=400,
        response_body=error,
    )
    assert {"IDEM-002", "IDEM-018"} <= failed_ids(validator.validate(ex))


def test_a_list_processed_without_an_idempotency_key_passes_idem_003(
    validator: ExchangeValidator,
) -> None:
    ex = exchange("GET", "/v1/payments", request_headers=AUTH, response_body={"payments": []})
    assert "IDEM-003" in passed_ids(validator.validate(ex))


def test_an_idempotency_key_too_long_accepted_fails(validator: ExchangeValidator) -> None:
    headers = (*AUTH, ("Idempotency-Key", "k" * 129), *JSON)
    assert failed_ids(validator.validate(create_payment(request_headers=headers))) == {
        "LIMIT-001",
        "IDEM-006",
    }


# ---------------------------------------------------------------------- unknown operations
def test_an_unknown_path_answered_with_success_fails_once(validator: ExchangeValidator) -> None:
    ex = exchange("GET", "/v1/admin/users", request_headers=AUTH, response_body={"users": []})
    [result] = validator.validate(ex)
    assert result.outcome is Outcome.FAILED
    assert result.requirement_ids == ("STATUS-020",)
    assert result.operation_id is None
    assert "no operation of the contract" in result.message


def test_an_unknown_path_answered_404_passes(validator: ExchangeValidator) -> None:
    error = {"code": "not_found", "message": "no such path"}
    ex = exchange("GET", "/v1/admin/users", request_headers=AUTH, status=404, response_body=error)
    results = validator.validate(ex)
    assert [r.check_id for r in results] == ["validate.operation", "validate.error_shape"]
    assert all(r.outcome is Outcome.PASSED for r in results)


def test_an_unknown_path_answered_with_an_html_404_fails_the_error_body_rules(
    validator: ExchangeValidator,
) -> None:
    html = (("Content-Type", "text/html"),)
    ex = exchange(
        "GET",
        "/v1/admin/users",
        request_headers=AUTH,
        status=404,
        response_headers=html,
        response_body="<html><body>Not Found</body></html>",
    )
    operation, shape = validator.validate(ex)
    # the right status without the profile's code, the wrong body: the not-found rule and the
    # error-body rules fail, as in the suite's run
    assert (operation.outcome, operation.requirement_ids) == (Outcome.FAILED, ("STATUS-020",))
    assert shape.outcome is Outcome.FAILED
    assert "not application/json" in shape.message
    assert {"ERR-001", "ERR-005"} <= set(shape.requirement_ids)


def test_an_unknown_paths_404_without_a_recorded_body_is_judged_by_its_status_alone(
    validator: ExchangeValidator,
) -> None:
    ex = exchange("GET", "/v1/admin/users", request_headers=AUTH, status=404, response_body=b"")
    [result] = validator.validate(ex)
    assert (result.outcome, result.requirement_ids) == (Outcome.PASSED, ("STATUS-020",))


def test_an_unknown_path_without_credentials_must_get_the_auth_error(
    validator: ExchangeValidator,
) -> None:
    ex = exchange("GET", "/v1/admin/users", status=404, response_body={"code": "x"})
    result, *_ = validator.validate(ex)
    assert (result.outcome, result.requirement_ids) == (Outcome.FAILED, ("STATUS-019",))


def test_without_auth_before_routing_an_unknown_path_without_credentials_may_get_either(
    profile: Profile,
) -> None:
    # the divergent profile does not say which comes first: 401 and 404 are both right
    divergent = ExchangeValidator(load_profile("divergent"))

    auth, not_found = (
        divergent.profile.auth.error_for("missing"),
        divergent.profile.error("status", "not_found"),
    )

    def routing(status: int, code: str | None) -> list[Outcome]:
        refused = {"code": code, "message": "no"}
        ex = exchange("GET", "/v1/admin/users", status=status, response_body=refused)
        return [r.outcome for r in divergent.validate(ex) if r.check_id == "validate.operation"]

    assert routing(auth.status, auth.code) == [Outcome.PASSED]
    assert routing(not_found.status, not_found.code) == [Outcome.PASSED]
    assert routing(not_found.status, "x") == [Outcome.FAILED]  # the profile's code, not another
    assert routing(409, "x") == [Outcome.FAILED]


@pytest.mark.parametrize(("status", "outcome"), [(415, Outcome.PASSED), (201, Outcome.FAILED)])
def test_a_body_of_another_media_type_gets_the_profiles_answer(
    status: int, outcome: Outcome
) -> None:
    # the divergent profile answers it with 415 only, a status no operation documents
    divergent = ExchangeValidator(load_profile("divergent"))
    refused = {"code": "unsupported_content_type", "message": "text/plain"}
    auth = tuple((n, "2026-01-01T00:00:00Z" if n == "X-Timestamp" else v) for n, v in AUTH)
    ex = exchange(
        "POST", "/v1/payments", request_headers=(*auth, *KEY, ("Content-Type", "text/plain")),
        request_body=json.dumps(PAYMENT_REQUEST), status=status,
        response_body=refused if status == 415 else PAYMENT_CREATED,
    )  # fmt: skip
    results = divergent.validate(ex)
    assert [r.outcome for r in results if "STATUS-021" in r.requirement_ids] == [outcome]
    # judged by that rule alone, not as an undocumented status of the operation
    assert not [r for r in results if "STATUS-001" in r.requirement_ids]


def test_a_known_path_with_another_method_must_get_405(validator: ExchangeValidator) -> None:
    ex = exchange("DELETE", "/v1/payments", request_headers=AUTH, status=200)
    [result] = validator.validate(ex)
    assert (result.outcome, result.requirement_ids) == (Outcome.FAILED, ("STATUS-017",))
    assert "GET, POST" in result.message


def test_a_405_without_an_allow_header_fails(validator: ExchangeValidator) -> None:
    refused = {"code": "method_not_allowed", "message": "GET is not allowed on this path"}
    ex = exchange(
        "GET", "/v1/split-template", request_headers=AUTH, status=405, response_body=refused
    )
    operation, _ = validator.validate(ex)
    assert (operation.outcome, operation.requirement_ids) == (Outcome.FAILED, ("STATUS-017",))
    assert "without an Allow header" in operation.message


def test_a_405_whose_allow_header_lists_the_paths_methods_passes(
    validator: ExchangeValidator,
) -> None:
    refused = {"code": "method_not_allowed", "message": "DELETE is not allowed on this path"}
    ex = exchange(
        "DELETE",
        "/v1/payments",
        request_headers=AUTH,
        status=405,
        response_headers=(*JSON, ("Allow", "GET, POST")),
        response_body=refused,
    )
    operation, _ = validator.validate(ex)
    assert (operation.outcome, operation.requirement_ids) == (Outcome.PASSED, ("STATUS-017",))
    repeated = replace(ex, response_headers=(*JSON, ("Allow", "GET"), ("Allow", "POST")))
    assert validator.validate(repeated)[0].outcome is Outcome.PASSED
    partial = replace(ex, response_headers=(*JSON, ("Allow", "GET")))
    operation, _ = validator.validate(partial)
    assert operation.outcome is Outcome.FAILED
    assert "leaves out POST" in operation.message


def test_an_operation_served_without_its_v1_prefix_fails(validator: ExchangeValidator) -> None:
    ex = exchange("GET", "/payments", request_headers=AUTH, status=200, response_body={})
    [result] = validator.validate(ex)
    assert (result.outcome, result.requirement_ids) == (Outcome.FAILED, ("VER-001", "STATUS-020"))
    assert "without its /v1 prefix was served (200)" in result.message


def test_an_operation_without_its_v1_prefix_answered_404_passes(
    validator: ExchangeValidator,
) -> None:
    missing = {"code": "not_found", "message": "no operation at /payments"}
    ex = exchange("GET", "/payments", request_headers=AUTH, status=404, response_body=missing)
    result, _ = validator.validate(ex)
    assert (result.outcome, result.requirement_ids) == (Outcome.PASSED, ("VER-001", "STATUS-020"))


def test_an_operation_without_its_v1_prefix_refused_otherwise_is_not_served(
    validator: ExchangeValidator,
) -> None:
    # another refusal may be for a reason of its own: VER-001 holds, STATUS-020 is not judged
    refused = {"code": "validation_error", "message": "no"}
    ex = exchange("GET", "/payments", request_headers=AUTH, status=400, response_body=refused)
    outcomes = {r.requirement_ids: r.outcome for r in validator.validate(ex)}
    assert outcomes[("VER-001",)] is Outcome.PASSED
    assert outcomes[("STATUS-020",)] is Outcome.NOT_EXERCISED


def test_a_body_over_the_limit_answered_with_a_server_error_fails_the_size_rule(
    validator: ExchangeValidator,
) -> None:
    body = b'{"a":"' + b"x" * validator.profile.status.max_body_bytes + b'"}'
    ex = create_payment(request_body=body, status=500, response_body={"code": "internal"})
    assert {"STATUS-018", "ERR-006"} <= set(failed_ids(validator.validate(ex)))
    spec = validator.profile.status.payload_too_large
    answer = {"code": spec.code or "payload_too_large", "message": "too large"}
    refused = replace(ex, status=spec.status, response_body=json.dumps(answer).encode())
    assert "STATUS-018" in passed_ids(validator.validate(refused))


def test_an_unversioned_path_without_the_apis_headers_is_no_api_call(
    validator: ExchangeValidator,
) -> None:
    """A shop's own page at /payments, recorded by a browser: not the API's."""
    [result] = validator.validate(exchange("GET", "/payments", status=200, response_body="<p>"))
    assert (result.outcome, result.requirement_ids) == (Outcome.NOT_EXERCISED, ())


def test_a_path_outside_v1_is_said_to_be_no_api_call_and_not_judged(
    validator: ExchangeValidator,
) -> None:
    [result] = validator.validate(exchange("GET", "/app.js", request_headers=AUTH, status=200))
    assert (result.outcome, result.requirement_ids) == (Outcome.NOT_EXERCISED, ())
    assert result.reason_not_exercised and "not under /v1" in result.reason_not_exercised


def test_an_unknown_path_answered_with_a_server_error_fails_err_006(
    validator: ExchangeValidator,
) -> None:
    ex = exchange("GET", "/v1/admin", request_headers=AUTH, status=502, response_body=b"")
    results = validator.validate(ex)
    assert [(r.outcome, r.requirement_ids) for r in results] == [
        (Outcome.FAILED, ("STATUS-020",)),
        (Outcome.FAILED, ("ERR-006",)),
    ]


def test_an_exchange_without_response_has_nothing_to_judge(
    validator: ExchangeValidator,
) -> None:
    assert (
        validator.validate(exchange("GET", "/v1/payments", request_headers=AUTH, status=None)) == []
    )


# --------------------------------------------------- real traffic of the reference server
def _traffic(profile: Profile, faults: tuple[str, ...] = ()) -> list[Exchange]:
    """About 50 exchanges with the reference server: every operation, prerequisites, a test
    helper and refusals (unknown path, wrong method, invalid body, missing credentials...)."""
    seen: list[Exchange] = []

    def record(request: Any, response: Any) -> None:
        seen.append(
            Exchange(
                method=request.method,
                url=str(request.url),
                request_headers=tuple(request.headers.multi_items()),
                request_body=request.content,
                status=None if response is None else response.status_code,
                response_headers=() if response is None else tuple(response.headers.multi_items()),
                response_body=b"" if response is None else response.content,
                source=f"reference exchange {len(seen) + 1}",
            )
        )

    with (
        ReferenceServer(profile=profile, faults=faults) as server,
        SuiteClient(server.base_url, profile) as client,
    ):
        client.observers.append(record)
        factories = Factories(client, profile, effective_contract(profile))
        for operation_id in _operation_ids(profile):
            factories.send(factories.request(operation_id))
        factories.underpaid_payment()  # the deposit test helper
        client.get("/v1/nothing-here")
        client.request("DELETE", "/v1/payments")
        client.post("/v1/payments", json={"quotes": {}})
        client.post("/v1/payments", json=factories.payment_body(), idempotency_key=None)
        client.post("/v1/payments", json=factories.payment_body(), idempotency_key="k" * 129)
        client.get("/v1/payments", auth={"X-Nonce": None})
        client.get("/v1/payments", auth={"X-Timestamp": "yesterday"})
        client.get("/v1/payments", params={"limit": "abc"})
        client.get("/v1/payments", params={"limit": 0})
        client.post("/v1/payments/pay_unknown/cancel")
        client.post("/v1/x402/settle", json={"payment_id": 1}, idempotency_key=None)
    return seen


def _operation_ids(profile: Profile) -> Iterator[str]:
    from conformance.core.contract import operations

    for op in operations():
        yield op.operation_id


@pytest.fixture(scope="module")
def healthy_traffic(profile: Profile) -> list[Exchange]:
    return _traffic(profile)


def test_every_exchange_with_a_healthy_reference_server_passes(
    validator: ExchangeValidator, healthy_traffic: list[Exchange]
) -> None:
    assert len(healthy_traffic) >= 45
    results = [r for ex in healthy_traffic for r in validator.validate(ex)]
    assert not failed(results), [(r.check_id, r.message) for r in failed(results)]
    assert {validator.identify(ex) for ex in healthy_traffic} >= {
        "createPayment",
        "getStatement",
        "settleX402Payment",
        "testDepositPayment",
        None,
    }
    # Refusals were judged too, not skipped.
    assert {"AUTH-004", "AUTH-007", "IDEM-005", "IDEM-006", "OPS-017", "STATUS-013"} <= passed_ids(
        results
    )


def test_a_payout_schedule_amount_with_a_leading_zero_fails_shape_012(
    validator: ExchangeValidator, healthy_traffic: list[Exchange]
) -> None:
    created = next(
        ex
        for ex in healthy_traffic
        if validator.identify(ex) == "createPayoutSchedule" and ex.status == 201
    )
    body = json.loads(created.response_body)
    body["min_send_amount"] = "01"
    broken = Exchange(
        **{**created.__dict__, "response_body": json.dumps(body).encode()}  # same exchange
    )
    results = {r.check_id.split()[0]: r for r in failed(validator.validate(broken))}
    # the answer is also not the amount requested (1.5): the create's echo
    assert set(results) == {"validate.response_schema", "validate.answer"}
    assert results["validate.answer"].requirement_ids == ("OPS-003",)
    result = results["validate.response_schema"]
    # the field's shape and, as the responses family judges it, "the success response MUST be
    # a payout schedule"
    assert {"SHAPE-012", "OPS-024"} <= set(result.requirement_ids)
    assert result.evidence is not None and '"01"' in (result.evidence.response_body or "")


@pytest.mark.parametrize(
    ("status", "ids"),
    [
        (422, ("STATUS-006",)),  # refused, with another answer: the profile's status only
        (500, ("SHAPE-040", "STATUS-006")),  # not refused at all (and ERR-006)
    ],
)
def test_a_near_miss_answered_otherwise_than_the_validation_error_names_the_constraint(
    validator: ExchangeValidator, healthy_traffic: list[Exchange], status: int, ids: tuple[str, ...]
) -> None:
    created = next(
        ex
        for ex in healthy_traffic
        if validator.identify(ex) == "createPayoutSchedule" and ex.status == 201
    )
    request = json.loads(created.request_body) | {"min_send_amount": "1.5\n"}
    answer = json.dumps({"code": "business_rule", "message": "no"}).encode()
    # the signature masked, as a recorder without the secret leaves it: a changed body would
    # otherwise be a forged request, judged by the auth checks alone
    headers = tuple(
        (name, "[redacted]" if name.lower() == "x-signature" else value)
        for name, value in created.request_headers
    )
    near_miss = Exchange(
        **{
            **created.__dict__,
            "request_headers": headers,
            "request_body": json.dumps(request).encode(),
            "status": status,
            "response_body": answer,
        }
    )
    [schema] = [r for r in failed(validator.validate(near_miss)) if "request_schema" in r.check_id]
    assert schema.requirement_ids == ids


def test_the_fault_of_a_faulted_reference_server_is_found(
    validator: ExchangeValidator, profile: Profile
) -> None:
    traffic = _traffic(profile, faults=("shape-expires-at-not-date-time",))
    failures = failed([r for ex in traffic for r in validator.validate(ex)])
    assert failures
    assert all(r.check_id.startswith("validate.response_schema") for r in failures)
    assert all("SHAPE-001" in r.requirement_ids for r in failures)
    assert {r.operation_id for r in failures} >= {"createPayment", "listPayments"}


def test_passed_results_can_leave_their_evidence_off(profile: Profile) -> None:
    lean = ExchangeValidator(profile, pass_evidence=False)
    assert all(r.evidence is None for r in lean.validate(create_payment()))
    [failure] = failed(lean.validate(create_payment(status=200)))
    assert failure.evidence is not None and failure.evidence.status == 200


def test_a_rate_limit_answer_is_not_judged(validator: ExchangeValidator) -> None:
    # a recording keeps the suite's 429s; the request sent again after the wait is the one judged
    limited = {"code": "rate_limited", "message": "slow down"}
    assert validator.validate(create_payment(status=429, response_body=limited)) == []
    unavailable = create_payment(
        status=503, response_body=limited, response_headers=(*JSON, ("retry-after", "1"))
    )
    assert validator.validate(unavailable) == []
    assert failed(validator.validate(create_payment(status=503, response_body=limited)))


# ------------------------------------------------------------------- bodies the recorder cut
def test_a_body_the_recording_cut_is_not_judged_but_the_status_still_is(
    validator: ExchangeValidator,
) -> None:
    from dataclasses import replace

    cut = json.dumps(PAYMENT_CREATED)[:40]  # run --record cut it (_truncated): not JSON
    whole = create_payment(response_body=cut)
    assert "OPS-008" in failed_ids(validator.validate(whole))  # judged, it fails: not JSON

    results = validator.validate(replace(whole, truncated=True))
    assert not failed(results)
    unjudged = [r for r in results if r.outcome is Outcome.NOT_EXERCISED]
    assert unjudged and all("the recording cut" in str(r.reason_not_exercised) for r in unjudged)
    assert "STATUS-001" in passed_ids(results)
    server_error = replace(create_payment(status=500, response_body=cut), truncated=True)
    assert "ERR-006" in failed_ids(validator.validate(server_error))
    # a 413 to a request whose body the recording left out: its size is unknown, not judged
    too_large = {"code": "payload_too_large", "message": "too large"}
    left_out = create_payment(request_body=b"", status=413, response_body=too_large)
    assert failed(validator.validate(left_out))  # judged on the body it shows, it fails
    assert not failed(validator.validate(replace(left_out, truncated=True)))


# ------------------------------------------------------------------- bodies not captured
def not_captured(ex: Exchange) -> Exchange:
    """``ex`` as a browser exports it without the response body (no content.text)."""
    reason = "the recording holds no response body (HAR response.content.text absent)"
    return replace(ex, response_body=b"", response_body_missing=reason)


def test_a_success_whose_body_was_not_captured_leaves_the_body_checks_not_exercised(
    validator: ExchangeValidator,
) -> None:
    results = validator.validate(not_captured(create_payment()))
    assert failed(results) == []
    media = next(r for r in results if "OPS-008" in r.requirement_ids)
    assert media.outcome is Outcome.NOT_EXERCISED
    assert "content.text absent" in (media.reason_not_exercised or "")
    schema = next(r for r in results if r.check_id == "validate.response_schema")
    assert schema.outcome is Outcome.NOT_EXERCISED
    # what the headers show is still judged
    as_text = replace(create_payment(), response_headers=(("Content-Type", "text/html"),))
    assert "OPS-008" in failed_ids(validator.validate(not_captured(as_text)))


def test_an_error_whose_body_was_not_captured_leaves_the_error_shape_not_exercised(
    validator: ExchangeValidator,
) -> None:
    error = create_payment(status=422, response_body={"code": "idempotency_key_reused"})
    results = validator.validate(not_captured(error))
    assert failed(results) == []
    shape = next(r for r in results if r.check_id == "validate.error_shape")
    assert shape.outcome is Outcome.NOT_EXERCISED
    assert set(shape.requirement_ids) >= {"ERR-002", "ERR-003", "ERR-004", "ERR-005"}
