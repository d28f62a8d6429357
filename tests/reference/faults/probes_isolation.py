"""Probes of the tenant isolation faults (faults/isolation.yaml).

In each probe the second merchant (``probe.other``) names objects of the first (``probe.client``)
and the assertion is the leak: a foreign id acted on, a foreign object listed. Against a correct
server every assertion fails.
"""

from __future__ import annotations

from tests.reference.domain_factories import (
    create_requirements,
    deliveries,
    endpoint_id,
    put_endpoint,
    settle,
    statement,
    utc_now,
    window_after,
)
from tests.reference.factories import (
    create_payment,
    create_subscription,
    deposit,
    order_no,
)
from tests.reference.faults import Probe, ProbeFn

HOOK = "http://127.0.0.1:9/isolation-probe"


def isolation_subscription_cancel_any_merchant(probe: Probe) -> None:
    theirs = create_subscription(probe.client)
    response = probe.other.post(f"/v1/subscriptions/{theirs['id']}/cancel")
    assert response.status_code == 200, response.status_code


def isolation_rotate_secret_any_merchant(probe: Probe) -> None:
    theirs = put_endpoint(probe.client, HOOK, [])["id"]
    response = probe.other.post(f"/v1/webhook-endpoints/{theirs}/rotate-secret")
    assert response.status_code == 200, response.status_code


def _first_delivery(probe: Probe) -> str:
    """A delivery of the first merchant: an endpoint hears of a new payment."""
    put_endpoint(probe.client, HOOK, ["payment.created"])
    payment = create_payment(probe.client)
    found = [
        ident
        for ident, delivery in deliveries(probe.client).items()
        if delivery["event_type"] == "payment.created"
    ]
    assert found, f"no delivery for payment {payment['id']}"
    return found[-1]


def isolation_deliveries_all_merchants(probe: Probe) -> None:
    theirs = _first_delivery(probe)
    assert theirs in deliveries(probe.other)


def isolation_resend_any_merchant(probe: Probe) -> None:
    theirs = _first_delivery(probe)
    response = probe.other.post(f"/v1/webhook-deliveries/{theirs}/resend")
    assert response.status_code == 200, response.status_code


def isolation_endpoint_ids_global(probe: Probe) -> None:
    shared = endpoint_id()
    put_endpoint(probe.client, HOOK, [], shared)
    put_endpoint(probe.other, HOOK + "/other", [], shared)
    listed = probe.client.get("/v1/webhook-endpoints").json()["endpoints"]
    assert [e["url"] for e in listed if e["id"] == shared] == [HOOK + "/other"]


def isolation_x402_any_merchant(probe: Probe) -> None:
    issued = create_requirements(probe.client)
    response = settle(probe.other, issued["payment_id"], issued["accepts"][0])
    assert response.status_code == 200, response.status_code


def isolation_statement_mixes_merchants(probe: Probe) -> None:
    start = utc_now()
    payment = create_payment(probe.client)
    deposit(probe.client, payment["id"], "25.00")
    response = statement(probe.other, start, window_after(start))
    assert response.status_code == 200, response.text
    assert payment["id"] in {line.get("payment_id") for line in response.json()["lines"]}


def isolation_foreign_id_403(probe: Probe) -> None:
    theirs = create_payment(probe.client)
    response = probe.other.post(f"/v1/payments/{theirs['id']}/cancel")
    assert response.status_code == 403, response.status_code


def isolation_order_no_filter_all_merchants(probe: Probe) -> None:
    number = order_no()
    theirs = create_payment(probe.client, merchant_order_no=number)
    listed = probe.other.get(f"/v1/payments?merchant_order_no={number}").json()["payments"]
    assert [p["id"] for p in listed] == [theirs["id"]]


def isolation_helpers_any_merchant(probe: Probe) -> None:
    theirs = create_payment(probe.client)
    response = probe.other.post(f"/v1/test-helpers/payments/{theirs['id']}/expire")
    assert response.status_code == 200, response.status_code


def isolation_keys_share_a_merchant(probe: Probe) -> None:
    start = utc_now()
    response = statement(probe.other, start, window_after(start))
    assert response.status_code == 200, response.text
    assert response.json()["merchant_id"] == probe.profile.primary.merchant_id


PROBES: dict[str, ProbeFn] = {
    "isolation-subscription-cancel-any-merchant": isolation_subscription_cancel_any_merchant,
    "isolation-rotate-secret-any-merchant": isolation_rotate_secret_any_merchant,
    "isolation-deliveries-all-merchants": isolation_deliveries_all_merchants,
    "isolation-resend-any-merchant": isolation_resend_any_merchant,
    "isolation-endpoint-ids-global": isolation_endpoint_ids_global,
    "isolation-x402-any-merchant": isolation_x402_any_merchant,
    "isolation-statement-mixes-merchants": isolation_statement_mixes_merchants,
    "isolation-foreign-id-403": isolation_foreign_id_403,
    "isolation-order-no-filter-all-merchants": isolation_order_no_filter_all_merchants,
    "isolation-helpers-any-merchant": isolation_helpers_any_merchant,
    "isolation-keys-share-a-merchant": isolation_keys_share_a_merchant,
}
