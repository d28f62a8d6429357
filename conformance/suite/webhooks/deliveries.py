"""Deliveries at a live receiver: events, signatures, delivery records, failure and resend.

One scenario per run, with fresh endpoints on the suite's receiver:

- ``ok``: subscribed to every event type of the profile, its path answers 200;
- ``narrow``: first put with some types, then replaced with a subset (the others must not
  reach it);
- ``fail``: subscribed to one type, its path answers 500 until the suite resends.

Each endpoint's secret is rotated before any event is caused (the merchant learns a secret
only from a rotation). The suite then causes every event type the profile lists and checks
every request that reaches the receiver: a POST, ``webhook-id`` = a listed delivery id,
``webhook-timestamp`` = the sending time, a Standard Webhooks signature made with the secret
current at sending time, the body ``{id, type, timestamp, data}``. Delivery records: a status
of the profile's list, ``attempts`` at least the tries that arrived, a 2xx try makes the
delivery ``succeeded`` and nothing arrives after that, a delivery that never got a 2xx is
``failed`` once the server stops trying (the retry schedule is the server's own: the suite only
waits, up to ``WAIT_SECS``), ``resend`` makes a new try signed with the secret rotated in
between. A replayed request emits nothing: a payment created and replayed gets as many
``payment.created`` deliveries as one created once (likewise a replayed schedule replace).
"""

from __future__ import annotations

import json
import math
import random
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from conformance.core import jsonsafe
from conformance.suite.factories import PrerequisiteError, RequestSpec, locate_operation, send
from conformance.suite.outcomes import json_object
from conformance.suite.stateful import MachineContext, Verdicts
from conformance.suite.webhooks.causes import CAUSES, Actions, Expected, listed_types, unreachable
from conformance.suite.webhooks.receiver import Received, WebhookReceiver, is_loopback
from conformance.suite.webhooks.signatures import secret_problem, signed_with

WAIT_SECS = 20.0  # how long a delivery may take to arrive or to reach a final state
POLL_SECS = 0.1
# A delivery may be signed this long before it reaches the receiver: a secret replaced less
# than this before a delivery arrived may still have signed it.
SIGNING_SLACK_SECS = 5.0
TIMESTAMP_TOLERANCE_SECS = 300  # clocks of the server and the suite may differ
NOTED_ARRIVALS = 12
SUCCEEDED, FAILED, PENDING = "succeeded", "failed", "pending"

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


@dataclass
class Secret:
    value: str
    requested_at: float
    answered_at: float


@dataclass
class Endpoint:
    name: str
    id: str
    path: str
    event_types: list[str]
    secrets: list[Secret] = field(default_factory=list)
    # every type the endpoint was ever subscribed to: an event that happened before a replace
    # may still be delivered after it
    ever: set[str] = field(default_factory=set)

    def signers(self, arrived: float, earliest: float) -> tuple[list[int], bool]:
        """Indexes of the known secrets that may have signed a request arriving at ``arrived``
        and signed no earlier than ``earliest``, and whether the secret the endpoint got at
        creation (never shown) may have."""
        allowed = []
        for index, secret in enumerate(self.secrets):
            nxt = self.secrets[index + 1] if index + 1 < len(self.secrets) else None
            until = nxt.answered_at if nxt is not None else math.inf
            if secret.requested_at <= arrived and until >= earliest:
                allowed.append(index)
        unknown = not self.secrets or self.secrets[0].answered_at >= earliest
        return allowed, unknown


@dataclass
class Listing:
    records: dict[str, dict[str, Any]]
    sent_at: float
    answered_at: float


@dataclass
class Arrival:
    """A request at one of the scenario's endpoints, parsed."""

    endpoint: Endpoint
    request: Received
    body: dict[str, Any] | None
    delivery_id: str | None

    @property
    def event_type(self) -> str | None:
        value = (self.body or {}).get("type")
        return value if isinstance(value, str) else None

    @property
    def key(self) -> str:
        return self.delivery_id or f"{self.request.path}@{self.request.at}"

    def names(self, resource_id: str) -> bool:
        return resource_id.encode() in self.request.body


