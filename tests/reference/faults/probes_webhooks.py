"""Probes of the webhook sending faults (faults/webhooks.yaml).

Each probe subscribes a receiver of its own to ``payment.created``, creates a payment and
asserts the broken behaviour on what arrives or on the delivery record; against a correct server
the assertion fails. Deliveries are found by the ids the receiver got, so other probes sharing
the server do not disturb them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from conformance.reference.webhook_dispatch import verify
from tests.reference.domain_factories import deliveries, put_endpoint, rotate
from tests.reference.factories import create_payment
from tests.reference.faults import Probe
from tests.reference.webhook_receiver import Received, WebhookReceiver

WAIT_SECS = 3.0
# The healthy server shared by the probes still retries earlier probes' deliveries to receivers
# that have closed; a resent try may queue behind them for the merchant's delivery slots.
RESEND_WAIT_SECS = 10.0
EVENT = "payment.created"


def _subscribed(probe: Probe, receiver: WebhookReceiver) -> tuple[str, str]:
    """(endpoint id, its secret) of a fresh endpoint at ``receiver``."""
    endpoint = put_endpoint(probe.client, receiver.url, [EVENT])["id"]
    return endpoint, rotate(probe.client, endpoint)


def _first(probe: Probe, statuses: Iterable[int] = ()) -> tuple[str, Received]:
    """(secret, first webhook) for a payment created with a subscribed receiver."""
    with WebhookReceiver(statuses) as receiver:
        _, secret = _subscribed(probe, receiver)
        create_payment(probe.client)
        return secret, receiver.wait_for(lambda got: len(got) >= 1, timeout=WAIT_SECS)[0]


def _final(probe: Probe, delivery_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_SECS
    while True:
        found = deliveries(probe.client).get(delivery_id)
        if found is not None and found["status"] in ("succeeded", "failed"):
            return found
        assert time.monotonic() < deadline, f"delivery {delivery_id} is not final: {found}"
        time.sleep(0.05)


# ------------------------------------------------------------------------------ probes
def webhook_signs_with_cached_secret(probe: Probe) -> None:
    with WebhookReceiver() as receiver:
        endpoint, first_secret = _subscribed(probe, receiver)
        create_payment(probe.client)
        receiver.wait_for(lambda got: len(got) >= 1, timeout=WAIT_SECS)
        rotate(probe.client, endpoint)
        create_payment(probe.client)
        later = receiver.wait_for(lambda got: len(got) >= 2, timeout=WAIT_SECS)[1]
    assert verify(first_secret, later.headers, later.body)


def webhook_id_is_event_id(probe: Probe) -> None:
    _, received = _first(probe)
    assert received.headers["webhook-id"] == json.loads(received.body)["id"]


def webhook_timestamp_milliseconds(probe: Probe) -> None:
    _, received = _first(probe)
    assert int(received.headers["webhook-timestamp"]) > time.time() * 100


def webhook_body_without_timestamp(probe: Probe) -> None:
    _, received = _first(probe)
    assert "timestamp" not in json.loads(received.body)


def webhook_retries_after_success(probe: Probe) -> None:
    with WebhookReceiver() as receiver:
        _subscribed(probe, receiver)
        create_payment(probe.client)
        got = receiver.wait_for(lambda got: len(got) >= 2, timeout=WAIT_SECS)
    assert got[0].headers["webhook-id"] == got[1].headers["webhook-id"]


def webhook_any_answer_succeeds(probe: Probe) -> None:
    _, received = _first(probe, statuses=[500] * 3)
    assert _final(probe, received.headers["webhook-id"])["status"] == "succeeded"


def webhook_attempts_count_sends(probe: Probe) -> None:
    with WebhookReceiver([500] * 3) as receiver:
        _subscribed(probe, receiver)
        create_payment(probe.client)
        got = receiver.wait_for(lambda got: len(got) >= 1, timeout=WAIT_SECS)
        record = _final(probe, got[0].headers["webhook-id"])
        tries = len(receiver.received)
    assert record["attempts"] < tries, (record, tries)


def webhook_resend_queues_nothing(probe: Probe) -> None:
    with WebhookReceiver([500] * 3) as receiver:
        _subscribed(probe, receiver)
        create_payment(probe.client)
        delivery_id = receiver.wait_for(lambda got: len(got) >= 1, timeout=WAIT_SECS)[0].headers[
            "webhook-id"
        ]
        before = _final(probe, delivery_id)
        tries = len(receiver.received)
        response = probe.client.post(f"/v1/webhook-deliveries/{delivery_id}/resend")
        assert response.status_code == 200, response.text
        # A loaded machine may take a while to send the resent try: wait for it, not a guess.
        try:
            receiver.wait_for(lambda got: len(got) > tries, timeout=RESEND_WAIT_SECS)
        except AssertionError:
            resent = False
        else:
            resent = True
        after = deliveries(probe.client)[delivery_id]
    assert not resent, "the resend sent a new try"
    assert after["attempts"] == before["attempts"]


PROBES: dict[str, Callable[[Probe], None]] = {
    "webhook-signs-with-cached-secret": webhook_signs_with_cached_secret,
    "webhook-id-is-event-id": webhook_id_is_event_id,
    "webhook-timestamp-milliseconds": webhook_timestamp_milliseconds,
    "webhook-body-without-timestamp": webhook_body_without_timestamp,
    "webhook-retries-after-success": webhook_retries_after_success,
    "webhook-any-answer-succeeds": webhook_any_answer_succeeds,
    "webhook-attempts-count-sends": webhook_attempts_count_sends,
    "webhook-resend-queues-nothing": webhook_resend_queues_nothing,
}
