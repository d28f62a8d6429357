"""Idempotency (profile section 2): replay, reuse, in-flight, scope, concurrency."""

from __future__ import annotations

import json
import threading
import time
import uuid

import httpx
import pytest

from conformance.reference.idempotency import IdempotencyStore, fingerprint
from conformance.reference.server import ReferenceServer
from tests.reference.factories import create_payment, error_code, order_no, payment_body
from tests.reference.signed_client import NO_KEY, SignedClient


def _count_with_order_no(client: SignedClient, number: str) -> int:
    return len(client.get(f"/v1/payments?merchant_order_no={number}").json()["payments"])


def test_replay_returns_the_same_bytes_with_the_header(alpha: SignedClient) -> None:
    key = uuid.uuid4().hex
    body = payment_body()
    first = alpha.post("/v1/payments", body, idempotency_key=key)
    second = alpha.post("/v1/payments", body, idempotency_key=key)
    assert first.status_code == second.status_code == 201
    assert "Idempotent-Replayed" not in first.headers
    assert second.headers["Idempotent-Replayed"] == "true"
    assert second.content == first.content
    assert _count_with_order_no(alpha, body["merchant_order_no"]) == 1


def test_replay_of_a_state_change_has_no_second_effect(alpha: SignedClient) -> None:
    payment = create_payment(alpha)
    key = uuid.uuid4().hex
    first = alpha.post(f"/v1/payments/{payment['id']}/cancel", idempotency_key=key)
    second = alpha.post(f"/v1/payments/{payment['id']}/cancel", idempotency_key=key)
    assert first.status_code == second.status_code == 200
    assert second.content == first.content
    assert second.headers["Idempotent-Replayed"] == "true"


def test_reuse_with_another_body_or_path_is_422(alpha: SignedClient) -> None:
    key = uuid.uuid4().hex
    assert alpha.post("/v1/payments", payment_body(), idempotency_key=key).status_code == 201
    other_body = alpha.post("/v1/payments", payment_body(), idempotency_key=key)
    assert (other_body.status_code, error_code(other_body)) == (422, "idempotency_key_reused")
    other_path = alpha.post(
        "/v1/subscriptions",
        {"currency_id": "usdc", "chain_id": "base", "amount": "1", "interval_secs": 60},
        idempotency_key=key,
    )
    assert (other_path.status_code, error_code(other_path)) == (422, "idempotency_key_reused")


def test_errors_are_not_stored(alpha: SignedClient) -> None:
    key = uuid.uuid4().hex
    body = payment_body(quotes={"doge": {"amount": "1"}})
    assert alpha.post("/v1/payments", body, idempotency_key=key).status_code == 422
    again = alpha.post("/v1/payments", body, idempotency_key=key)
    assert again.status_code == 422
    assert "Idempotent-Replayed" not in again.headers
    fixed = alpha.post("/v1/payments", payment_body(), idempotency_key=key)
    assert fixed.status_code == 201


def test_keys_are_scoped_per_api_key(alpha: SignedClient, beta: SignedClient) -> None:
    key = uuid.uuid4().hex
    body = payment_body()
    mine = alpha.post("/v1/payments", body, idempotency_key=key)
    theirs = beta.post("/v1/payments", body, idempotency_key=key)
    assert mine.status_code == theirs.status_code == 201
    assert "Idempotent-Replayed" not in theirs.headers
    assert mine.json()["id"] != theirs.json()["id"]


def test_missing_key_is_400(alpha: SignedClient) -> None:
    response = alpha.post("/v1/payments", payment_body(), idempotency_key=NO_KEY)
    assert (response.status_code, error_code(response)) == (400, "idempotency_key_missing")


@pytest.mark.parametrize("key", ["", "k" * 129])
def test_empty_or_long_key_is_400(alpha: SignedClient, key: str) -> None:
    response = alpha.post("/v1/payments", payment_body(), idempotency_key=key)
    assert (response.status_code, error_code(response)) == (400, "idempotency_key_invalid")


@pytest.mark.parametrize("length", [1, 128])
def test_key_lengths_1_and_128_are_accepted(alpha: SignedClient, length: int) -> None:
    key = uuid.uuid4().hex[:length].ljust(length, "x")
    assert alpha.post("/v1/payments", payment_body(), idempotency_key=key).status_code == 201


def test_get_needs_no_key(alpha: SignedClient) -> None:
    assert alpha.get("/v1/payments", idempotency_key=NO_KEY).status_code == 200


def test_concurrent_requests_with_one_key_have_one_effect(alpha: SignedClient) -> None:
    """Several threads fire the same key at once: one payment, the rest replays or 409."""
    key = uuid.uuid4().hex
    body = payment_body(merchant_order_no=order_no())
    threads = 8
    barrier = threading.Barrier(threads)
    results: list[httpx.Response] = []
    lock = threading.Lock()

    def fire() -> None:
        with SignedClient(alpha.base_url, alpha.credential) as client:
            barrier.wait()
            response = client.post("/v1/payments", body, idempotency_key=key)
        with lock:
            results.append(response)

    workers = [threading.Thread(target=fire) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    statuses = sorted(r.status_code for r in results)
    assert set(statuses) <= {201, 409}, statuses
    created = [r for r in results if r.status_code == 201]
    assert len({r.content for r in created}) == 1
    assert all(error_code(r) == "idempotency_key_in_use" for r in results if r.status_code == 409)
    assert _count_with_order_no(alpha, body["merchant_order_no"]) == 1
    assert sum("Idempotent-Replayed" not in r.headers for r in created) == 1


def test_a_key_still_in_flight_gets_409(server: ReferenceServer, alpha: SignedClient) -> None:
    """A reservation as the first request leaves it while its handler runs."""
    key = uuid.uuid4().hex
    raw = json.dumps(payment_body()).encode()
    with server.store.transaction() as conn:
        IdempotencyStore(server.config).begin(
            conn,
            alpha.credential.api_key,
            key,
            fingerprint("POST", "/v1/payments", raw),
            int(time.time()),
        )
    response = alpha.post("/v1/payments", content=raw, idempotency_key=key)
    assert (response.status_code, error_code(response)) == (409, "idempotency_key_in_use")
    other = alpha.post("/v1/payments", payment_body(), idempotency_key=key)
    assert (other.status_code, error_code(other)) == (422, "idempotency_key_reused")


def test_responses_are_kept_for_24_hours_then_forgotten(
    server: ReferenceServer, alpha: SignedClient
) -> None:
    key = uuid.uuid4().hex
    body = payment_body()
    first = alpha.post("/v1/payments", body, idempotency_key=key)

    def age(seconds: int) -> None:
        with server.store.transaction() as conn:
            conn.execute(
                "UPDATE idempotency_keys SET created_at = ? WHERE key = ?",
                (int(time.time()) - seconds, key),
            )

    age(86400 - 60)
    assert alpha.post("/v1/payments", body, idempotency_key=key).content == first.content
    age(86400 + 60)
    fresh = alpha.post("/v1/payments", body, idempotency_key=key)
    assert "Idempotent-Replayed" not in fresh.headers
    assert error_code(fresh) == "duplicate_order"  # processed again: the order number is taken
