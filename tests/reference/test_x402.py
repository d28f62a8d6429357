"""x402 requirements, settlement signed by a test wallet, and usage, through real HTTP."""

from __future__ import annotations

import re
import time
from datetime import timedelta
from typing import Any

import pytest

from conformance.core import eip712
from tests.reference.domain_factories import (
    OTHER_WALLET_KEY,
    create_requirements,
    put_endpoint,
    report_usage,
    requirements_body,
    settle,
    settled_payment,
    signed_payload,
    statement,
    utc_now,
    wait_for_delivery,
)
from tests.reference.factories import error_code
from tests.reference.signed_client import SignedClient
from tests.reference.webhook_receiver import WebhookReceiver

ADDRESS = "0x[0-9a-fA-F]{40}"


def first(issued: dict[str, Any]) -> dict[str, Any]:
    requirement: dict[str, Any] = issued["accepts"][0]
    return requirement


# ------------------------------------------------------------------------------ requirements
def test_requirements_follow_the_profile_for_a_token(alpha: SignedClient) -> None:
    before = int(time.time())
    issued = create_requirements(alpha, resource="https://api.example.com/report/7")
    after = int(time.time())
    assert issued["payment_id"].startswith("pay_")
    (entry,) = issued["accepts"]
    assert entry["scheme"] == "exact" and entry["network"] == "base"
    assert re.fullmatch(ADDRESS, entry["asset"]) and re.fullmatch(ADDRESS, entry["pay_to"])
    assert entry["max_amount_required"] == "50000"
    assert re.fullmatch("0x[0-9a-f]{64}", entry["nonce"])
    assert before + 300 <= entry["valid_before"] <= after + 300
    assert entry["resource"] == "https://api.example.com/report/7"
    domain = eip712.Eip712Domain.from_extra(entry["extra"])
    assert domain.chain_id == 8453 and domain.name == "USD Coin"
    assert eip712.same_address(domain.verifying_contract, entry["asset"])


def test_requirements_for_a_native_currency_scale_by_its_decimals(alpha: SignedClient) -> None:
    issued = create_requirements(
        alpha, scheme="upto", currency_id="eth", chain_id="ethereum", amount="0.001"
    )
    (entry,) = issued["accepts"]
    assert entry["scheme"] == "upto" and entry["network"] == "ethereum"
    assert entry["asset"] == "native"
    assert entry["max_amount_required"] == str(10**15)
    assert eip712.Eip712Domain.from_extra(entry["extra"]).chain_id == 1


def test_without_a_resource_the_entry_names_the_servers_own_url(alpha: SignedClient) -> None:
    issued = create_requirements(alpha)
    resource = first(issued)["resource"]
    assert resource.startswith(alpha.base_url + "/") and issued["payment_id"] in resource


def test_every_call_issues_a_fresh_nonce_and_payment(alpha: SignedClient) -> None:
    issued = [create_requirements(alpha) for _ in range(3)]
    assert len({first(i)["nonce"] for i in issued}) == 3
    assert len({i["payment_id"] for i in issued}) == 3
    assert len({first(i)["pay_to"] for i in issued}) == 1  # one address per merchant


def test_pay_to_differs_between_merchants(alpha: SignedClient, beta: SignedClient) -> None:
    assert first(create_requirements(alpha))["pay_to"] != first(create_requirements(beta))["pay_to"]


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"currency_id": "doge"}, "unknown_currency"),
        ({"currency_id": "eth", "chain_id": "base"}, "currency_not_on_chain"),
        ({"chain_id": "solana"}, "unknown_chain"),
        ({"amount": "0.0000001"}, "too_many_decimals"),
        ({"amount": "1" * 80}, "amount_too_large"),
        ({"amount": "0.000"}, "invalid_amount"),
        ({"splits": [{"type": "percentage", "merchant_id": "m_alpha", "bps": 10}]}, None),
        ({"splits": [{"type": "percentage", "merchant_id": "m_nobody", "bps": 10}]}, None),
    ],
    ids=["currency", "not-deployed", "chain", "decimals", "too-large", "zero", "self", "unknown"],
)
def test_business_rule_violations_are_422(
    alpha: SignedClient, changes: dict[str, Any], code: str | None
) -> None:
    response = alpha.post("/v1/x402/requirements", requirements_body(**changes))
    assert response.status_code == 422, response.text
    if code is not None:
        assert error_code(response) == code


# ------------------------------------------------------------------------------ settlement
def test_a_settlement_signed_by_the_test_wallet_succeeds(alpha: SignedClient) -> None:
    issued = create_requirements(alpha)
    response = settle(alpha, issued["payment_id"], first(issued))
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["success"] is True and result["payment_id"] == issued["payment_id"]
    assert re.fullmatch("0x[0-9a-f]{64}", result["tx_hash"])


