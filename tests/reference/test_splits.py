"""Split shares and the default split template (profile section 5)."""

from __future__ import annotations

import pytest

from conformance.core.formats import parse_date_time
from tests.reference.factories import error_code
from tests.reference.signed_client import SignedClient


def test_put_returns_shares_and_updated_at(alpha: SignedClient) -> None:
    shares = [{"merchant_id": "m_gamma", "bps": 1000}, {"merchant_id": "m_delta", "bps": 9000}]
    response = alpha.put("/v1/split-template", {"shares": shares})
    assert response.status_code == 200
    body = response.json()
    assert body["shares"] == shares
    assert parse_date_time(body["updated_at"]) is not None


def test_empty_shares_clear_the_template(alpha: SignedClient) -> None:
    alpha.put("/v1/split-template", {"shares": [{"merchant_id": "m_gamma", "bps": 5}]})
    response = alpha.put("/v1/split-template", {"shares": []})
    assert response.status_code == 200
    assert response.json()["shares"] == []


@pytest.mark.parametrize(
    ("shares", "code"),
    [
        ([{"merchant_id": "m_nobody", "bps": 10}], "unknown_merchant"),
        ([{"merchant_id": "m_alpha", "bps": 10}], "split_to_self"),
        (
            [{"merchant_id": "m_gamma", "bps": 10}, {"merchant_id": "m_gamma", "bps": 20}],
            "duplicate_split_merchant",
        ),
        (
            [{"merchant_id": "m_gamma", "bps": 5000}, {"merchant_id": "m_delta", "bps": 5001}],
            "split_total_exceeded",
        ),
    ],
)
def test_business_rules_are_422(
    alpha: SignedClient, shares: list[dict[str, object]], code: str
) -> None:
    response = alpha.put("/v1/split-template", {"shares": shares})
    assert (response.status_code, error_code(response)) == (422, code)


@pytest.mark.parametrize(
    "body",
    [
        {"shares": [{"merchant_id": "m_gamma", "bps": 0}]},
        {"shares": [{"merchant_id": "m_gamma", "bps": 10001}]},
        {"shares": [{"merchant_id": "m_gamma"}]},
        {"shares": [{"bps": 5}]},
        {"shares": "m_gamma"},
        {},
    ],
)
def test_contract_violations_are_400(alpha: SignedClient, body: dict[str, object]) -> None:
    response = alpha.put("/v1/split-template", body)
    assert (response.status_code, error_code(response)) == (400, "validation_error")


def test_bps_bounds_and_another_merchants_view(alpha: SignedClient, beta: SignedClient) -> None:
    assert alpha.put(
        "/v1/split-template", {"shares": [{"merchant_id": "m_gamma", "bps": 10000}]}
    ).is_success
    assert alpha.put(
        "/v1/split-template", {"shares": [{"merchant_id": "m_gamma", "bps": 1}]}
    ).is_success
    # m_alpha is a known merchant for m_beta: splitting to another API merchant is allowed.
    assert beta.put(
        "/v1/split-template", {"shares": [{"merchant_id": "m_alpha", "bps": 1}]}
    ).is_success
