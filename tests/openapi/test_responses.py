"""Responses a conformant default-profile server sends satisfy the document and the effective
contract; responses that break a stated rule do not.

One realistic success body per operation, written from docs/profile.md with the fixtures
(usdc/eth, base/ethereum, wa_alpha_base, m_gamma). A check that rejected one of them would be a
false positive against a conformant server.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.contract import effective_contract, operations
from conformance.core.openapi import resolve
from conformance.core.profile import load_profile
from tests.openapi.support import document, operation_object, validator

DOC = document()
PROFILE = load_profile()
EFFECTIVE = effective_contract(PROFILE)

T0 = "2026-11-22T03:00:00Z"
ADDRESS = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
NONCE = "0x" + "3f" * 32

QUOTES = {
    "usdc": {
        "amount": "25",
        "code": "USDC",
        "symbol": "$",
        "name": "USD Coin",
        "deployments": [{"chain_id": "base", "asset_kind": "token", "address": USDC_BASE}],
    }
}
PAYMENT = {
    "id": "pay_1",
    "status": "pending",
    "quotes": QUOTES,
    "expires_at": "2026-11-22T04:00:00Z",
    "merchant_order_no": "order-1",
}
SUBSCRIPTION = {
    "id": "sub_1",
    "status": "pending_authorization",
    "amount": "9.99",
    "interval_secs": 2592000,
    "currency_id": "usdc",
    "currency_chain_id": "usdc:base",
    "chain_id": "base",
    "next_bill_at": "2026-12-22T03:00:00Z",
}
SCHEDULE = {
    "id": "ps_1",
    "currency_id": "usdc",
    "currency_chain_id": "usdc:base",
    "target_chain_id": "base",
    "withdraw_address_id": "wa_alpha_base",
    "interval_secs": 86400,
    "min_send_amount": "100",
    "min_send_raw": "100000000",
    "mode": "auto_request",
    "status": "active",
    "enabled": True,
    "next_run_at": "2026-11-23T03:00:00Z",
    "created_at": T0,
    "updated_at": T0,
    "retired_at": None,
}
REQUIREMENT = {
    "scheme": "exact",
    "network": "base",
    "asset": USDC_BASE,
    "pay_to": ADDRESS,
    "max_amount_required": "50000",
    "resource": "https://api.example.com/reports/2026-11",
    "nonce": NONCE,
    "valid_before": 1763802300,
    "extra": {"name": "USD Coin", "version": "2", "chain_id": 8453},
}
ENDPOINT = {
    "id": "we_1",
    "url": "https://merchant.example.com/hooks",
    "event_types": ["payment.created", "payment.settled"],
    "active": True,
    "created_at": T0,
}
DELIVERY = {
    "id": "dlv_1",
    "event_type": "payment.created",
    "status": "succeeded",
    "attempts": 1,
    "created_at": T0,
}
LINE = {
    "ledger_entry_id": 1,
    "ledger_transaction_id": "ltx_1",
    "tx_type": "payment",
    "business_type": "payment_income",
    "direction": "credit",
    "canonical_amount": "25.000000",
    "signed_canonical_amount": "25.000000",
    "balance_after_canonical": "25.000000",
    "platform_fee_canonical": "0.000000",
    "is_split_recipient_income": False,
    "created_at": T0,
    "payment_id": "pay_1",
    "merchant_order_no": "order-1",
}

SUCCESS_BODIES: dict[str, Any] = {
    "listWebhookEndpoints": {"endpoints": [ENDPOINT]},
    "putWebhookEndpoint": ENDPOINT,
    "rotateWebhookEndpointSecret": {"id": "we_1", "secret": "whsec_" + "A" * 43 + "="},
    "listWebhookDeliveries": {"deliveries": [DELIVERY]},
    "resendWebhookDelivery": {"status": "pending"},
    "createPayment": {**PAYMENT, "checkout_url": "https://checkout.example.com/pay_1"},
    "listPayments": {"payments": [PAYMENT], "next_cursor": "c_2"},
    "cancelPayment": {**PAYMENT, "status": "canceled"},
    "acceptUnderpaidPayment": {
        "payment_id": "pay_1",
        "currency_id": "usdc",
        "currency_chain_id": "usdc:base",
        "accepted_raw": "20000000",
        "status": "settled",
    },
    "createSubscription": {**SUBSCRIPTION, "authorize_url": "https://checkout.example.com/s/1"},
    "cancelSubscription": {**SUBSCRIPTION, "status": "canceled"},
    "createPayoutSchedule": SCHEDULE,
    "replacePayoutSchedule": {**SCHEDULE, "updated_at": "2026-11-22T03:05:00Z"},
    "pausePayoutSchedule": {**SCHEDULE, "status": "paused", "enabled": False},
    "retirePayoutSchedule": {
        **SCHEDULE,
        "status": "retired",
        "enabled": False,
        "retired_at": "2026-11-22T03:10:00Z",
    },
    "replaceSplitTemplate": {"shares": [{"merchant_id": "m_gamma", "bps": 1000}], "updated_at": T0},
    "createX402Requirements": {"payment_id": "pay_2", "accepts": [REQUIREMENT]},
    "settleX402Payment": {"success": True, "tx_hash": "0x" + "ab" * 32, "payment_id": "pay_2"},
    "reportX402Usage": {
        "payment_id": "pay_3",
        "scheme": "upto",
        "max_raw": "1000000000000000",
        "actual_raw": "420000000000000",
        "usage_id": "usage_1",
    },
    "getStatement": {
        "merchant_id": "m_alpha",
        "currency_id": "usdc",
        "code": "USDC",
        "symbol": "$",
        "accounting_decimals": 6,
        "opening_canonical": "0.000000",
        "closing_canonical": "25.000000",
        "window_entry_count": 1,
        "limit": 100,
        "lines": [LINE],
        "reconciles": True,
    },
}

# A body that breaks a rule the document states, per operation where one is easy to name.
BROKEN_BODIES: dict[str, Any] = {
    "putWebhookEndpoint": {**ENDPOINT, "event_types": ["payment.created", "payment.created"]},
    "listWebhookDeliveries": {"deliveries": [{**DELIVERY, "status": ""}]},
    "createPayment": PAYMENT,  # no checkout_url
    "cancelSubscription": {**SUBSCRIPTION, "authorize_url": "https://x.example/a"},
    "createPayoutSchedule": {**SCHEDULE, "min_send_raw": "0100"},
    "retirePayoutSchedule": {k: v for k, v in SCHEDULE.items() if k != "retired_at"},
    "createX402Requirements": {
        "payment_id": "pay_2",
        "accepts": [{**REQUIREMENT, "max_amount_required": "5e4"}],
    },
    "getStatement": {**SUCCESS_BODIES["getStatement"], "accounting_decimals": "6"},
}


def _success_schema(doc: dict[str, Any], operation_id: str) -> dict[str, Any]:
    responses = operation_object(doc, operation_id)["responses"]
    status = next(s for s in responses if s.startswith("2"))
    schema: dict[str, Any] = resolve(doc, responses[status])["content"]["application/json"][
        "schema"
    ]
    return schema


def test_there_is_a_sample_for_every_operation() -> None:
    assert set(SUCCESS_BODIES) == {op.operation_id for op in operations()}


@pytest.mark.parametrize("doc", [DOC, EFFECTIVE], ids=["document", "effective"])
@pytest.mark.parametrize("operation_id", sorted(SUCCESS_BODIES))
def test_a_conformant_success_body_is_accepted(doc: dict[str, Any], operation_id: str) -> None:
    check = validator(doc, _success_schema(doc, operation_id))
    errors = [
        f"{list(e.absolute_path)}: {e.message}"
        for e in check.iter_errors(SUCCESS_BODIES[operation_id])
    ]
    assert errors == []


@pytest.mark.parametrize("doc", [DOC, EFFECTIVE], ids=["document", "effective"])
@pytest.mark.parametrize("operation_id", sorted(BROKEN_BODIES))
def test_a_body_breaking_a_stated_rule_is_rejected(doc: dict[str, Any], operation_id: str) -> None:
    check = validator(doc, _success_schema(doc, operation_id))
    assert not check.is_valid(BROKEN_BODIES[operation_id])


@pytest.mark.parametrize(
    ("operation_id", "body"),
    [
        ("cancelPayment", {**PAYMENT, "status": "pending"}),
        ("createPayoutSchedule", {**SCHEDULE, "status": "paused", "enabled": False}),
        ("resendWebhookDelivery", {"status": "succeeded"}),
        ("listWebhookDeliveries", {"deliveries": [{**DELIVERY, "status": "delivered"}]}),
        ("putWebhookEndpoint", {**ENDPOINT, "event_types": ["order.created"]}),
        ("settleX402Payment", {"success": True, "tx_hash": "abc", "payment_id": "pay_2"}),
        (
            "createX402Requirements",
            {"payment_id": "pay_2", "accepts": [{**REQUIREMENT, "nonce": "n-1"}]},
        ),
        (
            "createX402Requirements",
            {"payment_id": "pay_2", "accepts": [{**REQUIREMENT, "pay_to": "merchant"}]},
        ),
        (
            "createX402Requirements",
            {"payment_id": "pay_2", "accepts": [{**REQUIREMENT, "network": "solana"}]},
        ),
        (
            "getStatement",
            {**SUCCESS_BODIES["getStatement"], "lines": [{**LINE, "direction": "in"}]},
        ),
    ],
)
def test_profile_choices_are_enforced_only_by_the_effective_contract(
    operation_id: str, body: Any
) -> None:
    assert validator(DOC, _success_schema(DOC, operation_id)).is_valid(body)
    assert not validator(EFFECTIVE, _success_schema(EFFECTIVE, operation_id)).is_valid(body)
