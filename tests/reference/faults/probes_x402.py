"""Probes of the x402 faults (faults/x402.yaml): requirements, settlement and usage.

Each probe asserts the broken behaviour; against a correct server its assertion fails. Probes
work on requirements they issue themselves.
"""

from __future__ import annotations

import time
from typing import Any

from tests.reference.domain_factories import (
    create_requirements,
    report_usage,
    settle,
    settled_payment,
    signed_payload,
)
from tests.reference.faults import Probe, ProbeFn


def _first(issued: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = issued["accepts"][0]
    return entry


def x402_valid_before_offset_tenfold(probe: Probe) -> None:
    before = int(time.time())
    entry = _first(create_requirements(probe.client))
    assert entry["valid_before"] >= before + 3000


def x402_resource_default_relative(probe: Probe) -> None:
    entry = _first(create_requirements(probe.client))
    assert not entry["resource"].startswith(("http://", "https://"))


def x402_malformed_payload_422(probe: Probe) -> None:
    issued = create_requirements(probe.client)
    payload = signed_payload(_first(issued))
    del payload["signature"]
    assert settle(probe.client, issued["payment_id"], _first(issued), payload).status_code == 422


def x402_malformed_payload_500(probe: Probe) -> None:
    issued = create_requirements(probe.client)
    payload = signed_payload(_first(issued))
    del payload["authorization"]["value"]
    assert settle(probe.client, issued["payment_id"], _first(issued), payload).status_code == 500


def x402_settled_accepts_other_payload(probe: Probe) -> None:
    payment_id, entry = settled_payment(probe.client)
    other = signed_payload(entry, valid_after=int(time.time()) - 120)
    assert settle(probe.client, payment_id, entry, other).status_code == 200


def x402_tx_hash_without_prefix(probe: Probe) -> None:
    issued = create_requirements(probe.client)
    response = settle(probe.client, issued["payment_id"], _first(issued))
    assert not response.json()["tx_hash"].startswith("0x")


def x402_usage_max_from_requirements(probe: Probe) -> None:
    issued = create_requirements(probe.client, scheme="upto", amount="0.5")
    payload = signed_payload(_first(issued), value=300_000)  # 0.3 of 0.5 authorised
    assert settle(probe.client, issued["payment_id"], _first(issued), payload).status_code == 200
    response = report_usage(probe.client, issued["payment_id"], "0.4")
    assert response.status_code == 200 and response.json()["max_raw"] == "500000"


def x402_usage_actual_raw_wrong_decimals(probe: Probe) -> None:
    payment_id, _ = settled_payment(
        probe.client, scheme="upto", currency_id="eth", chain_id="ethereum", amount="0.001"
    )
    response = report_usage(probe.client, payment_id, "0.0005")
    assert response.status_code == 200 and response.json()["actual_raw"] != str(5 * 10**14)


def x402_usage_on_unsettled_accepted(probe: Probe) -> None:
    issued = create_requirements(probe.client, scheme="upto")
    assert report_usage(probe.client, issued["payment_id"], "0.01").status_code == 200


def validation_raw_amount_trailing_dot(probe: Probe) -> None:
    issued = create_requirements(probe.client)
    entry = {**_first(issued), "max_amount_required": _first(issued)["max_amount_required"] + "."}
    answer = settle(probe.client, issued["payment_id"], entry, signed_payload(_first(issued)))
    assert answer.status_code != 400, answer.text  # past validation: "10." taken as 10


PROBES: dict[str, ProbeFn] = {
    "validation-raw-amount-trailing-dot": validation_raw_amount_trailing_dot,
    "x402-valid-before-offset-tenfold": x402_valid_before_offset_tenfold,
    "x402-resource-default-relative": x402_resource_default_relative,
    "x402-malformed-payload-422": x402_malformed_payload_422,
    "x402-malformed-payload-500": x402_malformed_payload_500,
    "x402-settled-accepts-other-payload": x402_settled_accepts_other_payload,
    "x402-tx-hash-without-prefix": x402_tx_hash_without_prefix,
    "x402-usage-max-from-requirements": x402_usage_max_from_requirements,
    "x402-usage-actual-raw-wrong-decimals": x402_usage_actual_raw_wrong_decimals,
    "x402-usage-on-unsettled-accepted": x402_usage_on_unsettled_accepted,
}