def test_settling_the_identical_payload_again_returns_the_same_result(
    alpha: SignedClient,
) -> None:
    issued = create_requirements(alpha)
    payload = signed_payload(first(issued))
    once = settle(alpha, issued["payment_id"], first(issued), payload)
    twice = settle(alpha, issued["payment_id"], first(issued), payload)
    assert once.status_code == twice.status_code == 200
    assert once.json() == twice.json()


def test_another_payload_for_a_settled_payment_is_409(alpha: SignedClient) -> None:
    payment_id, requirement = settled_payment(alpha)
    other = signed_payload(requirement, valid_after=int(time.time()) - 120)
    response = settle(alpha, payment_id, requirement, other)
    assert response.status_code == 409 and error_code(response) == "invalid_state"


REJECTIONS: dict[str, tuple[dict[str, Any], str]] = {
    "recipient": ({"to": "0x" + "12" * 20}, "invalid_exact_evm_payload_recipient_mismatch"),
    "nonce": ({"nonce": "0x" + "ab" * 32}, "invalid_exact_evm_payload_nonce_mismatch"),
    "not-yet-valid": (
        {"valid_after": int(time.time()) + 3600},
        "invalid_exact_evm_payload_authorization_valid_after",
    ),
    "expired": (
        {"valid_before": int(time.time()) - 1},
        "invalid_exact_evm_payload_authorization_valid_before",
    ),
    "exact-below-max": ({"value": 49_999}, "invalid_exact_evm_payload_authorization_value"),
    "exact-above-max": ({"value": 50_001}, "invalid_exact_evm_payload_authorization_value"),
}


@pytest.mark.parametrize("case", sorted(REJECTIONS))
def test_each_verification_rule_rejects_with_its_x402_reason(
    alpha: SignedClient, case: str
) -> None:
    changes, code = REJECTIONS[case]
    issued = create_requirements(alpha)
    requirement = first(issued)
    payload = signed_payload(requirement, **changes)
    response = settle(alpha, issued["payment_id"], requirement, payload)
    assert response.status_code == 422, response.text
    assert error_code(response) == code
    # a rejected settlement leaves the payment payable
    assert settle(alpha, issued["payment_id"], requirement).status_code == 200


def test_a_signature_by_another_wallet_than_from_is_rejected(alpha: SignedClient) -> None:
    issued = create_requirements(alpha)
    requirement = first(issued)
    honest = signed_payload(requirement)
    authorization = eip712.TransferAuthorization.from_payload(honest["authorization"])
    domain = eip712.Eip712Domain.from_extra(requirement["extra"])
    forged = {
        "signature": eip712.sign_transfer_authorization(OTHER_WALLET_KEY, domain, authorization),
        "authorization": honest["authorization"],  # claims the test wallet as from
    }
    response = settle(alpha, issued["payment_id"], requirement, forged)
    assert response.status_code == 422
    assert error_code(response) == "invalid_exact_evm_payload_signature"
    assert settle(alpha, issued["payment_id"], requirement, honest).status_code == 200


def test_a_signature_over_other_values_is_rejected(alpha: SignedClient) -> None:
    issued = create_requirements(alpha)
    requirement = first(issued)
    payload = signed_payload(requirement)
    payload["authorization"]["valid_after"] -= 1  # changed after signing
    response = settle(alpha, issued["payment_id"], requirement, payload)
    assert response.status_code == 422
    assert error_code(response) == "invalid_exact_evm_payload_signature"


def test_a_well_formed_signature_that_is_no_signature_is_rejected(alpha: SignedClient) -> None:
    issued = create_requirements(alpha)
    payload = signed_payload(first(issued))
    payload["signature"] = "0x" + "00" * 65
    response = settle(alpha, issued["payment_id"], first(issued), payload)
    assert response.status_code == 422
    assert error_code(response) == "invalid_exact_evm_payload_signature"


MALFORMED_PAYLOADS: dict[str, tuple[str, ...]] = {
    # case: the field the 400's details name
    "no signature": ("payment_payload.signature",),
    "no authorization": ("payment_payload.authorization",),
    "short signature": ("payment_payload.signature",),
    "signature not hex": ("payment_payload.signature",),
    "from not an address": ("payment_payload.authorization.from",),
    "to without 0x": ("payment_payload.authorization.to",),
    "value with a fraction": ("payment_payload.authorization.value",),
    "value as a number": ("payment_payload.authorization.value",),
    "valid_after as a string": ("payment_payload.authorization.valid_after",),
    "valid_before beyond int64": ("payment_payload.authorization.valid_before",),
    "nonce of 63 digits": ("payment_payload.authorization.nonce",),
    "no nonce": ("payment_payload.authorization.nonce",),
}


