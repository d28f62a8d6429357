"""The test helpers: deposit and expire (profile section 6), and the effects of a deposit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from conformance.reference.timestamps import iso
from tests.reference.factories import create_payment, deposit, error_code
from tests.reference.signed_client import NO_KEY, SignedClient


def _statement(client: SignedClient, since: datetime) -> dict[str, object]:
    until = datetime.now(UTC) + timedelta(seconds=5)
    response = client.get(f"/v1/statements?currency_id=usdc&from={iso(since)}&to={iso(until)}")
    assert response.status_code == 200, response.text
    result: dict[str, object] = response.json()
    return result


def test_deposit_below_quote_is_underpaid_then_settled(alpha: SignedClient) -> None:
    payment = create_payment(alpha)
    assert deposit(alpha, payment["id"], "10")["status"] == "underpaid"
    assert deposit(alpha, payment["id"], "15")["status"] == "settled"
    refused = alpha.post(
        f"/v1/test-helpers/payments/{payment['id']}/deposit",
        {"currency_id": "usdc", "chain_id": "base", "amount": "1"},
    )
    assert (refused.status_code, error_code(refused)) == (409, "invalid_state")


def test_deposit_credits_the_merchant_and_split_recipients(alpha: SignedClient) -> None:
    since = datetime.now(UTC) - timedelta(seconds=1)
    payment = create_payment(
        alpha, splits=[{"type": "percentage", "merchant_id": "m_gamma", "bps": 1000}]
    )
    deposit(alpha, payment["id"], "25")
    lines = _statement(alpha, since)["lines"]
    assert isinstance(lines, list)
    mine = [line for line in lines if line.get("payment_id") == payment["id"]]
    credits = [line for line in mine if line["direction"] == "credit"]
    debits = [line for line in mine if line["direction"] == "debit"]
    assert [c["canonical_amount"] for c in credits] == ["25.000000"]
    assert [d["canonical_amount"] for d in debits] == ["2.500000"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"currency_id": "eth", "chain_id": "ethereum", "amount": "1"}, 422, "currency_not_quoted"),
        (
            {"currency_id": "usdc", "chain_id": "ethereum", "amount": "1"},
            422,
            "currency_not_on_chain",
        ),
        (
            {"currency_id": "usdc", "chain_id": "base", "amount": "0.0000001"},
            422,
            "too_many_decimals",
        ),
        ({"currency_id": "usdc", "chain_id": "base", "amount": "0"}, 422, "invalid_amount"),
        ({"currency_id": "usdc", "chain_id": "base", "amount": "01"}, 400, "validation_error"),
        ({"currency_id": "usdc", "chain_id": "base"}, 400, "validation_error"),
    ],
)
def test_bad_deposits(alpha: SignedClient, body: dict[str, str], status: int, code: str) -> None:
    payment = create_payment(alpha)
    response = alpha.post(f"/v1/test-helpers/payments/{payment['id']}/deposit", body)
    assert (response.status_code, error_code(response)) == (status, code)


def test_expire_moves_pending_to_expired_once(alpha: SignedClient) -> None:
    payment = create_payment(alpha)
    response = alpha.post(
        f"/v1/test-helpers/payments/{payment['id']}/expire", idempotency_key=NO_KEY
    )
    assert response.status_code == 200
    assert response.json()["status"] == "expired"
    again = alpha.post(f"/v1/test-helpers/payments/{payment['id']}/expire")
    assert (again.status_code, error_code(again)) == (409, "invalid_state")


def test_helpers_take_an_optional_key_and_404_unknown_or_foreign(
    alpha: SignedClient, beta: SignedClient
) -> None:
    theirs = create_payment(beta)
    for payment_id in ("pay_unknown", theirs["id"]):
        response = alpha.post(
            f"/v1/test-helpers/payments/{payment_id}/expire", idempotency_key=NO_KEY
        )
        assert (response.status_code, error_code(response)) == (404, "not_found")
    mine = create_payment(alpha)
    keyed = alpha.post(f"/v1/test-helpers/payments/{mine['id']}/expire", idempotency_key="k" * 20)
    assert keyed.status_code == 200


def test_helpers_require_authentication(server_url: str) -> None:
    import httpx

    response = httpx.post(f"{server_url}/v1/test-helpers/payments/pay_x/expire")
    assert (response.status_code, error_code(response)) == (401, "unauthorized")


@pytest.mark.parametrize("state", ["underpaid", "settled", "canceled", "expired"])
def test_expire_and_deposit_refuse_payments_that_are_not_open(
    alpha: SignedClient, state: str
) -> None:
    payment = create_payment(alpha)
    helpers = f"/v1/test-helpers/payments/{payment['id']}"
    if state in ("underpaid", "settled"):
        deposit(alpha, payment["id"], "1" if state == "underpaid" else "25")
    elif state == "canceled":
        alpha.post(f"/v1/payments/{payment['id']}/cancel")
    else:
        alpha.post(f"{helpers}/expire")
    expire = alpha.post(f"{helpers}/expire")
    assert (expire.status_code, error_code(expire)) == (409, "invalid_state")
    if state != "underpaid":  # an underpaid payment may still receive the rest
        more = alpha.post(
            f"{helpers}/deposit", {"currency_id": "usdc", "chain_id": "base", "amount": "1"}
        )
        assert (more.status_code, error_code(more)) == (409, "invalid_state")
