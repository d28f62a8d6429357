"""Tenant isolation in recorded traffic: one API key's ids named by another key."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.core.results import CheckResult, Outcome
from conformance.validator.isolation import TenantChecks
from conformance.validator.tables import request_headers
from tests.validator.samples import exchange

ALPHA, BETA = "mk_test_alpha", "mk_test_beta"
NOT_FOUND = {"code": "not_found", "message": "no such payment"}


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile("default")


@pytest.fixture
def tenants(profile: Profile) -> TenantChecks:
    return TenantChecks(profile)


def send(
    tenants: TenantChecks,
    operation_id: str,
    method: str,
    path: str,
    api_key: str,
    *,
    status: int = 200,
    body: Any = None,
    request_body: Any = b"",
) -> list[tuple[str, tuple[str, ...], Outcome, str]]:
    ex = exchange(
        method,
        path,
        request_headers=[("X-Api-Key", api_key)],
        request_body=request_body,
        status=status,
        response_body=body if body is not None else b"",
    )
    return list(tenants.observe(ex, operation_id, request_headers(ex), body))


def outcomes(findings: list[tuple[str, tuple[str, ...], Outcome, str]], rid: str) -> list[Outcome]:
    return [outcome for _, ids, outcome, _ in findings if rid in ids]


def created_payment(tenants: TenantChecks, api_key: str = ALPHA, pid: str = "pay_a1") -> None:
    send(
        tenants,
        "createPayment",
        "POST",
        "/v1/payments",
        api_key,
        status=201,
        body={"id": pid, "status": "pending"},
    )


def test_another_merchants_payment_answered_with_success_fails(tenants: TenantChecks) -> None:
    created_payment(tenants)
    canceled = send(
        tenants,
        "cancelPayment",
        "POST",
        "/v1/payments/pay_a1/cancel",
        BETA,
        body={"id": "pay_a1", "status": "canceled"},
    )
    assert outcomes(canceled, "TEN-001") == [Outcome.FAILED]
    assert "created by another API key" in canceled[0][3]
    refused = send(
        tenants,
        "cancelPayment",
        "POST",
        "/v1/payments/pay_a1/cancel",
        BETA,
        status=404,
        body=NOT_FOUND,
    )
    assert outcomes(refused, "TEN-001") == [Outcome.PASSED]


def test_another_merchants_id_answered_404_with_another_code_fails(tenants: TenantChecks) -> None:
    # TEN-001 names the profile's not-found answer, its code too
    created_payment(tenants)
    path = "/v1/payments/pay_a1/cancel"
    other = {"code": "resource_not_found", "message": "no such payment"}
    found = send(tenants, "cancelPayment", "POST", path, BETA, status=404, body=other)
    assert outcomes(found, "TEN-001") == [Outcome.FAILED]
    assert "code 'resource_not_found', not 'not_found'" in found[0][3]
    # no body recorded: the status is all there is to judge
    unread = send(tenants, "cancelPayment", "POST", path, BETA, status=404)
    assert outcomes(unread, "TEN-001") == [Outcome.PASSED]


def test_the_owner_acting_on_its_own_ids_is_not_judged(tenants: TenantChecks) -> None:
    created_payment(tenants)
    mine = send(
        tenants,
        "cancelPayment",
        "POST",
        "/v1/payments/pay_a1/cancel",
        ALPHA,
        body={"id": "pay_a1", "status": "canceled"},
    )
    assert mine == []


@pytest.mark.parametrize(
    "operation_id, path, requirement",
    [
        ("testDepositPayment", "/v1/test-helpers/payments/pay_a1/deposit", "HELP-009"),
        ("testExpirePayment", "/v1/test-helpers/payments/pay_a1/expire", "HELP-009"),
        ("reportX402Usage", "/v1/x402/pay_a1/usage", "TEN-006"),
    ],
)
def test_every_operation_naming_an_id_is_judged(
    tenants: TenantChecks, operation_id: str, path: str, requirement: str
) -> None:
    created_payment(tenants)
    findings = send(tenants, operation_id, "POST", path, BETA, body={"id": "pay_a1"})
    assert outcomes(findings, requirement) == [Outcome.FAILED]


def test_an_x402_payment_is_named_by_the_settle_body(tenants: TenantChecks) -> None:
    send(
        tenants,
        "createX402Requirements",
        "POST",
        "/v1/x402/requirements",
        ALPHA,
        status=201,
        body={"payment_id": "pay_x1", "accepts": []},
    )
    findings = send(
        tenants,
        "settleX402Payment",
        "POST",
        "/v1/x402/settle",
        BETA,
        request_body={"payment_id": "pay_x1"},
        body={"success": True},
    )
    assert outcomes(findings, "TEN-006") == [Outcome.FAILED]


def test_ids_learnt_from_a_list_count_too(tenants: TenantChecks) -> None:
    """A delivery id appears only in its owner's delivery list."""
    listing = {"data": [{"id": "dlv_1", "event_type": "payment.settled"}]}
    send(tenants, "listWebhookDeliveries", "GET", "/v1/webhook-deliveries", ALPHA, body=listing)
    resent = send(
        tenants,
        "resendWebhookDelivery",
        "POST",
        "/v1/webhook-deliveries/dlv_1/resend",
        BETA,
        status=202,
        body={"id": "dlv_2"},
    )
    assert outcomes(resent, "TEN-005") == [Outcome.FAILED]