def _malformed(payload: dict[str, Any], case: str) -> dict[str, Any]:
    authorization = dict(payload["authorization"])
    changes: dict[str, Any] = {
        "short signature": {"signature": payload["signature"][:-2]},
        "signature not hex": {"signature": "0x" + "zz" * 65},
        "from not an address": {"authorization": {**authorization, "from": "0x1234"}},
        "to without 0x": {"authorization": {**authorization, "to": authorization["to"][2:]}},
        "value with a fraction": {"authorization": {**authorization, "value": "0.5"}},
        "value as a number": {"authorization": {**authorization, "value": 50000}},
        "valid_after as a string": {
            "authorization": {**authorization, "valid_after": str(authorization["valid_after"])}
        },
        "valid_before beyond int64": {"authorization": {**authorization, "valid_before": 2**63}},
        "nonce of 63 digits": {
            "authorization": {**authorization, "nonce": authorization["nonce"][:-1]}
        },
    }
    if case == "no signature":
        return {"authorization": authorization}
    if case == "no authorization":
        return {"signature": payload["signature"]}
    if case == "no nonce":
        del authorization["nonce"]
        return {**payload, "authorization": authorization}
    return {**payload, **changes[case]}


@pytest.mark.parametrize("case", sorted(MALFORMED_PAYLOADS))
def test_a_malformed_payload_is_a_validation_error(alpha: SignedClient, case: str) -> None:
    issued = create_requirements(alpha)
    payload = _malformed(signed_payload(first(issued)), case)
    response = settle(alpha, issued["payment_id"], first(issued), payload)
    assert response.status_code == 400, response.text
    assert error_code(response) == "validation_error"
    assert [d["field"] for d in response.json()["details"]] == list(MALFORMED_PAYLOADS[case])
    # nothing happened: the payment is still payable
    assert settle(alpha, issued["payment_id"], first(issued)).status_code == 200


def test_a_malformed_payload_is_400_before_the_payment_is_looked_up(alpha: SignedClient) -> None:
    issued = create_requirements(alpha)
    response = settle(alpha, "pay_unknown", first(issued), {"signature": "0x"})
    assert response.status_code == 400, response.text


@pytest.mark.parametrize(
    "change",
    [
        {"max_amount_required": "1"},
        {"pay_to": "0x" + "12" * 20},
        {"valid_before": 4_000_000_000},
        {"scheme": "upto"},
        {"extra": None},
    ],
    ids=["max", "pay_to", "valid_before", "scheme", "extra"],
)
def test_requirements_other_than_the_issued_ones_are_rejected(
    alpha: SignedClient, change: dict[str, Any]
) -> None:
    issued = create_requirements(alpha)
    altered = {**first(issued), **change}
    altered = {k: v for k, v in altered.items() if v is not None}
    payload = signed_payload(first(issued))
    response = settle(alpha, issued["payment_id"], altered, payload)
    assert response.status_code == 422
    assert error_code(response) == "invalid_payment_requirements"


def test_requirements_of_another_payment_are_rejected(alpha: SignedClient) -> None:
    one, two = create_requirements(alpha), create_requirements(alpha)
    response = settle(alpha, one["payment_id"], first(two))
    assert response.status_code == 422 and error_code(response) == "invalid_payment_requirements"


def test_an_empty_payload_is_a_validation_error(alpha: SignedClient) -> None:
    issued = create_requirements(alpha)
    response = settle(alpha, issued["payment_id"], first(issued), {})
    assert response.status_code == 400 and error_code(response) == "validation_error"


def test_unknown_and_foreign_payments_are_404(alpha: SignedClient, beta: SignedClient) -> None:
    issued = create_requirements(alpha)
    assert settle(alpha, "pay_unknown", first(issued)).status_code == 404
    response = settle(beta, issued["payment_id"], first(issued))
    assert response.status_code == 404 and error_code(response) == "not_found"


def test_upto_accepts_at_most_the_maximum(alpha: SignedClient) -> None:
    issued = create_requirements(alpha, scheme="upto", amount="1")
    requirement = first(issued)
    over = settle(
        alpha, issued["payment_id"], requirement, signed_payload(requirement, value=10**6 + 1)
    )
    assert over.status_code == 422
    assert error_code(over) == "invalid_exact_evm_payload_authorization_value"
    under = settle(alpha, issued["payment_id"], requirement, signed_payload(requirement, value=1))
    assert under.status_code == 200


def test_settlement_credits_the_merchant_and_split_recipients(
    alpha: SignedClient, beta: SignedClient
) -> None:
    start = utc_now()
    splits = [{"type": "percentage", "merchant_id": "m_beta", "bps": 2500}]
    payment_id, _ = settled_payment(alpha, amount="2", splits=splits)
    end = utc_now() + timedelta(seconds=1)
    lines = statement(alpha, start, end).json()["lines"]
    assert [(ln["direction"], ln["canonical_amount"]) for ln in lines] == [
        ("credit", "2.000000"),
        ("debit", "0.500000"),
    ]
    assert all(ln["payment_id"] == payment_id for ln in lines)
    (income,) = statement(beta, start, end).json()["lines"]
    assert income["is_split_recipient_income"] is True
    assert income["source_merchant_id"] == "m_alpha" and income["canonical_amount"] == "0.500000"


