"""Probes of the payments faults (faults/payments.yaml): transitions, deposits and scaling,
pagination, filters and replayed creates.

Each probe asserts the broken behaviour; against a correct server its assertion fails. Probes
look only at payments they create (fresh order numbers), so a shared server does not disturb
them.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from tests.reference.factories import create_payment, deposit, order_no, payment_body
from tests.reference.faults import Probe, ProbeFn

ETH = {"eth": {"amount": "1.000000000000000001", "chain_ids": ["ethereum"]}}


def _listed(probe: Probe, **query: Any) -> list[dict[str, Any]]:
    response = probe.client.get(f"/v1/payments?{urlencode(query)}")
    assert response.status_code == 200, response.text
    payments: list[dict[str, Any]] = response.json()["payments"]
    return payments


# ------------------------------------------------------------------------------ transitions
def state_cancel_expired_payment_allowed(probe: Probe) -> None:
    payment = create_payment(probe.client)
    probe.client.post(f"/v1/test-helpers/payments/{payment['id']}/expire")
    assert probe.client.post(f"/v1/payments/{payment['id']}/cancel").status_code == 200


def state_expire_helper_settled_allowed(probe: Probe) -> None:
    payment = create_payment(probe.client)
    deposit(probe.client, payment["id"], "25")
    response = probe.client.post(f"/v1/test-helpers/payments/{payment['id']}/expire")
    assert response.status_code == 200


# ------------------------------------------------------------------------------ deposits
def deposit_overpaid_stays_underpaid(probe: Probe) -> None:
    payment = create_payment(probe.client)
    assert deposit(probe.client, payment["id"], "26")["status"] == "underpaid"


def deposit_raw_six_decimals(probe: Probe) -> None:
    payment = create_payment(probe.client, quotes=ETH)
    paid = deposit(probe.client, payment["id"], "1.000000000000000001", "eth", "ethereum")
    assert paid["status"] == "underpaid"


# ------------------------------------------------------------------------------ list
def payments_cursor_skips_boundary_item(probe: Probe) -> None:
    created = [create_payment(probe.client)["id"] for _ in range(3)]
    first = probe.client.get("/v1/payments?limit=1").json()
    assert first["payments"][0]["id"] == created[2]
    rest = _listed(probe, limit=1, cursor=first["next_cursor"])
    assert rest[0]["id"] == created[0]  # created[1] is on no page


def payments_status_filter_ignored(probe: Probe) -> None:
    payment = create_payment(probe.client)
    listed = _listed(probe, status="canceled", limit=100)
    assert payment["id"] in [p["id"] for p in listed]


def payments_order_filter_prefix_match(probe: Probe) -> None:
    number = order_no()
    create_payment(probe.client, merchant_order_no=number)
    create_payment(probe.client, merchant_order_no=number + "-2")
    assert len(_listed(probe, merchant_order_no=number)) == 2


# ------------------------------------------------------------------------------ replays
def payment_replay_inserts_second_row(probe: Probe) -> None:
    key, body = uuid.uuid4().hex, payment_body()
    first = probe.client.post("/v1/payments", body, idempotency_key=key)
    again = probe.client.post("/v1/payments", body, idempotency_key=key)
    assert first.status_code == again.status_code == 201
    assert len(_listed(probe, merchant_order_no=body["merchant_order_no"])) == 2


PROBES: dict[str, ProbeFn] = {
    "state-cancel-expired-payment-allowed": state_cancel_expired_payment_allowed,
    "state-expire-helper-settled-allowed": state_expire_helper_settled_allowed,
    "deposit-overpaid-stays-underpaid": deposit_overpaid_stays_underpaid,
    "deposit-raw-six-decimals": deposit_raw_six_decimals,
    "payments-cursor-skips-boundary-item": payments_cursor_skips_boundary_item,
    "payments-status-filter-ignored": payments_status_filter_ignored,
    "payments-order-filter-prefix-match": payments_order_filter_prefix_match,
    "payment-replay-inserts-second-row": payment_replay_inserts_second_row,
}
