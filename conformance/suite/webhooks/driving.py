"""What drives the deliveries scenario: the endpoints it puts, the events it causes, what it reads.

``DeliveryDriver`` puts fresh endpoints on the suite's receiver (and checks the answers of the
endpoint calls: put, rotate-secret, the refused puts, the list), causes the events and the
replayed requests, reads the delivery list and the requests that reached the receiver, and
waits for them. What was delivered is judged by ``judging.DeliveryJudge``; the scenario
(``deliveries.DeliveryScenario``) puts the two together.
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
from conformance.core.hosts import is_loopback
from conformance.judge.echoes import event_types_problems
from conformance.judge.outcomes import json_object
from conformance.judge.webhook_secrets import SecretRotations
from conformance.suite.factories import RequestSpec, locate_operation, send
from conformance.suite.stateful import MachineContext, Verdicts
from conformance.suite.tool_errors import PrerequisiteError
from conformance.suite.webhooks.causes import (
    BY_KEY,
    Actions,
    Expected,
    caused_keys,
    listed_types,
    unreachable,
)
from conformance.suite.webhooks.receiver import Received, WebhookReceiver
from conformance.suite.webhooks.signatures import secret_problem

WAIT_SECS = 20.0  # how long a delivery may take to arrive or to reach a final state
# How long a delivery listed as succeeded is watched for another try (DLV-014) before the last
# listing: a server that retries regardless of the answer does so after its first backoff.
RETRY_GRACE_SECS = 2.0
POLL_SECS = 0.1
NOTED_ARRIVALS = 12


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


class DeliveryDriver:
    """The scenario's state and the requests it sends; the checks of the endpoint calls."""

    # the scenario's endpoints, put by ``DeliveryScenario.run``
    fail: Endpoint
    ok: Endpoint
    narrow: Endpoint

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
        self.rotations = SecretRotations()
        self.statuses = list(webhooks.delivery_statuses)
        self.pending, self.succeeded, self.failed = webhooks.delivery_roles
        self.resend_status = webhooks.resend_status
        self.scheme = webhooks.scheme
        self.verifier = self.profile.webhook_verifier
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
        problems += event_types_problems(list(event_types), body.get("event_types")) or []
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
        found = self.rotations.rotated("", endpoint.id, secret, also=("WH-003",))
        self.v.findings([found], "rotate-secret", fatal=False)
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
            if record.get("status") == self.succeeded and delivery_id not in self.succeeded_seen:
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
                    request.header(self.scheme.id_header),
                )
            )
        return found

    def matching(self, endpoint: Endpoint, expected: Expected) -> list[Arrival]:
        """Arrivals at ``endpoint`` of the expected event: those naming its resource, else
        (a body that names no resource) those of its type since the action that name none of
        the resources the suite caused events of (another's event is not this one)."""
        typed = [a for a in self.arrivals(endpoint) if a.event_type == expected.event_type]
        named = [a for a in typed if a.names(expected.resource_id)]
        if named or not typed:
            return named
        caused = {e.resource_id for e in (*self.expected, expected)}
        return [
            a
            for a in typed
            if a.request.at >= expected.started_at and not any(a.names(r) for r in caused)
        ]

    def enough(self, endpoint: Endpoint, expected: Expected) -> bool:
        return len({a.key for a in self.matching(endpoint, expected)}) >= expected.minimum

    def note_arrivals(self, since: float) -> None:
        new = [a for a in self.arrivals() if a.request.at >= since]
        for arrival in new[:NOTED_ARRIVALS]:
            self.ctx.transcript.note(
                f"webhook {arrival.request.method} {arrival.request.path} "
                f"{self.scheme.id_header}={arrival.delivery_id} type={arrival.event_type} "
                f"-> receiver answered {arrival.request.answered}"
            )
        if len(new) > NOTED_ARRIVALS:
            self.ctx.transcript.note(f"({len(new) - NOTED_ARRIVALS} more webhooks)")

    def watch_succeeded(self, delivery_ids: Iterable[str]) -> None:
        """Wait until each of ``delivery_ids`` listed as succeeded has been so for
        ``RETRY_GRACE_SECS``: time for a try after success to show (DLV-014)."""
        seen = [self.succeeded_seen[i] for i in delivery_ids if i in self.succeeded_seen]
        if seen:
            time.sleep(max(0.0, max(seen) + RETRY_GRACE_SECS - self.clock()))

    def wait_final(self, delivery_ids: Iterable[str], until: float) -> Listing:
        """Poll the delivery list until every id is final (or listed as succeeded/failed)."""
        wanted = set(delivery_ids)
        while True:
            listing = self.read_listing()
            final = {
                i
                for i in wanted
                if listing.records.get(i, {}).get("status") in (self.succeeded, self.failed)
            }
            if final == wanted or self.clock() >= until:
                return listing
            time.sleep(POLL_SECS)

    # -- causing events -------------------------------------------------------------------------
    def narrow_subset(self, caused: list[str]) -> list[str]:
        size = self.random.randint(1, max(1, len(caused) - 1))
        return sorted(self.random.sample(caused, size), key=caused.index)

    def cause(self, wanted: set[str]) -> list[Expected]:
        """Cause the events of ``wanted`` (keys of [webhooks.emits]); what they must emit."""
        ids = {BY_KEY[key].requirement_id for key in wanted}
        found: list[Expected] = []
        steps: list[tuple[str, set[str], Callable[[], list[Expected]]]] = [
            (
                "subscription",
                {"createSubscription", "cancelSubscription"},
                lambda: self.actions.subscription_events(wanted),
            ),
            (
                "payment",
                {
                    "createPayment",
                    "cancelPayment",
                    "payment_underpaid",
                    "payment_settled",
                    "payment_expired",
                },
                lambda: self.actions.payment_events(wanted),
            ),
            ("payout_schedule", {"payout_schedule_changed"}, self.actions.payout_events),
            ("x402", {"settleX402Payment"}, self.actions.x402_events),
        ]
        for resource, keys, act in steps:
            if wanted & keys:
                self.ctx.transcript.step(f"cause {resource} events")
                found += [e for e in act() if e.requirement_id in ids]
        return found

    def keys_for(self, event_types: Sequence[str]) -> set[str]:
        """The keys of [webhooks.emits] the suite causes whose events are ``event_types``."""
        emitted = self.profile.webhooks.emitted
        return {k for k in caused_keys(self.profile) if emitted(k) in event_types}

    def replays(self) -> list[tuple[str, str, str, str]]:
        """(event type, resource done once, resource done and replayed, what) pairs."""
        found = []
        created = self.profile.webhooks.emitted("createPayment")
        if created in self.types:
            self.ctx.transcript.step("create a payment, and another one replayed with its key")
            once, replayed = self.actions.replayed_payment(str(uuid.uuid4()))
            found.append((created, once, replayed, "a replayed createPayment"))
        updated = self.profile.webhooks.emitted("payout_schedule_changed")
        if updated in self.types:
            self.ctx.transcript.step("replace a payout schedule, and another replayed")
            once, replayed = self.actions.replayed_replace(str(uuid.uuid4()))
            found.append((updated, once, replayed, "a replayed replacePayoutSchedule"))
        return found

    # -- afterwards -----------------------------------------------------------------------------
    def unsubscribe(self) -> None:
        """Leave the run's endpoints subscribed to nothing (they cannot be deleted)."""
        for endpoint in self.endpoints:
            try:
                self.put(endpoint.id, self.receiver.url(endpoint.path), [])
            except Exception:  # best effort: the checks are done
                return
