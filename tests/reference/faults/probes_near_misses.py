"""Probes of the near-miss class faults (faults/near_misses.yaml).

Each probe sends the one near miss its fault mishandles and asserts the broken answer: a body
field of the wrong JSON type (or null) accepted, a cut cursor crashing listPayments, a statement
cursor the server never issued restarting the statement. A correct server refuses each request
with 400, so the assertion fails there.
"""

from __future__ import annotations

import uuid

from tests.reference.domain_factories import settled_payment, statement, utc_now
from tests.reference.factories import (
    create_payment,
    create_payout,
    payout_body,
    subscription_body,
)
from tests.reference.faults import Probe, ProbeFn


def _replace_schedule(probe: Probe, **fields: object) -> int:
    schedule = create_payout(probe.client)
    body = {**payout_body(), **fields}
    return probe.client.put(f"/v1/payout-schedules/{schedule['id']}", body).status_code


def _usage(probe: Probe, **fields: object) -> int:
    payment_id, _ = settled_payment(probe.client, scheme="upto")
    usage = {"actual_amount": "0.01", "usage_id": "u-" + uuid.uuid4().hex[:8], "evidence": {}}
    return probe.client.post(f"/v1/x402/{payment_id}/usage", {**usage, **fields}).status_code


def validation_null_as_absent(probe: Probe) -> None:
    assert _replace_schedule(probe, first_run_at=None) == 200


def validation_number_coerced_to_string(probe: Probe) -> None:
    assert _replace_schedule(probe, min_send_amount=12) == 200


def validation_numeric_string_coerced(probe: Probe) -> None:
    body = subscription_body(interval_secs="2592000")
    assert probe.client.post("/v1/subscriptions", body).status_code == 201


def validation_object_stored_as_json_text(probe: Probe) -> None:
    assert _usage(probe, usage_id={"conformance": 1}) == 200


def validation_object_field_accepts_array(probe: Probe) -> None:
    assert _usage(probe, evidence=["conformance"]) == 200


def payments_cursor_truncated_500(probe: Probe) -> None:
    create_payment(probe.client)
    create_payment(probe.client)
    cursor = probe.client.get("/v1/payments?limit=1").json()["next_cursor"]
    cut = cursor[: len(cursor) // 2]
    assert probe.client.get(f"/v1/payments?limit=1&cursor={cut}").status_code == 500


def statement_bad_cursor_first_page(probe: Probe) -> None:
    now = utc_now()
    response = statement(probe.client, now, now.replace(year=now.year + 1), cursor="never-issued")
    assert response.status_code == 200


PROBES: dict[str, ProbeFn] = {
    name.replace("_", "-"): fn
    for name, fn in dict(globals()).items()
    if callable(fn) and getattr(fn, "__module__", None) == __name__ and not name.startswith("_")
}
