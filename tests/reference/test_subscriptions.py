"""Subscriptions through real HTTP: create and cancel (profile section 5)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from conformance.core.formats import parse_date_time
from conformance.core.profile import Profile
from tests.reference.factories import (
    create_subscription,
    error_code,
    event_counts,
    subscribe_to_everything,
    subscription_body,
)
from tests.reference.signed_client import SignedClient


def test_create_is_pending_authorization_with_derived_fields(alpha: SignedClient) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    response = alpha.post("/v1/subscriptions", subscription_body(interval_secs=3600.0))
    after = datetime.now(UTC) + timedelta(seconds=1)
    assert response.status_code == 201
    sub = response.json()
    assert sub["id"].startswith("sub_")
    assert sub["status"] == "pending_authorization"
    assert sub["interval_secs"] == 3600
    assert sub["amount"] == "9.99"
    assert sub["currency_chain_id"] == "usdc:base"
    assert sub["authorize_url"].startswith("http://127.0.0.1:")
    next_bill = parse_date_time(sub["next_bill_at"])
    assert next_bill is not None
    assert before + timedelta(seconds=3600) <= next_bill <= after + timedelta(seconds=3600)


@pytest.mark.parametrize("interval", [59, 31536001])
def test_interval_outside_bounds_is_400(alpha: SignedClient, interval: int) -> None:
    response = alpha.post("/v1/subscriptions", subscription_body(interval_secs=interval))
    assert (response.status_code, error_code(response)) == (400, "validation_error")


@pytest.mark.parametrize("interval", [60, 31536000])
def test_interval_bounds_are_accepted(alpha: SignedClient, interval: int) -> None:
    assert alpha.post("/v1/subscriptions", subscription_body(interval_secs=interval)).is_success


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"currency_id": "doge"}, "unknown_currency"),
        ({"currency_id": "eth", "chain_id": "base"}, "currency_not_on_chain"),
        ({"chain_id": "solana"}, "unknown_chain"),
        ({"amount": "1.1234567"}, "too_many_decimals"),
        ({"amount": "ten"}, "invalid_amount"),
        (
            {"splits": [{"type": "percentage", "merchant_id": "m_nobody", "bps": 5}]},
            "unknown_merchant",
        ),
    ],
)
def test_business_rules_are_422(
    alpha: SignedClient, overrides: dict[str, object], code: str
) -> None:
    response = alpha.post("/v1/subscriptions", subscription_body(**overrides))
    assert (response.status_code, error_code(response)) == (422, code)


@pytest.mark.parametrize("missing", ["currency_id", "chain_id", "amount", "interval_secs"])
def test_missing_required_field_is_400(alpha: SignedClient, missing: str) -> None:
    body = subscription_body()
    del body[missing]
    response = alpha.post("/v1/subscriptions", body)
    assert response.status_code == 400
    assert response.json()["details"][0]["field"] == missing


def test_cancel_once_then_409(alpha: SignedClient) -> None:
    sub = create_subscription(alpha)
    response = alpha.post(f"/v1/subscriptions/{sub['id']}/cancel")
    assert response.status_code == 200
    canceled = response.json()
    assert canceled["status"] == "canceled"
    assert "authorize_url" not in canceled
    assert canceled["currency_chain_id"] == "usdc:base"
    again = alpha.post(f"/v1/subscriptions/{sub['id']}/cancel")
    assert (again.status_code, error_code(again)) == (409, "invalid_state")


def test_cancel_of_unknown_or_foreign_subscription_is_404(
    alpha: SignedClient, beta: SignedClient
) -> None:
    theirs = create_subscription(beta)
    for sub_id in ("sub_unknown", theirs["id"]):
        response = alpha.post(f"/v1/subscriptions/{sub_id}/cancel")
        assert (response.status_code, error_code(response)) == (404, "not_found")
    assert beta.post(f"/v1/subscriptions/{theirs['id']}/cancel").status_code == 200


def test_create_and_cancel_emit_events(alpha: SignedClient, profile: Profile) -> None:
    subscribe_to_everything(alpha, list(profile.data["webhooks"]["event_types"]))
    before = event_counts(alpha)
    sub = create_subscription(alpha)
    alpha.post(f"/v1/subscriptions/{sub['id']}/cancel")
    alpha.post(f"/v1/subscriptions/{sub['id']}/cancel")
    assert event_counts(alpha) - before == {"subscription.created": 1, "subscription.canceled": 1}
