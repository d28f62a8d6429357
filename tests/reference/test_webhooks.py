"""Webhook endpoints and deliveries through real HTTP, with a real loopback receiver."""

from __future__ import annotations

import base64
import json

import pytest

from conformance.core.profile import Profile
from conformance.reference.webhook_dispatch import verify
from tests.reference.domain_factories import (
    deliveries,
    endpoint_id,
    put_endpoint,
    rotate,
    wait_for_delivery,
)
from tests.reference.factories import create_payment, error_code
from tests.reference.signed_client import SignedClient
from tests.reference.webhook_receiver import WebhookReceiver


# ------------------------------------------------------------------------------ endpoints
def test_put_creates_an_active_endpoint_listed_once(alpha: SignedClient) -> None:
    ident = endpoint_id()
    created = put_endpoint(alpha, "https://hooks.example.com/a", ["payment.created"], ident)
    assert created["id"] == ident and created["active"] is True
    assert created["url"] == "https://hooks.example.com/a"
    assert created["event_types"] == ["payment.created"]
    assert set(created) == {"id", "url", "event_types", "active", "created_at"}
    listed = [e for e in alpha.get("/v1/webhook-endpoints").json()["endpoints"] if e["id"] == ident]
    assert listed == [created]


def test_put_replaces_url_and_event_types_and_keeps_created_at(alpha: SignedClient) -> None:
    ident = endpoint_id()
    first = put_endpoint(alpha, "https://hooks.example.com/a", ["payment.created"], ident)
    second = put_endpoint(
        alpha, "https://hooks.example.com/b", ["payment.settled", "x402.settled"], ident
    )
    assert second["url"] == "https://hooks.example.com/b"
    assert second["event_types"] == ["payment.settled", "x402.settled"]
    assert second["created_at"] == first["created_at"] and second["active"] is True
    listed = [e for e in alpha.get("/v1/webhook-endpoints").json()["endpoints"] if e["id"] == ident]
    assert listed == [second]


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/payments",
        "https://hooks.example.com:8443/x?y=1",
        "http://127.0.0.1:9/hooks",
        "http://localhost/hooks",
        "http://[::1]:8080/hooks",
        "http://127.8.9.10/hooks",
    ],
)
def test_https_and_loopback_http_urls_are_accepted(alpha: SignedClient, url: str) -> None:
    assert put_endpoint(alpha, url, [])["url"] == url


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/payments",
        "http://10.0.0.1/hooks",
        "http://localhost.example.com/hooks",
        "ftp://hooks.example.com/x",
        "mailto:ops@example.com",
    ],
)
def test_other_urls_are_a_business_rule_violation(alpha: SignedClient, url: str) -> None:
    response = alpha.put(f"/v1/webhook-endpoints/{endpoint_id()}", {"url": url, "event_types": []})
    assert response.status_code == 422, response.text
    assert error_code(response) == "invalid_webhook_url"


def test_every_profile_event_type_is_accepted_and_others_are_422(
    alpha: SignedClient, profile: Profile
) -> None:
    known = list(profile.data["webhooks"]["event_types"])
    assert len(known) == 9
    assert put_endpoint(alpha, "https://h.example.com/", known)["event_types"] == known
    for unknown in ("payment.refunded", "PAYMENT.CREATED", "*"):
        response = alpha.put(
            f"/v1/webhook-endpoints/{endpoint_id()}",
            {"url": "https://h.example.com/", "event_types": ["payment.created", unknown]},
        )
        assert response.status_code == 422 and error_code(response) == "unknown_event_type"


def test_rotate_secret_returns_a_fresh_whsec_secret_each_time(alpha: SignedClient) -> None:
    ident = put_endpoint(alpha, "https://h.example.com/", [])["id"]
    secrets = [rotate(alpha, ident) for _ in range(4)]
    assert len(set(secrets)) == 4
    for secret in secrets:
        assert secret.startswith("whsec_")
        assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32
    body = alpha.post(f"/v1/webhook-endpoints/{ident}/rotate-secret").json()
    assert set(body) == {"id", "secret"} and body["id"] == ident


def test_rotate_secret_of_an_unknown_endpoint_is_404(alpha: SignedClient) -> None:
    response = alpha.post(f"/v1/webhook-endpoints/{endpoint_id()}/rotate-secret")
    assert response.status_code == 404 and error_code(response) == "not_found"


def test_merchants_never_see_each_others_endpoints(alpha: SignedClient, beta: SignedClient) -> None:
    ident = put_endpoint(alpha, "https://alpha.example.com/", ["payment.created"])["id"]
    assert all(e["id"] != ident for e in beta.get("/v1/webhook-endpoints").json()["endpoints"])
    response = beta.post(f"/v1/webhook-endpoints/{ident}/rotate-secret")
    assert response.status_code == 404
    # beta's PUT of the same id creates beta's own endpoint, leaving alpha's untouched
    put_endpoint(beta, "https://beta.example.com/", [], ident)
    mine = [e for e in alpha.get("/v1/webhook-endpoints").json()["endpoints"] if e["id"] == ident]
    assert mine[0]["url"] == "https://alpha.example.com/"