class DeliveryScenario:
    """The scenario; ``run()`` records into ``ctx.verdicts`` (use ``run_guarded``)."""

    def __init__(
        self,
        ctx: MachineContext,
        receiver: WebhookReceiver,
        seed: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ctx = ctx
        self.receiver = receiver
        self.v: Verdicts = ctx.verdicts
        self.random = random.Random(seed)
        self.clock = clock
        self.profile = ctx.profile
        webhooks = self.profile.webhooks
        self.prefix = webhooks.secret_prefix
        self.secret_bytes = webhooks.secret_random_bytes
        self.statuses = list(webhooks.delivery_statuses)
        self.resend_status = webhooks.resend_status
        self.types = listed_types(self.profile)
        self.run_token = uuid.uuid4().hex[:12]
        self.endpoints: list[Endpoint] = []
        self.listings: list[Listing] = []
        self.succeeded_seen: dict[str, float] = {}  # delivery id -> answer time of the listing
        self.resent: dict[str, float] = {}  # delivery id -> when the resend was sent
        self.expected: list[Expected] = []  # every event the suite caused
        # ids listed before the suite caused its events (None: that listing failed); a record
        # not among them and not final is a delivery of this run still on its way
        self.listed_before: set[str] | None = None
        self.not_reached: dict[str, str] = dict(unreachable(self.profile))
        self.actions = Actions(ctx.factories, clock)

    # -- requests -----------------------------------------------------------------------------
    def spec(self, operation_id: str, **parts: Any) -> RequestSpec:
        method, template = locate_operation(self.ctx.contract, operation_id)
        return RequestSpec(operation_id, method, template, **parts)

    def put(self, endpoint_id: str, url: str, event_types: Sequence[str]) -> httpx.Response:
        spec = self.spec(
            "putWebhookEndpoint",
            path_params={"id": endpoint_id},
            body={"url": url, "event_types": list(event_types)},
        )
        return send(self.ctx.client, spec)

    def endpoint(
        self, name: str, event_types: Sequence[str], first: Sequence[str] = ()
    ) -> Endpoint:
        """A fresh endpoint on the receiver (put with ``first`` types, then replaced)."""
        endpoint_id = f"we_conf_{name}_{uuid.uuid4().hex[:16]}"
        path = f"/{self.run_token}/{name}/{endpoint_id}"
        url = self.receiver.url(path)
        success = self.profile.success_status("putWebhookEndpoint")
        if first:
            self.ctx.transcript.step(f"put endpoint {name} on the receiver with {len(first)} types")
            response = self.put(endpoint_id, url, first)
            self.check_put(response, endpoint_id, url, first, ("WH-001", "WH-004", "WH-007"))
            self.ctx.transcript.step(f"replace endpoint {name} with {len(event_types)} types")
            response = self.put(endpoint_id, url, event_types)
            self.check_put(response, endpoint_id, url, event_types, ("WH-005",))
        else:
            self.ctx.transcript.step(
                f"put endpoint {name} on the receiver: {', '.join(event_types)}"
            )
            response = self.put(endpoint_id, url, event_types)
            self.check_put(response, endpoint_id, url, event_types, ("WH-001", "WH-004", "WH-007"))
        if response.status_code != success:
            raise PrerequisiteError(
                f"could not put a webhook endpoint at the receiver ({url}): "
                f"answered {response.status_code}"
            )
        endpoint = Endpoint(name, endpoint_id, path, list(event_types), ever={*first, *event_types})
        self.endpoints.append(endpoint)
        return endpoint

    def check_put(
        self,
        response: httpx.Response,
        endpoint_id: str,
        url: str,
        event_types: Sequence[str],
        ids: Sequence[str],
    ) -> None:
        success = self.profile.success_status("putWebhookEndpoint")
        loopback_http = url.startswith("http://") and is_loopback(self.receiver.public_host)
        if not loopback_http and not url.startswith("https://"):
            ids = [i for i in ids if i != "WH-007"]
        if not self.v.status([*ids, "OPS-005"], response, success, "put endpoint", fatal=False):
            return
        body = json_object(response) or {}
        active = body.get("active")
        self.v.check(
            [*ids, "WH-002"], active is True, f"put answered active {active!r}", fatal=False
        )
        problems = []
        if body.get("id") != endpoint_id:
            problems.append(f"id {body.get('id')!r}, expected {endpoint_id!r}")
        types = body.get("event_types")
        if not isinstance(types, list) or sorted(map(str, types)) != sorted(event_types):
            problems.append(f"event_types {types!r}, expected {sorted(event_types)!r}")
        self.v.problems(ids, [f"put endpoint answered {p}" for p in problems], fatal=False)

    def rotate(self, endpoint: Endpoint) -> None:
        self.ctx.transcript.step(f"rotate the secret of endpoint {endpoint.name}")
        spec = self.spec("rotateWebhookEndpointSecret", path_params={"id": endpoint.id})
        requested = self.clock()
        response = send(self.ctx.client, spec)
        answered = self.clock()
        success = self.profile.success_status("rotateWebhookEndpointSecret")
        ok = self.v.status(["WH-003", "OPS-005"], response, success, "rotate", fatal=False)
        body = json_object(response) or {}
        secret = body.get("secret")
        if not ok or not isinstance(secret, str):
            raise PrerequisiteError(
                f"could not rotate the secret of endpoint {endpoint.id}: no secret returned"
            )
        self.v.check(
            ["WH-003"],
            body.get("id") == endpoint.id,
            f"rotate-secret answered id {body.get('id')!r} for endpoint {endpoint.id!r}",
            fatal=False,
        )
        problem = secret_problem(secret, self.prefix, self.secret_bytes)
        self.v.check(["WH-010"], problem is None, f"rotated secret: {problem}", fatal=False)
        earlier = [s.value for e in self.endpoints for s in e.secrets]
        self.v.check(
            ["WH-011", "WH-003"],
            secret not in earlier,
            "rotate-secret returned a secret the suite had been given before",
            fatal=False,
        )
        endpoint.secrets.append(Secret(secret, requested, answered))

    def refusals(self) -> None:
        """A plain-http url on a host that is not loopback and an unknown event type: 422, and
        no endpoint appears."""
        refused = self.profile.error("status", "business_rule")
        fresh = []
        cases = [
            ("WH-009", self.receiver.url("/refused"), [*self.types[:1], "conformance.unknown"])
        ]
        if "http" not in self.profile.webhooks.url_schemes:
            cases.append(("WH-008", "http://hooks.conformance.invalid/refused", self.types[:1]))
        for requirement_id, url, types in cases:
            endpoint_id = f"we_conf_refused_{uuid.uuid4().hex[:16]}"
            self.ctx.transcript.step(f"put endpoint {endpoint_id} with {url} {types}: refused")
            response = self.put(endpoint_id, url, types)
            if response.status_code < 300:  # wrongly accepted: subscribed to nothing from now on
                self.put(endpoint_id, url, [])
            self.v.status([requirement_id], response, refused, "put endpoint", fatal=False)
            fresh.append((requirement_id, endpoint_id))
        self.ctx.transcript.step("list endpoints: none of the refused ones, ours as last written")
        spec = self.spec("listWebhookEndpoints")
        response = send(self.ctx.client, spec)
        success = self.profile.success_status("listWebhookEndpoints")
        if not self.v.status(["WH-006", "OPS-005"], response, success, "list", fatal=False):
            return
        listed = (json_object(response) or {}).get("endpoints")
        items = [e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
        by_id: dict[str, list[dict[str, Any]]] = {}
        for item in items:
            by_id.setdefault(str(item.get("id")), []).append(item)
        for requirement_id, endpoint_id in fresh:
            self.v.check(
                [requirement_id],
                endpoint_id not in by_id,
                f"the refused endpoint {endpoint_id} is listed",
                fatal=False,
            )
        for endpoint in self.endpoints:
            found = by_id.get(endpoint.id, [])
            kept_types = found[0].get("event_types") if len(found) == 1 else None
            self.v.check(
                ["WH-005", "WH-006"],
                len(found) == 1
                and found[0].get("url") == self.receiver.url(endpoint.path)
                and isinstance(kept_types, list)
                and sorted(map(str, kept_types)) == sorted(endpoint.event_types),
                f"endpoint {endpoint.id} listed {len(found)} time(s)"
                + (f" as {json.dumps(found[0])[:300]}" if found else "")
                + f", expected once with event_types {sorted(endpoint.event_types)}",
                fatal=False,
            )
            if isinstance(kept_types, list):
                # What the server holds decides which deliveries it owes (a wrong replace is
                # WH-005's failure, not a delivery's).
                endpoint.event_types = [str(t) for t in kept_types]
                endpoint.ever.update(endpoint.event_types)

    # -- reading deliveries -------------------------------------------------------------------
    def read_listing(self) -> Listing:
        spec = self.spec("listWebhookDeliveries")
        sent = self.clock()
        response = send(self.ctx.client, spec)
        answered = self.clock()
        success = self.profile.success_status("listWebhookDeliveries")
        if response.status_code != success:
            raise PrerequisiteError(
                f"could not list webhook deliveries: answered {response.status_code}"
            )
        deliveries = (json_object(response) or {}).get("deliveries")
        records = {
            str(d["id"]): d
            for d in (deliveries if isinstance(deliveries, list) else [])
            if isinstance(d, dict) and isinstance(d.get("id"), str)
        }
        listing = Listing(records, sent, answered)
        for delivery_id, record in records.items():
            if record.get("status") == SUCCEEDED and delivery_id not in self.succeeded_seen:
                self.succeeded_seen[delivery_id] = answered
        self.listings.append(listing)
        return listing

    def ids_listed(self) -> set[str] | None:
        """The delivery ids the server lists now (a long-lived server keeps earlier runs'
        deliveries); None when it does not list them."""
        try:
            return set(self.read_listing().records)
        except PrerequisiteError:
            return None

    def on_its_way(self, expected: Expected, listing: Listing) -> str | None:
        """Why a webhook that did not arrive is not judged: the server lists a delivery of its
        event type, made since the suite caused it, that is not final and not attempted yet.
        The receiver is live, so a try of a delivery to it would have arrived: a listed try
        that did not is some other endpoint's. None: the server lists no such delivery, so the
        missing webhook is its failure (listed as delivered or failed, or never recorded)."""
        if self.listed_before is None:
            return None
        arrived = {a.delivery_id for a in self.arrivals()}
        for delivery_id, record in listing.records.items():
            if delivery_id in self.listed_before or delivery_id in arrived:
                continue
            status = record.get("status")
            if (
                record.get("event_type") == expected.event_type
                and status not in (SUCCEEDED, FAILED)
                and record.get("attempts") == 0
            ):
                waited = self.clock() - expected.started_at
                return (
                    f"the {expected.event_type} delivery was still on its way after "
                    f"{waited:.0f} s (the server lists delivery {delivery_id} as {status!r}, "
                    "not attempted yet)"
                )
        return None

    def dropped(self, endpoint: Endpoint) -> str | None:
        """Why a webhook missing at ``endpoint`` is not judged: the receiver dropped requests to
        it (over its bounds), and the missing one may be among them. None: it dropped none."""
        said = self.dropped_tries(endpoint.path, endpoint.name)
        return None if said is None else f"{said}; the missing webhook may be among them"

    def dropped_tries(self, path: str, name: str | None = None) -> str | None:
        """What the receiver dropped of the requests to ``path`` (None: nothing)."""
        drops = self.receiver.dropped_at(path)
        if drops is None:
            return None
        by_path = {e.path: e.name for e in self.endpoints}
        where = name or by_path.get(path, path)
        return (
            f"the receiver dropped {drops.deliveries:,} request(s) "
            f"({drops.bytes:,} bytes) to endpoint {where} over its bounds"
            + (
                f", {drops.refused:,} of them refused with 413 (body too large)"
                if drops.refused
                else ""
            )
        )

    def arrivals(self, endpoint: Endpoint | None = None) -> list[Arrival]:
        by_path = {e.path: e for e in self.endpoints}
        found = []
        for request in self.receiver.snapshot():
            owner = by_path.get(request.path)
            if owner is None or (endpoint is not None and owner is not endpoint):
                continue
            try:
                parsed = jsonsafe.loads(request.body)
            except ValueError:
                parsed = None
            found.append(
                Arrival(
                    owner,
                    request,
                    parsed if isinstance(parsed, dict) else None,
                    request.header("webhook-id"),
                )
            )
        return found

    def matching(self, endpoint: Endpoint, expected: Expected) -> list[Arrival]:
        """Arrivals at ``endpoint`` of the expected event: those naming its resource, else
        (a body that names no resource) those of its type since the action."""
        typed = [a for a in self.arrivals(endpoint) if a.event_type == expected.event_type]
        named = [a for a in typed if a.names(expected.resource_id)]
        return named or [a for a in typed if a.request.at >= expected.started_at]

    def enough(self, endpoint: Endpoint, expected: Expected) -> bool:
        return len({a.key for a in self.matching(endpoint, expected)}) >= expected.minimum

    def note_arrivals(self, since: float) -> None:
        new = [a for a in self.arrivals() if a.request.at >= since]
        for arrival in new[:NOTED_ARRIVALS]:
            self.ctx.transcript.note(
                f"webhook {arrival.request.method} {arrival.request.path} "
                f"webhook-id={arrival.delivery_id} type={arrival.event_type} "
                f"-> receiver answered {arrival.request.answered}"
            )
        if len(new) > NOTED_ARRIVALS:
            self.ctx.transcript.note(f"({len(new) - NOTED_ARRIVALS} more webhooks)")

    def wait_final(self, delivery_ids: Iterable[str], until: float) -> Listing:
        """Poll the delivery list until every id is final (or listed as succeeded/failed)."""
        wanted = set(delivery_ids)
        while True:
            listing = self.read_listing()
            final = {
                i for i in wanted if listing.records.get(i, {}).get("status") in (SUCCEEDED, FAILED)
            }
            if final == wanted or self.clock() >= until:
                return listing
            time.sleep(POLL_SECS)

    # -- the scenario ---------------------------------------------------------------------------
    def run(self) -> None:
        caused = [c.event_type for c in CAUSES if c.requirement_id not in self.not_reached]
        if not caused:
            raise PrerequisiteError("the profile lists none of the event types the suite causes")
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
        expected = self.cause(set(caused))
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
        self.ctx.transcript.step("read the delivery list once more")
        final = self.read_listing()
        self.judge_expected(pairs, final)
        self.judge_arrivals(final)
        self.judge_records(final)
        self.judge_replays(replays)

    def narrow_subset(self, caused: list[str]) -> list[str]:
        size = self.random.randint(1, max(1, len(caused) - 1))
        return sorted(self.random.sample(caused, size), key=caused.index)

    def cause(self, wanted: set[str]) -> list[Expected]:
        found: list[Expected] = []
        steps: list[tuple[str, Callable[[], list[Expected]]]] = [
            ("subscription.created", lambda: self.actions.subscription_events(wanted)),
            ("payment.created", lambda: self.actions.payment_events(wanted)),
            ("payout_schedule.updated", self.actions.payout_events),
            ("x402.settled", self.actions.x402_events),
        ]
        for event_type, act in steps:
            resource = event_type.split(".")[0]
            if any(t.split(".")[0] == resource for t in wanted):
                self.ctx.transcript.step(f"cause {resource} events")
                found += [e for e in act() if e.event_type in wanted]
        return found

    def replays(self) -> list[tuple[str, str, str, str]]:
        """(event type, resource done once, resource done and replayed, what) pairs."""
        found = []
        if "payment.created" in self.types:
            self.ctx.transcript.step("create a payment, and another one replayed with its key")
            once, replayed = self.actions.replayed_payment(str(uuid.uuid4()))
            found.append(("payment.created", once, replayed, "a replayed createPayment"))
        if "payout_schedule.updated" in self.types:
            self.ctx.transcript.step("replace a payout schedule, and another replayed")
            once, replayed = self.actions.replayed_replace(str(uuid.uuid4()))
            found.append(
                ("payout_schedule.updated", once, replayed, "a replayed replacePayoutSchedule")
            )
        return found

    # -- the failing endpoint and resend --------------------------------------------------------
    def judge_failing(self, failing: Arrival | None, listing: Listing) -> int | None:
        """DLV-015 for the delivery to the failing path; its attempts when it was final."""
        if failing is None or failing.delivery_id is None:
            dropped = self.dropped(self.fail) if failing is None else None
            self.not_reached.setdefault(
                "DLV-015",
                dropped or "no delivery reached the failing receiver path, nothing to judge",
            )
            return None
        record = listing.records.get(failing.delivery_id)
        status = record.get("status") if record else None
        if status == SUCCEEDED:
            self.v.check(
                ["DLV-015"],
                False,
                f"delivery {failing.delivery_id} is {SUCCEEDED} although the receiver answered "
                f"every try with 500",
                fatal=False,
            )
        elif status == FAILED:
            self.v.check(["DLV-015"], True, "")
            attempts = record.get("attempts") if record else None
            return attempts if isinstance(attempts, int) else None
        elif record is not None:
            self.not_reached.setdefault(
                "DLV-015",
                f"the delivery to the failing path was still {status} after {WAIT_SECS:g} s "
                "(the server's retry schedule outlasts the wait)",
            )
        return None

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
                    "the webhook-id of the delivery to the failing path is not the id of a "
                    "listed delivery, so it cannot be resent",
                )
            return
        self.rotate(self.fail)
        self.receiver.answer(self.fail.path, 200)
        # a new event after the rotation: its webhook must be signed with the new secret
        # (judged with the others), whether or not the failed delivery is final by now
        fresh = self.cause(set(self.fail.event_types[:1]))
        self.expected += fresh
        self.receiver.wait_for(
            lambda _: all(self.enough(self.fail, e) for e in fresh), timeout=WAIT_SECS
        )
        record_before = self.read_listing().records.get(delivery_id, {})
        # final before the resend: no try of its own was in flight, so every later try is one
        # the resend queued, after the rotation
        settled = record_before.get("status") in (SUCCEEDED, FAILED)
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
                and r.headers.get("webhook-id") == delivery_id
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
        if record.get("status") not in (SUCCEEDED, FAILED) or attempts_before is None:
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
            record.get("status") == SUCCEEDED,
            f"delivery {delivery_id} is {record.get('status')!r} although the resent try was "
            "answered 200",
            fatal=False,
        )

    # -- judging --------------------------------------------------------------------------------
    def judge_expected(self, pairs: list[tuple[Endpoint, Expected]], listing: Listing) -> None:
        for endpoint, expected in pairs:
            found = self.matching(endpoint, expected)
            keys = {a.key for a in found}
            ids = ["DLV-003"] + ([expected.requirement_id] if endpoint is self.ok else [])
            late = (
                None
                if len(keys) >= expected.minimum
                else self.dropped(endpoint) or self.on_its_way(expected, listing)
            )
            if late is not None:
                self.ctx.transcript.note(f"endpoint {endpoint.name}: not judged: {late}")
                for requirement_id in ids:
                    self.not_reached.setdefault(requirement_id, late)
                continue
            self.v.check(
                ids,
                len(keys) >= expected.minimum,
                f"{expected.action}: {len(keys)} {expected.event_type} webhook(s) reached "
                f"endpoint {endpoint.name} within {WAIT_SECS:g} s, expected at least "
                f"{expected.minimum}",
                fatal=False,
            )
            for arrival in found:
                record = listing.records.get(arrival.delivery_id or "")
                if record is not None:
                    self.v.check(
                        ["DLV-003"],
                        record.get("event_type") == expected.event_type,
                        f"delivery {arrival.delivery_id} is listed with event_type "
                        f"{record.get('event_type')!r}, expected {expected.event_type!r}",
                        fatal=False,
                    )
        for endpoint in self.endpoints:
            for arrival in self.arrivals(endpoint):
                listed = listing.records.get(arrival.delivery_id or "", {}).get("event_type")
                event_type = arrival.event_type or listed
                # an event the suite caused after the last put must follow that put
                caused_later = self.caused_after(arrival) is not None
                self.v.check(
                    ["DLV-004"],
                    event_type in (endpoint.event_types if caused_later else endpoint.ever),
                    f"a {event_type} webhook reached endpoint {endpoint.name}, which is "
                    f"subscribed to {', '.join(endpoint.event_types)} only",
                    fatal=False,
                )

    def caused_after(self, arrival: Arrival) -> float | None:
        """When the suite began the action whose resource ``arrival`` names: it cannot have
        been signed, nor its event happened, before (None: not one of the suite's events)."""
        starts = [
            e.started_at
            for e in self.expected
            if arrival.names(e.resource_id) and arrival.request.at >= e.started_at
        ]
        return min(starts, default=None)

    def judge_arrivals(self, listing: Listing) -> None:
        for arrival in self.arrivals():
            if arrival.request.at > listing.sent_at:
                continue  # after the last listing: its record is not judged
            request = arrival.request
            what = f"webhook to endpoint {arrival.endpoint.name} (webhook-id {arrival.delivery_id})"
            self.v.check(
                ["DLV-005"],
                request.method == "POST",
                f"{what} was sent with {request.method}, not POST",
                fatal=False,
            )
            self.v.check(
                ["DLV-006"],
                arrival.delivery_id is not None and arrival.delivery_id in listing.records,
                f"{what}: the webhook-id is not the id of a delivery the server lists",
                fatal=False,
            )
            stamp = request.header("webhook-timestamp") or ""
            self.v.check(
                ["DLV-007"],
                stamp.isdigit() and abs(int(stamp) - request.at) <= TIMESTAMP_TOLERANCE_SECS,
                f"{what}: webhook-timestamp {stamp!r} is not the sending time in Unix seconds "
                f"(it arrived at {int(request.at)})",
                fatal=False,
            )
            caused = self.caused_after(arrival)
            earliest = caused if caused is not None else request.at - SIGNING_SLACK_SECS
            self.judge_signature(arrival, earliest=earliest)
            self.judge_body(arrival, listing)

    def judge_signature(self, arrival: Arrival, *, earliest: float) -> None:
        request, endpoint = arrival.request, arrival.endpoint
        what = f"webhook to endpoint {endpoint.name} (webhook-id {arrival.delivery_id})"
        header = request.header("webhook-signature") or ""
        stamp = request.header("webhook-timestamp") or ""
        secrets = [s.value for s in endpoint.secrets]
        index = signed_with(
            secrets, self.prefix, arrival.delivery_id or "", stamp, request.body, header
        )
        allowed, unknown = endpoint.signers(request.at, earliest)
        if index is None:
            if unknown:
                return  # it may have been signed with the secret the suite was never shown
            self.v.check(
                ["DLV-008"],
                False,
                f"{what}: the webhook-signature is not a v1 HMAC-SHA256 of id.timestamp.body "
                "keyed with the decoded secret of the endpoint",
                fatal=False,
            )
        elif index in allowed:
            self.v.check(["DLV-008"], True, "")
            if not unknown:  # signed after a rotation, with the secret it returned
                self.v.check(["DLV-009"], True, "")
        elif index < min(allowed, default=index):
            self.v.check(
                ["DLV-009"],
                False,
                f"{what}: signed with a secret that had been replaced by rotate-secret "
                f"(rotation {index + 2} of the endpoint) before it was sent",
                fatal=False,
            )

    def judge_body(self, arrival: Arrival, listing: Listing) -> None:
        what = f"webhook to endpoint {arrival.endpoint.name} (webhook-id {arrival.delivery_id})"
        body = arrival.body
        if body is None:
            self.v.check(["DLV-010"], False, f"{what}: the body is not a JSON object", fatal=False)
            return
        problems = [f"no {key}" for key in ("id", "type", "timestamp", "data") if key not in body]
        event_type = body.get("type")
        if "type" in body and event_type not in self.types:
            problems.append(f"type {event_type!r} is not an event type of the profile")
        record = listing.records.get(arrival.delivery_id or "")
        if record is not None and "type" in body and record.get("event_type") != event_type:
            problems.append(
                f"type {event_type!r} but the delivery is listed as {record.get('event_type')!r}"
            )
        self.v.problems(["DLV-010"], [f"{what}: {p}" for p in problems], fatal=False)

    def judge_records(self, listing: Listing) -> None:
        records = list(listing.records.values())
        for record in records:
            attempts = record.get("attempts")
            self.v.check(
                ["DLV-001"],
                isinstance(attempts, int) and not isinstance(attempts, bool) and attempts >= 0,
                f"delivery {record.get('id')}: attempts {attempts!r} is not a non-negative integer",
                fatal=False,
            )
            if self.statuses:
                self.v.check(
                    ["DLV-011"],
                    record.get("status") in self.statuses,
                    f"delivery {record.get('id')}: status {record.get('status')!r} is not one "
                    f"of {', '.join(self.statuses)}",
                    fatal=False,
                )
        self.v.check(["OPS-005"], True, "")
        tries: dict[str, list[Received]] = {}
        for arrival in self.arrivals():
            if arrival.delivery_id and arrival.request.at <= listing.sent_at:
                tries.setdefault(arrival.delivery_id, []).append(arrival.request)
        for delivery_id, got in tries.items():
            found = listing.records.get(delivery_id)
            if found is None:
                continue
            record = found
            status, attempts = record.get("status"), record.get("attempts")
            if status in (SUCCEEDED, FAILED) and isinstance(attempts, int):
                self.v.check(
                    ["DLV-012"],
                    attempts >= len(got),
                    f"delivery {delivery_id} is {status} with attempts {attempts}, but "
                    f"{len(got)} tries of it reached the receiver",
                    fatal=False,
                )
            answered_2xx = [r for r in got if 200 <= r.answered < 300]
            if answered_2xx and delivery_id not in self.resent:
                first = min(r.at for r in answered_2xx)
                overdue = self.clock() - first > WAIT_SECS
                if status == FAILED or (status == PENDING and overdue):
                    self.v.check(
                        ["DLV-014"],
                        False,
                        f"delivery {delivery_id} is {status} although a try was answered "
                        f"{answered_2xx[0].answered}",
                        fatal=False,
                    )
                elif status == SUCCEEDED:
                    self.v.check(["DLV-014"], True, "")
            seen = self.succeeded_seen.get(delivery_id)
            if seen is not None:
                resent = self.resent.get(delivery_id, math.inf)
                later = [r for r in got if seen < r.at < resent]
                self.v.check(
                    ["DLV-014"],
                    not later,
                    f"delivery {delivery_id} was tried again after the server listed it as "
                    f"{SUCCEEDED} ({len(later)} more tries)",
                    fatal=False,
                )
                dropped = self.dropped_tries(got[0].path)
                if not answered_2xx and status == SUCCEEDED and dropped is not None:
                    self.not_reached.setdefault("DLV-015", dropped)  # a 2xx try may be one
                elif not answered_2xx and status == SUCCEEDED:
                    self.v.check(
                        ["DLV-015"],
                        False,
                        f"delivery {delivery_id} is {SUCCEEDED} although no try of it was "
                        "answered 2xx",
                        fatal=False,
                    )

    def events_of(self, event_type: str, resource_id: str) -> int:
        """How many distinct ``event_type`` webhooks naming the resource reached "ok"."""
        return len(
            {
                a.key
                for a in self.arrivals(self.ok)
                if a.event_type == event_type and a.names(resource_id)
            }
        )

    def judge_replays(self, replays: list[tuple[str, str, str, str]]) -> None:
        # The replayed resource's own webhook may still be on its way: wait (bounded) until it
        # has as many as the resource done once, so that a slow delivery is not a false alarm.
        self.receiver.wait_for(
            lambda _: all(
                self.events_of(event_type, replayed) >= self.events_of(event_type, once)
                for event_type, once, replayed, _what in replays
            ),
            timeout=WAIT_SECS,
        )
        for event_type, once, replayed, what in replays:
            # One reading of each count: the two are compared as they were at the same moment.
            done_once = self.events_of(event_type, once)
            done_replayed = self.events_of(event_type, replayed)
            if done_once == 0:
                self.not_reached.setdefault(
                    "IDEM-009",
                    f"no {event_type} webhook names the resource it concerns, so the suite "
                    "cannot count the events of one resource",
                )
                continue
            if done_replayed < done_once:
                # Fewer events is no second effect: the replayed resource's webhook is late
                # (a busy dispatcher), which IDEM-009 does not judge.
                self.not_reached.setdefault(
                    "IDEM-009",
                    f"the {event_type} webhook of the resource of {what} had not arrived "
                    f"after {WAIT_SECS:g} s, so no second one could be counted",
                )
                continue
            self.v.check(
                ["IDEM-009"],
                done_replayed == done_once,
                f"{what} emitted {done_replayed} {event_type} webhook(s) for its resource; "
                f"the same request sent once emitted {done_once}",
                fatal=False,
            )

    # -- afterwards -----------------------------------------------------------------------------
    def unsubscribe(self) -> None:
        """Leave the run's endpoints subscribed to nothing (they cannot be deleted)."""
        for endpoint in self.endpoints:
            try:
                self.put(endpoint.id, self.receiver.url(endpoint.path), [])
            except Exception:  # best effort: the checks are done
                return


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
