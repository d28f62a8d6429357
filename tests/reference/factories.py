"""Valid request bodies, and short-cuts that create resources through the API."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from tests.reference.signed_client import SignedClient


def order_no() -> str:
    return "order-" + uuid.uuid4().hex[:12]


def payment_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "quotes": {"usdc": {"amount": "25.00", "chain_ids": ["base"]}},
        "merchant_order_no": order_no(),
    }
    body.update(overrides)
    return body


def subscription_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "currency_id": "usdc",
        "chain_id": "base",
        "amount": "9.99",
        "interval_secs": 2592000,
    }
    body.update(overrides)
    return body


def payout_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "currency_id": "usdc",
        "target_chain_id": "base",
        "withdraw_address_id": "wa_alpha_base",
        "interval_secs": 86400,
        "min_send_amount": "100",
        "mode": "auto_request",
    }
    body.update(overrides)
    return body


def create_payment(client: SignedClient, **overrides: Any) -> dict[str, Any]:
    response = client.post("/v1/payments", payment_body(**overrides))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def create_subscription(client: SignedClient, **overrides: Any) -> dict[str, Any]:
    response = client.post("/v1/subscriptions", subscription_body(**overrides))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def create_payout(client: SignedClient, **overrides: Any) -> dict[str, Any]:
    response = client.post("/v1/payout-schedules", payout_body(**overrides))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def deposit(
    client: SignedClient,
    payment_id: str,
    amount: str,
    currency_id: str = "usdc",
    chain_id: str = "base",
) -> dict[str, Any]:
    response = client.post(
        f"/v1/test-helpers/payments/{payment_id}/deposit",
        {"currency_id": currency_id, "chain_id": chain_id, "amount": amount},
    )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def error_code(response: Any) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get("code") if isinstance(body, dict) else None


def subscribe_to_everything(client: SignedClient, profile_event_types: list[str]) -> str:
    """The merchant's one endpoint (on a closed loopback port) subscribed to every event type,
    so that each event makes exactly one delivery."""
    endpoint_id = "we_all_events"
    response = client.put(
        f"/v1/webhook-endpoints/{endpoint_id}",
        {"url": "http://127.0.0.1:9/hooks", "event_types": profile_event_types},
    )
    assert response.status_code == 200, response.text
    return endpoint_id


def event_counts(client: SignedClient) -> Counter[str]:
    """How many deliveries of each event type the merchant has."""
    response = client.get("/v1/webhook-deliveries")
    assert response.status_code == 200, response.text
    return Counter(d["event_type"] for d in response.json()["deliveries"])