# ------------------------------------------------------------------------------ deliveries
def test_an_event_is_delivered_signed_with_the_rotated_secret(alpha: SignedClient) -> None:
    with WebhookReceiver() as receiver:
        ident = put_endpoint(alpha, receiver.url, ["payment.created"])["id"]
        secret = rotate(alpha, ident)
        payment = create_payment(alpha)
        (received,) = receiver.wait_for(lambda got: len(got) >= 1)
        delivery_id = received.headers["webhook-id"]
        delivery = wait_for_delivery(alpha, delivery_id, "succeeded")
    assert verify(secret, received.headers, received.body)
    body = json.loads(received.body)
    assert set(body) == {"id", "type", "timestamp", "data"}
    assert body["type"] == "payment.created" and body["data"]["id"] == payment["id"]
    assert delivery["event_type"] == "payment.created" and delivery["attempts"] == 1
    assert received.path == "/hooks"


def test_a_rotation_applies_to_later_deliveries(alpha: SignedClient) -> None:
    with WebhookReceiver() as receiver:
        ident = put_endpoint(alpha, receiver.url, ["payment.created"])["id"]
        old = rotate(alpha, ident)
        create_payment(alpha)
        receiver.wait_for(lambda got: len(got) == 1)
        new = rotate(alpha, ident)
        create_payment(alpha)
        first, second = receiver.wait_for(lambda got: len(got) == 2)
    assert verify(old, first.headers, first.body) and not verify(new, first.headers, first.body)
    assert verify(new, second.headers, second.body) and not verify(old, second.headers, second.body)


def test_only_subscribed_event_types_create_deliveries(alpha: SignedClient) -> None:
    with WebhookReceiver() as receiver:
        put_endpoint(alpha, receiver.url, ["payment.canceled"])
        payment = create_payment(alpha)  # payment.created: not subscribed
        assert alpha.post(f"/v1/payments/{payment['id']}/cancel").status_code == 200
        (received,) = receiver.wait_for(lambda got: len(got) >= 1)
        delivery = wait_for_delivery(alpha, received.headers["webhook-id"], "succeeded")
    assert json.loads(received.body)["type"] == "payment.canceled"
    assert delivery["event_type"] == "payment.canceled"
    assert len(receiver.received) == 1


def test_a_failing_receiver_leaves_a_failed_delivery_after_its_attempts(
    alpha: SignedClient,
) -> None:
    with WebhookReceiver(statuses=[500] * 10) as receiver:
        put_endpoint(alpha, receiver.url, ["payment.created"])
        create_payment(alpha)
        (received, *_) = receiver.wait_for(lambda got: len(got) >= 1)
        delivery = wait_for_delivery(alpha, received.headers["webhook-id"], "failed")
    assert delivery["attempts"] == 3
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 1


def test_resend_queues_a_new_attempt_of_the_same_delivery(alpha: SignedClient) -> None:
    with WebhookReceiver() as receiver:
        put_endpoint(alpha, receiver.url, ["payment.created"])
        create_payment(alpha)
        (first,) = receiver.wait_for(lambda got: len(got) == 1)
        delivery_id = first.headers["webhook-id"]
        wait_for_delivery(alpha, delivery_id, "succeeded")
        response = alpha.post(f"/v1/webhook-deliveries/{delivery_id}/resend")
        assert response.status_code == 200 and response.json() == {"status": "pending"}
        _, second = receiver.wait_for(lambda got: len(got) == 2)
        delivery = wait_for_delivery(alpha, delivery_id, "succeeded")
    assert second.headers["webhook-id"] == delivery_id and second.body == first.body
    assert delivery["attempts"] == 2


def test_resend_revives_a_failed_delivery(alpha: SignedClient) -> None:
    with WebhookReceiver(statuses=[500, 500, 500]) as receiver:
        put_endpoint(alpha, receiver.url, ["payment.created"])
        create_payment(alpha)
        (first, *_) = receiver.wait_for(lambda got: len(got) >= 1)
        delivery_id = first.headers["webhook-id"]
        wait_for_delivery(alpha, delivery_id, "failed")
        assert alpha.post(f"/v1/webhook-deliveries/{delivery_id}/resend").status_code == 200
        delivery = wait_for_delivery(alpha, delivery_id, "succeeded")
    assert delivery["attempts"] == 4


def test_deliveries_have_the_contract_shape_and_profile_statuses(alpha: SignedClient) -> None:
    create_payment(alpha)
    listed = list(deliveries(alpha).values())
    assert listed
    for delivery in listed:
        assert set(delivery) == {"id", "event_type", "status", "attempts", "created_at"}
        assert delivery["status"] in ("pending", "succeeded", "failed")
        assert isinstance(delivery["attempts"], int) and delivery["attempts"] >= 0


def test_resend_of_an_unknown_or_foreign_delivery_is_404(
    alpha: SignedClient, beta: SignedClient
) -> None:
    response = alpha.post("/v1/webhook-deliveries/msg_unknown/resend")
    assert response.status_code == 404 and error_code(response) == "not_found"
    put_endpoint(alpha, "https://h.example.com/", ["payment.created"])
    create_payment(alpha)
    some_alpha_delivery = next(iter(deliveries(alpha)))
    assert some_alpha_delivery not in deliveries(beta)
    response = beta.post(f"/v1/webhook-deliveries/{some_alpha_delivery}/resend")
    assert response.status_code == 404 and error_code(response) == "not_found"
