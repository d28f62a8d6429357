"""Probes of the response-shape faults (faults/responses.yaml).

Each probe reaches one success (usage on a settled ``upto`` payment, an accepted underpaid
payment, a rotated secret, a settlement) and asserts the broken field; a correct server returns
the field as documented, so the assertion fails there.
"""

from __future__ import annotations

from typing import Any

from tests.reference.domain_factories import (
    create_requirements,
    put_endpoint,
    report_usage,
    settle,
    settled_payment,
)
from tests.reference.factories import create_payment, deposit
from tests.reference.faults import Probe, ProbeFn


def _ok(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def x402_usage_response_without_usage_id(probe: Probe) -> None:
    payment_id, _ = settled_payment(probe.client, scheme="upto")
    assert "usage_id" not in _ok(report_usage(probe.client, payment_id, "0.01"))


def payment_accept_underpaid_without_chain(probe: Probe) -> None:
    payment = create_payment(probe.client)
    deposit(probe.client, payment["id"], "1.00")
    result = _ok(probe.client.post(f"/v1/payments/{payment['id']}/accept-underpaid"))
    assert "currency_chain_id" not in result


def webhook_rotate_response_without_id(probe: Probe) -> None:
    endpoint = put_endpoint(probe.client, "https://hooks.example.test/x", ["payment.settled"])
    assert "id" not in _ok(
        probe.client.post(f"/v1/webhook-endpoints/{endpoint['id']}/rotate-secret")
    )


def x402_settle_success_as_string(probe: Probe) -> None:
    issued = create_requirements(probe.client)
    result = _ok(settle(probe.client, issued["payment_id"], issued["accepts"][0]))
    assert result["success"] == "true"


PROBES: dict[str, ProbeFn] = {
    name.replace("_", "-"): fn
    for name, fn in dict(globals()).items()
    if callable(fn) and getattr(fn, "__module__", None) == __name__ and not name.startswith("_")
}
