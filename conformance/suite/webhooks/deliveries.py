"""Deliveries at a live receiver: events, signatures, delivery records, failure and resend.

One scenario per run, with fresh endpoints on the suite's receiver:

- ``ok``: subscribed to every event type of the profile, its path answers 200;
- ``narrow``: first put with some types, then replaced with a subset (the others must not
  reach it);
- ``fail``: subscribed to one type, its path answers 500 until the suite resends.

Each endpoint's secret is rotated before any event is caused (the merchant learns a secret
only from a rotation). The suite then causes every event the profile's ``[webhooks.emits]``
declares and checks every request that reaches the receiver: a POST, the id header
(``webhook-id``) = a listed delivery id, the timestamp (``webhook-timestamp``) = the sending
time, a signature as the profile declares it (Standard Webhooks by default) made with the
secret current at sending time, the body ``{id, type, timestamp, data}``. Delivery records: a status
of the profile's list, ``attempts`` at least the tries that arrived, a 2xx try makes the
delivery ``succeeded`` and nothing arrives after that, a delivery that never got a 2xx is
``failed`` once the server stops trying (the retry schedule is the server's own: the suite only
waits, up to ``WAIT_SECS``), ``resend`` makes a new try signed with the secret rotated in
between. A replayed request emits nothing: a payment created and replayed gets as many
createPayment events (``payment.created``) as one created once (likewise a replayed schedule
replace).

``driving.DeliveryDriver`` sends the requests and reads what arrived, ``judging.DeliveryJudge``
checks it; ``DeliveryScenario`` runs the steps in order.
"""

from __future__ import annotations

from conformance.judge.outcomes import json_object
from conformance.suite.factories import RequestSpec, locate_operation, send
from conformance.suite.stateful import MachineContext
from conformance.suite.tool_errors import PrerequisiteError
from conformance.suite.webhooks.causes import CAUSES, caused_keys
from conformance.suite.webhooks.driving import WAIT_SECS, Arrival
from conformance.suite.webhooks.judging import DeliveryJudge

ENDPOINT_IDS = ("WH-002", "WH-003", "WH-004", "WH-005", "WH-006", "WH-007", "WH-008", "WH-009")
SECRET_IDS = ("WH-010", "WH-011")
DELIVERY_IDS = tuple(f"DLV-{n:03d}" for n in range(1, 17))
RECEIVER_IDS = (
    *(i for i in DELIVERY_IDS if i not in ("DLV-001", "DLV-002", "DLV-011", "DLV-013")),
    *(c.requirement_id for c in CAUSES),
    "IDEM-009",
)
IDS = ("OPS-005", *ENDPOINT_IDS, *SECRET_IDS, *DELIVERY_IDS, *(c.requirement_id for c in CAUSES))
ALL_IDS = (*IDS, "IDEM-009")