def test_a_settlement_emits_x402_settled(alpha: SignedClient) -> None:
    with WebhookReceiver() as receiver:
        put_endpoint(alpha, receiver.url, ["x402.settled"])
        payment_id, _ = settled_payment(alpha)
        (received,) = receiver.wait_for(lambda got: len(got) == 1)
        delivery = wait_for_delivery(alpha, received.headers["webhook-id"], "succeeded")
    assert delivery["event_type"] == "x402.settled"
    assert payment_id.encode() in received.body


# ------------------------------------------------------------------------------ usage
def test_usage_of_a_settled_upto_payment_is_reported(alpha: SignedClient) -> None:
    payment_id, _ = settled_payment(alpha, scheme="upto", amount="0.5")
    response = alpha.post(
        f"/v1/x402/{payment_id}/usage",
        {"actual_amount": "0.42", "usage_id": "usage-1", "evidence": {"tokens": 1834}},
    )
    assert response.status_code == 200, response.text
    assert response.json() == {
        "payment_id": payment_id,
        "scheme": "upto",
        "max_raw": "500000",
        "actual_raw": "420000",
        "usage_id": "usage-1",
    }
    assert report_usage(alpha, payment_id, "0.5").status_code == 200  # exactly the maximum


def test_usage_is_bounded_by_the_authorised_value_not_the_requirement(
    alpha: SignedClient,
) -> None:
    issued = create_requirements(alpha, scheme="upto", amount="0.5")
    requirement = first(issued)
    payload = signed_payload(requirement, value=300_000)  # the payer authorises 0.3 of 0.5
    assert settle(alpha, issued["payment_id"], requirement, payload).status_code == 200
    used = report_usage(alpha, issued["payment_id"], "0.3")
    assert used.status_code == 200, used.text
    assert used.json()["max_raw"] == "300000" and used.json()["actual_raw"] == "300000"
    over = report_usage(alpha, issued["payment_id"], "0.300001")
    assert over.status_code == 422 and error_code(over) == "usage_exceeds_maximum"


def test_usage_of_an_18_decimal_currency_is_in_its_raw_units(alpha: SignedClient) -> None:
    payment_id, _ = settled_payment(
        alpha, scheme="upto", currency_id="eth", chain_id="ethereum", amount="0.001"
    )
    used = report_usage(alpha, payment_id, "0.000000000000000123")
    assert used.status_code == 200, used.text
    assert used.json()["actual_raw"] == "123" and used.json()["max_raw"] == str(10**15)


def test_usage_over_the_maximum_is_422(alpha: SignedClient) -> None:
    payment_id, _ = settled_payment(alpha, scheme="upto", amount="0.5")
    response = report_usage(alpha, payment_id, "0.500001")
    assert response.status_code == 422 and error_code(response) == "usage_exceeds_maximum"
    assert report_usage(alpha, payment_id, "0.0000001").status_code == 422  # too many decimals


def test_usage_needs_a_settled_upto_payment(alpha: SignedClient) -> None:
    exact_id, _ = settled_payment(alpha)
    response = report_usage(alpha, exact_id, "0.01")
    assert response.status_code == 409 and error_code(response) == "invalid_state"
    unsettled = create_requirements(alpha, scheme="upto")
    assert report_usage(alpha, unsettled["payment_id"], "0.01").status_code == 409


def test_usage_of_an_unknown_or_foreign_payment_is_404(
    alpha: SignedClient, beta: SignedClient
) -> None:
    assert report_usage(alpha, "pay_unknown", "0.01").status_code == 404
    payment_id, _ = settled_payment(alpha, scheme="upto")
    assert report_usage(beta, payment_id, "0.01").status_code == 404


def test_a_native_upto_payment_books_the_authorised_value_with_18_places(
    alpha: SignedClient,
) -> None:
    start = utc_now()
    issued = create_requirements(
        alpha, scheme="upto", currency_id="eth", chain_id="ethereum", amount="0.001"
    )
    requirement = first(issued)
    payload = signed_payload(requirement, value=123)
    assert settle(alpha, issued["payment_id"], requirement, payload).status_code == 200
    end = utc_now() + timedelta(seconds=1)
    body = statement(alpha, start, end, currency_id="eth").json()
    (line,) = body["lines"]
    assert line["canonical_amount"] == "0.000000000000000123"
    assert body["accounting_decimals"] == 18 and body["reconciles"] is True
