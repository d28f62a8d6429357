"""Probes of the robustness faults (faults/robustness.yaml).

Each probe sends one malformed request and asserts the broken answer; a correct server refuses
the same request with 4xx (or, for an unversioned path, 404), so the assertion fails there.
"""

from __future__ import annotations

import json

from tests.reference.factories import payment_body
from tests.reference.faults import Probe, ProbeFn


def robust_invalid_utf8_500(probe: Probe) -> None:
    body = json.dumps(payment_body(memo="MEMO")).encode().replace(b"MEMO", b"\xff\xfe")
    assert probe.client.post("/v1/payments", content=body).status_code == 500


def robust_non_object_body_500(probe: Probe) -> None:
    body = json.dumps([payment_body()]).encode()
    assert probe.client.post("/v1/payments", content=body).status_code == 500


def robust_empty_put_body_500(probe: Probe) -> None:
    response = probe.client.put("/v1/split-template", headers={"Content-Type": "application/json"})
    assert response.status_code == 500


def robust_query_escape_500(probe: Probe) -> None:
    assert probe.client.get("/v1/payments?limit=%zz").status_code == 500


def validation_malformed_escape_dropped(probe: Probe) -> None:
    probe.client.post("/v1/payments", payment_body())
    listed = probe.client.get("/v1/payments?merchant_order_no=no-such-order%zz")
    assert listed.status_code == 200 and listed.json()["payments"]


def robust_unversioned_paths_served(probe: Probe) -> None:
    assert probe.client.get("/payments").status_code == 200


def validation_boolean_as_integer(probe: Probe) -> None:
    splits = [{"type": "percentage", "merchant_id": "m_gamma", "bps": True}]
    assert probe.client.post("/v1/payments", payment_body(splits=splits)).status_code == 201


PROBES: dict[str, ProbeFn] = {
    name.replace("_", "-"): fn
    for name, fn in dict(globals()).items()
    if callable(fn) and getattr(fn, "__module__", None) == __name__ and not name.startswith("_")
}
