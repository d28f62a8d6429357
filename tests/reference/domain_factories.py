"""Short-cuts for the domain tests and probes: x402 requirements and settlement as a test
wallet, statement windows and their pages, webhook endpoints and deliveries."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import httpx

from conformance.core import eip712
from conformance.reference.timestamps import iso
from tests.reference.signed_client import SignedClient

TEST_WALLET_KEY = "0x" + "4c" * 32  # a fixed test key: the wallet the tests pay from
OTHER_WALLET_KEY = "0x" + "5d" * 32


# ------------------------------------------------------------------------------ x402
def requirements_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"currency_id": "usdc", "chain_id": "base", "amount": "0.05"}
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not None}


def create_requirements(client: SignedClient, **overrides: Any) -> dict[str, Any]:
    response = client.post("/v1/x402/requirements", requirements_body(**overrides))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def signed_payload(requirement: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A payment payload for ``requirement`` signed by the test wallet; ``key`` signs as
    another wallet, other keywords change one part of the authorization before signing."""
    key = changes.pop("key", TEST_WALLET_KEY)
    return eip712.payment_payload(key, requirement, now=int(time.time()), **changes)


def settle(
    client: SignedClient,
    payment_id: str,
    requirement: dict[str, Any],
    payload: dict[str, Any] | None = None,
) -> httpx.Response:
    return client.post(
        "/v1/x402/settle",
        {
            "payment_id": payment_id,
            "payment_payload": payload if payload is not None else signed_payload(requirement),
            "payment_requirements": requirement,
        },
        idempotency_key=None,
    )


def settled_payment(client: SignedClient, **overrides: Any) -> tuple[str, dict[str, Any]]:
    """Requirements issued and settled for their maximum: (payment_id, requirement)."""
    issued = create_requirements(client, **overrides)
    requirement = issued["accepts"][0]
    response = settle(client, issued["payment_id"], requirement)
    assert response.status_code == 200, response.text
    return issued["payment_id"], requirement


def report_usage(client: SignedClient, payment_id: str, actual_amount: str) -> httpx.Response:
    return client.post(
        f"/v1/x402/{payment_id}/usage",
        {"actual_amount": actual_amount, "usage_id": "u-" + uuid.uuid4().hex[:8], "evidence": {}},
    )


# ------------------------------------------------------------------------------ statements
def utc_now() -> datetime:
    return datetime.now(UTC)


def statement(
    client: SignedClient,
    start: datetime | str,
    end: datetime | str,
    *,
    currency_id: str = "usdc",
    limit: int | None = None,
    cursor: str | None = None,
) -> httpx.Response:
    query: dict[str, Any] = {
        "currency_id": currency_id,
        "from": start if isinstance(start, str) else iso(start),
        "to": end if isinstance(end, str) else iso(end),
    }
    if limit is not None:
        query["limit"] = limit
    if cursor is not None:
        query["cursor"] = cursor
    return client.get("/v1/statements?" + urlencode(query))


def statement_pages(
    client: SignedClient,
    start: datetime,
    end: datetime,
    *,
    limit: int,
    currency_id: str = "usdc",
    max_pages: int = 50,
) -> list[dict[str, Any]]:
    """Every page of a window, following next_cursor."""
    pages: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(max_pages):
        response = statement(
            client, start, end, currency_id=currency_id, limit=limit, cursor=cursor
        )
        assert response.status_code == 200, response.text
        page: dict[str, Any] = response.json()
        pages.append(page)
        cursor = page.get("next_cursor")
        if cursor is None:
            return pages
    raise AssertionError(f"more than {max_pages} pages")


def window_after(start: datetime) -> datetime:
    """An end of window just after everything already posted."""
    return utc_now() + timedelta(seconds=1) if utc_now() > start else start + timedelta(seconds=1)


# ------------------------------------------------------------------------------ webhooks
def endpoint_id() -> str:
    return "ep_" + uuid.uuid4().hex[:12]


def put_endpoint(
    client: SignedClient, url: str, event_types: list[str], endpoint: str | None = None
) -> dict[str, Any]:
    response = client.put(
        f"/v1/webhook-endpoints/{endpoint or endpoint_id()}",
        {"url": url, "event_types": event_types},
    )
    assert response.status_code == 200, response.text
    created: dict[str, Any] = response.json()
    return created


def rotate(client: SignedClient, endpoint: str) -> str:
    response = client.post(f"/v1/webhook-endpoints/{endpoint}/rotate-secret")
    assert response.status_code == 200, response.text
    secret: str = response.json()["secret"]
    return secret


def deliveries(client: SignedClient) -> dict[str, dict[str, Any]]:
    response = client.get("/v1/webhook-deliveries")
    assert response.status_code == 200, response.text
    return {d["id"]: d for d in response.json()["deliveries"]}


def wait_for_delivery(
    client: SignedClient, delivery_id: str, status: str, timeout: float = 10.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        found = deliveries(client).get(delivery_id)
        if found is not None and found["status"] == status:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"delivery {delivery_id} is not {status}: {found}")
        time.sleep(0.05)
