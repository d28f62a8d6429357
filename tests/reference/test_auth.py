"""Authentication (profile section 1): every failure mode is 401 unauthorized, checked first."""

from __future__ import annotations

import time
import uuid

import httpx
import pytest

from conformance.core.profile import Profile
from conformance.core.signing import Signer
from tests.reference.factories import error_code, payment_body
from tests.reference.signed_client import SignedClient


def _send(
    url: str, method: str, target: str, headers: dict[str, str], body: bytes = b""
) -> httpx.Response:
    return httpx.request(method, url + target, headers=headers, content=body)


def _assert_401(response: httpx.Response) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["code"] == "unauthorized"
    assert isinstance(body["message"], str) and body["message"]


def test_a_correctly_signed_request_is_accepted(alpha: SignedClient, beta: SignedClient) -> None:
    assert alpha.get("/v1/payments").status_code == 200
    assert beta.get("/v1/payments").status_code == 200


@pytest.mark.parametrize("header", ["X-Api-Key", "X-Signature", "X-Timestamp", "X-Nonce"])
def test_each_missing_header_is_401(server_url: str, profile: Profile, header: str) -> None:
    signer = Signer(profile.primary.api_key, profile.primary.api_secret)
    headers = signer.headers("GET", "/v1/payments")
    del headers[header]
    _assert_401(_send(server_url, "GET", "/v1/payments", headers))


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("X-Timestamp", "1763802000.5"),
        ("X-Timestamp", "yesterday"),
        ("X-Timestamp", ""),
        ("X-Nonce", "short"),
        ("X-Nonce", "has spaces in the nonce value"),
        ("X-Nonce", "n" * 129),
        ("X-Api-Key", "mk_test_nobody"),
        ("X-Signature", "0" * 64),
        ("X-Signature", "NOT-HEX"),
    ],
)
def test_malformed_or_wrong_headers_are_401(
    server_url: str, profile: Profile, header: str, value: str
) -> None:
    signer = Signer(profile.primary.api_key, profile.primary.api_secret)
    headers = signer.headers("GET", "/v1/payments")
    headers[header] = value
    _assert_401(_send(server_url, "GET", "/v1/payments", headers))


def test_signature_with_another_secret_is_401(server_url: str, profile: Profile) -> None:
    forged = Signer(profile.primary.api_key, profile.secondary.api_secret)
    _assert_401(_send(server_url, "GET", "/v1/payments", forged.headers("GET", "/v1/payments")))


@pytest.mark.parametrize("skew", [-301, 301, -100000])
def test_timestamp_outside_the_window_is_401(alpha: SignedClient, skew: int) -> None:
    _assert_401(alpha.get("/v1/payments", timestamp=int(time.time()) + skew))


@pytest.mark.parametrize("skew", [-290, 290])
def test_timestamp_inside_the_window_is_accepted(alpha: SignedClient, skew: int) -> None:
    assert alpha.get("/v1/payments", timestamp=int(time.time()) + skew).status_code == 200


def test_a_nonce_is_single_use_per_key(alpha: SignedClient, beta: SignedClient) -> None:
    nonce = uuid.uuid4().hex
    assert alpha.get("/v1/payments", nonce=nonce).status_code == 200
    _assert_401(alpha.get("/v1/payments", nonce=nonce))
    # The nonce store is per API key: the other merchant may use the same nonce.
    assert beta.get("/v1/payments", nonce=nonce).status_code == 200


def test_a_rejected_request_does_not_spend_its_nonce(server_url: str, alpha: SignedClient) -> None:
    nonce = uuid.uuid4().hex
    headers = alpha.signed_headers("GET", "/v1/payments", nonce=nonce)
    headers["X-Signature"] = "0" * 64
    _assert_401(_send(server_url, "GET", "/v1/payments", headers))
    assert alpha.get("/v1/payments", nonce=nonce).status_code == 200


def test_body_changed_after_signing_is_401(server_url: str, alpha: SignedClient) -> None:
    signed = b'{"quotes":{"usdc":{"amount":"1"}},"merchant_order_no":"a"}'
    sent = b'{"quotes":{"usdc":{"amount":"9"}},"merchant_order_no":"a"}'
    headers = alpha.signed_headers("POST", "/v1/payments", signed)
    headers.update({"Content-Type": "application/json", "Idempotency-Key": uuid.uuid4().hex})
    _assert_401(_send(server_url, "POST", "/v1/payments", headers, sent))


@pytest.mark.parametrize(
    ("signed", "sent"),
    [
        ("/v1/payments?limit=5", "/v1/payments?limit=6"),
        ("/v1/payments", "/v1/payments?limit=6"),
        ("/v1/payments?limit=5", "/v1/payments"),
    ],
)
def test_query_string_is_part_of_the_signature(
    server_url: str, alpha: SignedClient, signed: str, sent: str
) -> None:
    _assert_401(_send(server_url, "GET", sent, alpha.signed_headers("GET", signed)))


def test_method_is_part_of_the_signature(server_url: str, alpha: SignedClient) -> None:
    headers = alpha.signed_headers("GET", "/v1/payments")
    headers["Idempotency-Key"] = "k"
    _assert_401(_send(server_url, "DELETE", "/v1/payments", headers))


def test_authentication_comes_before_routing_idempotency_and_validation(server_url: str) -> None:
    for method, path in [
        ("GET", "/v1/nowhere"),
        ("GET", "/"),
        ("PATCH", "/v1/payments"),
        ("POST", "/v1/payments"),
    ]:
        _assert_401(httpx.request(method, server_url + path, content=b"{not json"))


def test_rejected_request_keeps_its_idempotency_key_free(
    server_url: str, alpha: SignedClient
) -> None:
    key = uuid.uuid4().hex
    body = payment_body()
    unsigned = httpx.post(
        server_url + "/v1/payments",
        json=body,
        headers={"Idempotency-Key": key, "X-Api-Key": "mk_test_alpha"},
    )
    _assert_401(unsigned)
    response = alpha.post("/v1/payments", body, idempotency_key=key)
    assert response.status_code == 201
    assert "Idempotent-Replayed" not in response.headers
    assert error_code(alpha.post("/v1/payments", body, idempotency_key=key)) is None