def test_a_list_showing_another_merchants_payment_fails(tenants: TenantChecks) -> None:
    created_payment(tenants)
    created_payment(tenants, BETA, "pay_b1")
    own = send(
        tenants,
        "listPayments",
        "GET",
        "/v1/payments",
        BETA,
        body={"data": [{"id": "pay_b1", "status": "pending"}]},
    )
    assert outcomes(own, "TEN-004") == [Outcome.PASSED]
    leak = send(
        tenants,
        "listPayments",
        "GET",
        "/v1/payments",
        BETA,
        body={"data": [{"id": "pay_b1"}, {"id": "pay_a1"}]},
    )
    assert outcomes(leak, "TEN-004") == [Outcome.FAILED]


def test_webhook_endpoint_ids_are_per_merchant(tenants: TenantChecks) -> None:
    """Both merchants may put an endpoint "primary": each rotates its own."""
    for key in (ALPHA, BETA):
        send(
            tenants,
            "putWebhookEndpoint",
            "PUT",
            "/v1/webhook-endpoints/primary",
            key,
            body={"id": "primary"},
        )
    rotated = send(
        tenants,
        "rotateWebhookEndpointSecret",
        "POST",
        "/v1/webhook-endpoints/primary/rotate-secret",
        BETA,
        body={"id": "primary"},
    )
    assert rotated == []


def test_another_merchants_payment_refused_for_its_state_fails(tenants: TenantChecks) -> None:
    """A 409 invalid_state shows the payment was found: another merchant's id must be 404."""
    created_payment(tenants)
    conflict = {"code": "invalid_state", "message": "cannot cancel a settled payment"}
    found = send(
        tenants, "cancelPayment", "POST", "/v1/payments/pay_a1/cancel", BETA, status=409,
        body=conflict,
    )  # fmt: skip
    assert outcomes(found, "TEN-001") == [Outcome.FAILED]
    deposit = "/v1/test-helpers/payments/pay_a1/deposit"
    helper = send(tenants, "testDepositPayment", "POST", deposit, BETA, status=409, body=conflict)
    assert outcomes(helper, "HELP-009") == [Outcome.FAILED]


def test_another_merchants_payment_forbidden_fails_and_an_auth_refusal_is_not_judged(
    tenants: TenantChecks,
) -> None:
    """A 403 that is no authentication answer of the profile shows the id was found; the
    profile's auth refusal (401) and validation error say nothing of it."""
    created_payment(tenants)
    cancel = "/v1/payments/pay_a1/cancel"
    forbidden = {"code": "forbidden", "message": "not your payment"}
    found = send(tenants, "cancelPayment", "POST", cancel, BETA, status=403, body=forbidden)
    assert outcomes(found, "TEN-001") == [Outcome.FAILED]
    for status, code in ((401, "unauthorized"), (400, "validation_error")):
        body = {"code": code, "message": "no"}
        assert send(tenants, "cancelPayment", "POST", cancel, BETA, status=status, body=body) == []


