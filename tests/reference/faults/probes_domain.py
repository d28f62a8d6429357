"""Probes of the domain faults (faults/domain.yaml): webhooks, x402, ledger, statements.

Each probe asserts the broken behaviour; against a correct server its assertion fails. Probes
look only at what they create themselves (their own endpoints, payments and statement
windows), so a server shared with other probes does not disturb them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from conformance.core import eip712
from conformance.reference.webhook_dispatch import verify
from tests.reference.domain_factories import (
    OTHER_WALLET_KEY,
    create_requirements,
    endpoint_id,
    put_endpoint,
    report_usage,
    rotate,
    settle,
    settled_payment,
    signed_payload,
    statement,
    statement_pages,
    utc_now,
)
from tests.reference.factories import create_payment, deposit
from tests.reference.faults import Probe
from tests.reference.signed_client import SignedClient
from tests.reference.webhook_receiver import Received, WebhookReceiver

WAIT_SECS = 2.0


# ------------------------------------------------------------------------------ helpers
def _paid(probe: Probe, amount: str, splits: Sequence[tuple[str, int]] = ()) -> str:
    shares = [{"type": "percentage", "merchant_id": m, "bps": b} for m, b in splits]
    extra: dict[str, Any] = {"splits": shares} if shares else {}
    payment = create_payment(
        probe.client, quotes={"usdc": {"amount": amount, "chain_ids": ["base"]}}, **extra
    )
    deposit(probe.client, payment["id"], amount)
    return str(payment["id"])


def _window(
    probe: Probe, amounts: list[str], splits: Sequence[tuple[str, int]] = ()
) -> tuple[datetime, datetime]:
    start = utc_now()
    for amount in amounts:
        _paid(probe, amount, splits)
    return start, utc_now() + timedelta(milliseconds=1)


def _delivered(
    probe: Probe, event_types: list[str], action: Callable[[SignedClient], Any]
) -> tuple[str, Received]:
    """Subscribe a receiver, rotate its secret, run ``action``: (secret, first webhook)."""
    with WebhookReceiver() as receiver:
        ident = put_endpoint(probe.client, receiver.url, event_types)["id"]
        secret = rotate(probe.client, ident)
        action(probe.client)
        received = receiver.wait_for(lambda got: len(got) >= 1, timeout=WAIT_SECS)
    return secret, received[0]


def _settle_with(probe: Probe, **changes: Any) -> int:
    issued = create_requirements(probe.client, **changes.pop("requirements", {}))
    requirement = issued["accepts"][0]
    payload = signed_payload(requirement, **changes)
    return settle(probe.client, issued["payment_id"], requirement, payload).status_code


# ------------------------------------------------------------------------------ webhooks
def webhook_accepts_non_loopback_http(probe: Probe) -> None:
    response = probe.client.put(
        f"/v1/webhook-endpoints/{endpoint_id()}",
        {"url": "http://hooks.example.com/payments", "event_types": []},
    )
    assert response.status_code == 200, response.status_code


def webhook_accepts_unknown_event_type(probe: Probe) -> None:
    response = probe.client.put(
        f"/v1/webhook-endpoints/{endpoint_id()}",
        {"url": "https://hooks.example.com/", "event_types": ["payment.refunded"]},
    )
    assert response.status_code == 200, response.status_code


def webhook_replace_keeps_event_types(probe: Probe) -> None:
    ident = endpoint_id()
    put_endpoint(probe.client, "https://hooks.example.com/", ["payment.created"], ident)
    replaced = put_endpoint(probe.client, "https://hooks.example.com/", ["payment.settled"], ident)
    assert replaced["event_types"] == ["payment.created"]


def webhook_rotate_keeps_secret(probe: Probe) -> None:
    ident = put_endpoint(probe.client, "https://hooks.example.com/", [])["id"]
    assert rotate(probe.client, ident) == rotate(probe.client, ident)


def webhook_delivery_ignores_subscription(probe: Probe) -> None:
    _, received = _delivered(probe, ["subscription.canceled"], create_payment)
    assert b'"type":"payment.created"' in received.body


def _signature_does_not_verify(probe: Probe) -> None:
    secret, received = _delivered(probe, ["payment.created"], create_payment)
    assert not verify(secret, received.headers, received.body)


# ------------------------------------------------------------------------------ x402
def x402_requirements_reuse_nonce(probe: Probe) -> None:
    one, two = create_requirements(probe.client), create_requirements(probe.client)
    assert one["accepts"][0]["nonce"] == two["accepts"][0]["nonce"]


def x402_max_amount_wrong_decimals(probe: Probe) -> None:
    issued = create_requirements(probe.client, currency_id="eth", chain_id="ethereum")
    assert issued["accepts"][0]["max_amount_required"] != str(5 * 10**16)


def x402_settle_trusts_submitted_requirements(probe: Probe) -> None:
    issued = create_requirements(probe.client)
    cheaper = {**issued["accepts"][0], "max_amount_required": "1"}
    payload = signed_payload(cheaper)
    assert settle(probe.client, issued["payment_id"], cheaper, payload).status_code == 200


def x402_settle_ignores_recipient(probe: Probe) -> None:
    assert _settle_with(probe, to="0x" + "12" * 20) == 200


def x402_settle_ignores_nonce(probe: Probe) -> None:
    assert _settle_with(probe, nonce="0x" + "ab" * 32) == 200


def x402_settle_ignores_valid_after(probe: Probe) -> None:
    assert _settle_with(probe, valid_after=int(time.time()) + 3600) == 200


def x402_settle_accepts_expired(probe: Probe) -> None:
    assert _settle_with(probe, valid_before=int(time.time()) - 5) == 200


def x402_exact_accepts_other_value(probe: Probe) -> None:
    assert _settle_with(probe, value=1) == 200


def x402_upto_accepts_over_max(probe: Probe) -> None:
    assert _settle_with(probe, requirements={"scheme": "upto"}, value=50_001) == 200


def x402_settle_skips_signature_check(probe: Probe) -> None:
    issued = create_requirements(probe.client)
    requirement = issued["accepts"][0]
    honest = signed_payload(requirement)
    domain = eip712.Eip712Domain.from_extra(requirement["extra"])
    authorization = eip712.TransferAuthorization.from_payload(honest["authorization"])
    forged = {
        "signature": eip712.sign_transfer_authorization(OTHER_WALLET_KEY, domain, authorization),
        "authorization": honest["authorization"],
    }
    assert settle(probe.client, issued["payment_id"], requirement, forged).status_code == 200


def x402_settle_replay_new_tx_hash(probe: Probe) -> None:
    issued = create_requirements(probe.client)
    requirement = issued["accepts"][0]
    payload = signed_payload(requirement)
    once = settle(probe.client, issued["payment_id"], requirement, payload)
    twice = settle(probe.client, issued["payment_id"], requirement, payload)
    assert once.status_code == twice.status_code == 200
    assert once.json()["tx_hash"] != twice.json()["tx_hash"]


def x402_usage_on_exact_accepted(probe: Probe) -> None:
    payment_id, _ = settled_payment(probe.client)
    assert report_usage(probe.client, payment_id, "0.01").status_code == 200


def x402_usage_over_max_accepted(probe: Probe) -> None:
    payment_id, _ = settled_payment(probe.client, scheme="upto")
    assert report_usage(probe.client, payment_id, "0.06").status_code == 200


# ------------------------------------------------------------------------------ ledger
def ledger_running_balance_ignores_debits(probe: Probe) -> None:
    start, end = _window(probe, ["10"], [("m_gamma", 2000)])
    body = statement(probe.client, start, end).json()
    balance = Decimal(body["opening_canonical"])
    consistent = True
    for line in body["lines"]:
        balance += Decimal(line["signed_canonical_amount"])
        consistent = consistent and Decimal(line["balance_after_canonical"]) == balance
    assert not consistent


def ledger_split_income_not_credited(probe: Probe) -> None:
    start, end = _window(probe, ["10"], [("m_beta", 2000)])
    assert statement(probe.other, start, end).json()["lines"] == []


# ------------------------------------------------------------------------------ statements
def statement_opening_ignores_history(probe: Probe) -> None:
    _paid(probe, "5")  # the balance before the window is at least 5
    start, end = _window(probe, ["1"])
    assert Decimal(statement(probe.client, start, end).json()["opening_canonical"]) == 0


def statement_closing_from_page(probe: Probe) -> None:
    start, end = _window(probe, ["1", "2"])
    first, last = statement_pages(probe.client, start, end, limit=1)
    assert first["closing_canonical"] != last["closing_canonical"]


def statement_window_includes_to(probe: Probe) -> None:
    start, end = _window(probe, ["1"])
    (line,) = statement(probe.client, start, end).json()["lines"]
    assert statement(probe.client, start, line["created_at"]).json()["lines"] != []


def statement_count_page_only(probe: Probe) -> None:
    start, end = _window(probe, ["1", "2"])
    assert statement(probe.client, start, end, limit=1).json()["window_entry_count"] == 1


def statement_next_cursor_on_last_page(probe: Probe) -> None:
    start, end = _window(probe, ["1", "2"])
    assert "next_cursor" in statement(probe.client, start, end, limit=2).json()


def _paged_ids(probe: Probe, limit: int) -> tuple[list[int], list[int]]:
    start, end = _window(probe, ["1", "2", "3"])
    whole = [ln["ledger_entry_id"] for ln in statement(probe.client, start, end).json()["lines"]]
    pages = statement_pages(probe.client, start, end, limit=limit)
    return whole, [ln["ledger_entry_id"] for page in pages for ln in page["lines"]]


def statement_page_skips_boundary_line(probe: Probe) -> None:
    whole, paged = _paged_ids(probe, 1)
    assert len(paged) < len(whole)


def statement_page_repeats_boundary_line(probe: Probe) -> None:
    _, paged = _paged_ids(probe, 2)
    assert len(paged) != len(set(paged))


def statement_debit_sign_positive(probe: Probe) -> None:
    start, end = _window(probe, ["10"], [("m_gamma", 2000)])
    lines = statement(probe.client, start, end).json()["lines"]
    debits = [ln for ln in lines if ln["direction"] == "debit"]
    assert debits and all(not ln["signed_canonical_amount"].startswith("-") for ln in debits)


PROBES: dict[str, Callable[[Probe], None]] = {
    "webhook-accepts-non-loopback-http": webhook_accepts_non_loopback_http,
    "webhook-accepts-unknown-event-type": webhook_accepts_unknown_event_type,
    "webhook-replace-keeps-event-types": webhook_replace_keeps_event_types,
    "webhook-rotate-keeps-secret": webhook_rotate_keeps_secret,
    "webhook-delivery-ignores-subscription": webhook_delivery_ignores_subscription,
    "webhook-signature-over-body-only": _signature_does_not_verify,
    "webhook-signature-key-not-decoded": _signature_does_not_verify,
    "x402-requirements-reuse-nonce": x402_requirements_reuse_nonce,
    "x402-max-amount-wrong-decimals": x402_max_amount_wrong_decimals,
    "x402-settle-trusts-submitted-requirements": x402_settle_trusts_submitted_requirements,
    "x402-settle-ignores-recipient": x402_settle_ignores_recipient,
    "x402-settle-ignores-nonce": x402_settle_ignores_nonce,
    "x402-settle-ignores-valid-after": x402_settle_ignores_valid_after,
    "x402-settle-accepts-expired": x402_settle_accepts_expired,
    "x402-exact-accepts-other-value": x402_exact_accepts_other_value,
    "x402-upto-accepts-over-max": x402_upto_accepts_over_max,
    "x402-settle-skips-signature-check": x402_settle_skips_signature_check,
    "x402-settle-replay-new-tx-hash": x402_settle_replay_new_tx_hash,
    "x402-usage-on-exact-accepted": x402_usage_on_exact_accepted,
    "x402-usage-over-max-accepted": x402_usage_over_max_accepted,
    "ledger-running-balance-ignores-debits": ledger_running_balance_ignores_debits,
    "ledger-split-income-not-credited": ledger_split_income_not_credited,
    "statement-opening-ignores-history": statement_opening_ignores_history,
    "statement-closing-from-page": statement_closing_from_page,
    "statement-window-includes-to": statement_window_includes_to,
    "statement-count-page-only": statement_count_page_only,
    "statement-next-cursor-on-last-page": statement_next_cursor_on_last_page,
    "statement-page-skips-boundary-line": statement_page_skips_boundary_line,
    "statement-page-repeats-boundary-line": statement_page_repeats_boundary_line,
    "statement-debit-sign-positive": statement_debit_sign_positive,
}