class DeliveryScenario(DeliveryJudge):
    """The scenario; ``run()`` records into ``ctx.verdicts`` (use ``run_guarded``)."""

    # -- the scenario ---------------------------------------------------------------------------
    def run(self) -> None:
        keys = caused_keys(self.profile)
        caused = [self.profile.webhooks.emitted(k) or "" for k in keys]
        if not caused:
            raise PrerequisiteError(
                "the profile lists none of the event types the suite causes (webhooks.emits)"
            )
        fail_type = caused[0]
        narrow_types = self.narrow_subset(caused)
        self.fail = self.endpoint("fail", [fail_type])
        self.receiver.answer(self.fail.path, 500)
        self.ok = self.endpoint("ok", self.types)
        first = [t for t in self.types if t not in narrow_types]
        self.narrow = self.endpoint("narrow", narrow_types, first=first)
        for endpoint in self.endpoints:
            self.rotate(endpoint)
        self.refusals()

        self.listed_before = self.ids_listed()
        started = self.clock()
        expected = self.cause(set(keys))
        self.expected += expected
        replays = self.replays()
        self.ctx.transcript.step("wait for the webhooks at the receiver")
        pairs = [(self.ok, e) for e in expected]
        for endpoint in (self.narrow, self.fail):
            pairs += [(endpoint, e) for e in expected if e.event_type in endpoint.event_types]
        deadline = self.clock() + WAIT_SECS
        self.receiver.wait_for(
            lambda _: all(self.enough(endpoint, e) for endpoint, e in pairs),
            timeout=WAIT_SECS,
        )
        self.note_arrivals(started)
        failing = next(
            (a for e in expected if e.event_type == fail_type for a in self.matching(self.fail, e)),
            None,
        )
        tracked = {a.delivery_id for a in self.arrivals() if a.delivery_id}
        self.ctx.transcript.step("poll the delivery list until the deliveries are final")
        listing = self.wait_final(tracked, max(deadline, self.clock() + 1.0))
        failed_first = self.judge_failing(failing, listing)
        self.resend(failing, failed_first)
        self.watch_succeeded(tracked)
        self.ctx.transcript.step("read the delivery list once more")
        final = self.read_listing()
        self.judge_expected(pairs, final)
        self.judge_arrivals(final)
        self.judge_records(final)
        self.judge_replays(replays)

    # -- the failing endpoint and resend --------------------------------------------------------
    def resend(self, failing: Arrival | None, attempts_before: int | None) -> None:
        if failing is None or failing.delivery_id is None:
            for rid in ("DLV-002", "DLV-009", "DLV-013", "DLV-016"):
                self.not_reached.setdefault(rid, "no delivery reached the failing receiver path")
            return
        delivery_id = failing.delivery_id
        if delivery_id not in self.read_listing().records:
            for rid in ("DLV-002", "DLV-009", "DLV-013", "DLV-016"):
                self.not_reached.setdefault(
                    rid,
                    f"the {self.scheme.id_header} of the delivery to the failing path is not "
                    "the id of a listed delivery, so it cannot be resent",
                )
            return
        self.rotate(self.fail)
        self.receiver.answer(self.fail.path, 200)
        # a new event after the rotation: its webhook must be signed with the new secret
        # (judged with the others), whether or not the failed delivery is final by now
        fresh = self.cause(self.keys_for(self.fail.event_types[:1]))
        self.expected += fresh
        self.receiver.wait_for(
            lambda _: all(self.enough(self.fail, e) for e in fresh), timeout=WAIT_SECS
        )
        record_before = self.read_listing().records.get(delivery_id, {})
        # final before the resend: no try of its own was in flight, so every later try is one
        # the resend queued, after the rotation
        settled = record_before.get("status") in (self.succeeded, self.failed)
        before = record_before.get("attempts")
        if attempts_before is None:
            attempts_before = before if isinstance(before, int) else None
        self.ctx.transcript.step(f"resend delivery {delivery_id} (the path now answers 200)")
        spec = self.spec("resendWebhookDelivery", path_params={"id": delivery_id})
        sent = self.clock()
        self.resent[delivery_id] = sent
        response = send(self.ctx.client, spec)
        success = self.profile.success_status("resendWebhookDelivery")
        if self.v.status(
            ["DLV-002", "DLV-013", "OPS-005"], response, success, "resend", fatal=False
        ):
            status = (json_object(response) or {}).get("status")
            self.v.check(
                ["DLV-002"],
                isinstance(status, str),
                f"resend status {status!r} is not a string",
                fatal=False,
            )
            self.v.check(
                ["DLV-013"],
                status == self.resend_status,
                f"resend answered status {status!r}, expected {self.resend_status!r}",
                fatal=False,
            )
        arrived, _ = self.receiver.wait_for(
            lambda got: any(
                r.path == self.fail.path
                and r.at >= sent
                and r.header(self.scheme.id_header) == delivery_id
                for r in got
            ),
            timeout=WAIT_SECS,
        )
        self.note_arrivals(sent)
        dropped = None if arrived else self.dropped(self.fail)
        if dropped is not None:
            for rid in ("DLV-013", "DLV-016"):
                self.not_reached.setdefault(rid, dropped)
            return
        self.v.check(
            ["DLV-013", "DLV-016"],
            arrived,
            f"no new try of delivery {delivery_id} reached the receiver within {WAIT_SECS:g} s "
            "of the resend",
            fatal=False,
        )
        if not arrived:
            return
        retried = [
            a
            for a in self.arrivals(self.fail)
            if a.delivery_id == delivery_id and a.request.at >= sent
        ]
        if settled:
            self.judge_signature(retried[0], earliest=sent)
        listing = self.wait_final([delivery_id], self.clock() + WAIT_SECS)
        record = listing.records.get(delivery_id, {})
        attempts = record.get("attempts")
        if record.get("status") not in (self.succeeded, self.failed) or attempts_before is None:
            self.not_reached.setdefault(
                "DLV-016", "the resent delivery did not reach a final state in time"
            )
            return
        self.v.check(
            ["DLV-016", "DLV-012"],
            isinstance(attempts, int) and attempts > attempts_before,
            f"delivery {delivery_id}: attempts {attempts!r} after the resend, "
            f"{attempts_before} before",
            fatal=False,
        )
        self.v.check(
            ["DLV-014"],
            record.get("status") == self.succeeded,
            f"delivery {delivery_id} is {record.get('status')!r} although the resent try was "
            "answered 200",
            fatal=False,
        )


def without_receiver(ctx: MachineContext) -> None:
    """What can be checked with no receiver: the delivery records the server lists, and a
    resend of one of them (a delivery to the run's endpoint, which nothing answers)."""
    v = ctx.verdicts
    webhooks = ctx.profile.webhooks
    statuses = list(webhooks.delivery_statuses)
    delivery_id = ctx.factories.delivery_id()
    ctx.transcript.step(f"resend delivery {delivery_id}")
    method, template = locate_operation(ctx.contract, "resendWebhookDelivery")
    spec = RequestSpec("resendWebhookDelivery", method, template, {"id": delivery_id})
    response = send(ctx.client, spec)
    success = ctx.profile.success_status("resendWebhookDelivery")
    if v.status(["DLV-002", "DLV-013", "OPS-005"], response, success, "resend", fatal=False):
        status = (json_object(response) or {}).get("status")
        v.check(["DLV-002"], isinstance(status, str), f"resend status {status!r}", fatal=False)
        v.check(
            ["DLV-013"],
            status == webhooks.resend_status,
            f"resend answered status {status!r}, expected {webhooks.resend_status!r}",
            fatal=False,
        )
    ctx.transcript.step("list deliveries")
    method, template = locate_operation(ctx.contract, "listWebhookDeliveries")
    response = send(ctx.client, RequestSpec("listWebhookDeliveries", method, template))
    success = ctx.profile.success_status("listWebhookDeliveries")
    if not v.status(["OPS-005"], response, success, "list deliveries", fatal=False):
        return
    listed = (json_object(response) or {}).get("deliveries")
    for record in listed if isinstance(listed, list) else []:
        if not isinstance(record, dict):
            continue
        attempts = record.get("attempts")
        v.check(
            ["DLV-001"],
            isinstance(attempts, int) and not isinstance(attempts, bool) and attempts >= 0,
            f"delivery {record.get('id')}: attempts {attempts!r} is not a non-negative integer",
            fatal=False,
        )
        if statuses:
            v.check(
                ["DLV-011"],
                record.get("status") in statuses,
                f"delivery {record.get('id')}: status {record.get('status')!r} is not one of "
                f"{', '.join(statuses)}",
                fatal=False,
            )