def deliveries(*ids: str) -> dict[str, Any]:
    return {"deliveries": [{"id": i, "event_type": "payment.created"} for i in ids]}


def test_a_delivery_list_showing_another_merchants_delivery_fails_ten_005(
    tenants: TenantChecks,
) -> None:
    path = "/v1/webhook-deliveries"
    send(tenants, "listWebhookDeliveries", "GET", path, ALPHA, body=deliveries("msg_a"))
    leak = send(
        tenants, "listWebhookDeliveries", "GET", path, BETA, body=deliveries("msg_a", "msg_b")
    )
    assert outcomes(leak, "TEN-005") == [Outcome.FAILED]


def test_delivery_lists_of_their_own_deliveries_pass_ten_005(tenants: TenantChecks) -> None:
    path = "/v1/webhook-deliveries"
    send(tenants, "listWebhookDeliveries", "GET", path, ALPHA, body=deliveries("msg_a"))
    own = send(tenants, "listWebhookDeliveries", "GET", path, BETA, body=deliveries("msg_b"))
    assert Outcome.FAILED not in outcomes(own, "TEN-005")


def endpoint(created_at: str) -> dict[str, Any]:
    return {"id": "we_primary", "url": "https://hooks.example.com/a", "created_at": created_at}


def test_an_endpoint_put_answered_with_another_merchants_endpoint_fails_ten_005(
    tenants: TenantChecks,
) -> None:
    path = "/v1/webhook-endpoints/we_primary"
    send(tenants, "putWebhookEndpoint", "PUT", path, ALPHA, body=endpoint("2026-01-01T00:00:01Z"))
    theirs = send(
        tenants, "putWebhookEndpoint", "PUT", path, BETA, body=endpoint("2026-01-01T00:00:01Z")
    )
    assert outcomes(theirs, "TEN-005") == [Outcome.FAILED]


def test_an_endpoint_put_answered_with_its_own_endpoint_passes_ten_005(
    tenants: TenantChecks,
) -> None:
    path = "/v1/webhook-endpoints/we_primary"
    send(tenants, "putWebhookEndpoint", "PUT", path, ALPHA, body=endpoint("2026-01-01T00:00:01Z"))
    own = send(
        tenants, "putWebhookEndpoint", "PUT", path, BETA, body=endpoint("2026-01-01T00:00:09Z")
    )
    assert outcomes(own, "TEN-005") == [Outcome.PASSED]


def test_keys_of_one_merchant_share_its_ids(profile: Profile) -> None:
    data = dict(profile.data)
    data["credentials"] = [
        *profile.data["credentials"],
        {**profile.data["credentials"][0], "name": "alpha2", "api_key": "mk_test_alpha2"},
    ]
    tenants = TenantChecks(replace(profile, data=data))
    created_payment(tenants)
    findings = send(
        tenants,
        "cancelPayment",
        "POST",
        "/v1/payments/pay_a1/cancel",
        "mk_test_alpha2",
        body={"id": "pay_a1", "status": "canceled"},
    )
    assert findings == []


def test_results_of_the_cross_checks_name_the_isolation_check(profile: Profile) -> None:
    from conformance.validator.cross import CrossExchangeChecks

    cross = CrossExchangeChecks(profile)
    create = exchange(
        "POST",
        "/v1/payments",
        request_headers=[("X-Api-Key", ALPHA)],
        status=201,
        response_body={"id": "pay_a1", "status": "pending"},
    )
    cross.observe(create, "createPayment")
    cancel = exchange(
        "POST",
        "/v1/payments/pay_a1/cancel",
        request_headers=[("X-Api-Key", BETA)],
        response_body={"id": "pay_a1", "status": "canceled"},
    )
    results: list[CheckResult] = cross.observe(cancel, "cancelPayment")
    [failure] = [r for r in results if "TEN-001" in r.requirement_ids]
    assert failure.check_id == "validate.foreign_id"
    assert failure.outcome is Outcome.FAILED and failure.evidence is not None
