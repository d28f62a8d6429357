"""What judges the deliveries scenario: the checks on what the server delivered and listed.

``DeliveryJudge`` checks every request that reached the receiver (method, the id and timestamp
headers, the signature and the secret it was made with, as the profile's webhook scheme says;
the body), the delivery
records (status, attempts, a 2xx try making the delivery final), the deliveries the failing
endpoint got, and that a replayed request emitted nothing; and says why a webhook that did not
arrive is not judged (dropped by the receiver, still on its way).
"""

from __future__ import annotations

import math

from conformance.suite.webhooks.causes import Expected
from conformance.suite.webhooks.driving import (
    RETRY_GRACE_SECS,
    WAIT_SECS,
    Arrival,
    DeliveryDriver,
    Endpoint,
    Listing,
)
from conformance.suite.webhooks.receiver import Received
from conformance.suite.webhooks.signatures import signed_with, verified_with

# A delivery may be signed this long before it reaches the receiver: a secret replaced less
# than this before a delivery arrived may still have signed it.
SIGNING_SLACK_SECS = 5.0
TIMESTAMP_TOLERANCE_SECS = 300  # clocks of the server and the suite may differ


class DeliveryJudge(DeliveryDriver):
    """The checks on what reached the receiver and what the server lists."""

    # -- webhooks not judged --------------------------------------------------------------------
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
                and status not in (self.succeeded, self.failed)
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

    # -- the failing endpoint -------------------------------------------------------------------
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
        if status == self.succeeded:
            self.v.check(
                ["DLV-015"],
                False,
                f"delivery {failing.delivery_id} is {self.succeeded} although the receiver "
                "answered every try with 500",
                fatal=False,
            )
        elif status == self.failed:
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
            what = self.what(arrival)
            self.v.check(
                ["DLV-005"],
                request.method == "POST",
                f"{what} was sent with {request.method}, not POST",
                fatal=False,
            )
            self.v.check(
                ["DLV-006"],
                arrival.delivery_id is not None and arrival.delivery_id in listing.records,
                f"{what}: the {self.scheme.id_header} header is not the id of a delivery the "
                "server lists",
                fatal=False,
            )
            stamp = self.scheme.read(request.headers)[1] or ""
            self.v.check(
                ["DLV-007"],
                stamp.isdigit() and abs(int(stamp) - request.at) <= TIMESTAMP_TOLERANCE_SECS,
                f"{what}: {self.scheme.timestamp_where} {stamp[:40]!r} is not the sending time "
                f"in Unix seconds (it arrived at {int(request.at)})",
                fatal=False,
            )
            caused = self.caused_after(arrival)
            earliest = caused if caused is not None else request.at - SIGNING_SLACK_SECS
            self.judge_signature(arrival, earliest=earliest)
            self.judge_body(arrival, listing)

    def what(self, arrival: Arrival) -> str:
        return (
            f"webhook to endpoint {arrival.endpoint.name} "
            f"({self.scheme.id_header} {arrival.delivery_id})"
        )

    def judge_signature(self, arrival: Arrival, *, earliest: float) -> None:
        request, endpoint = arrival.request, arrival.endpoint
        what = self.what(arrival)
        secrets = [s.value for s in endpoint.secrets]
        if self.verifier is not None:
            index, raised = verified_with(self.verifier, secrets, request.headers, request.body)
            wrong = f"the profile's verifier {self.verifier.name} accepts it for no secret of " + (
                f"the endpoint ({raised})" if raised else "the endpoint"
            )
        else:
            _, stamp, _ = self.scheme.read(request.headers)
            header = request.header(self.scheme.signature_header) or ""
            index = signed_with(
                secrets,
                self.prefix,
                arrival.delivery_id or "",
                stamp or "",
                request.body,
                header,
                self.scheme,
            )
            wrong = (
                f"no signature in {self.scheme.signature_header} is "
                f"{self.scheme.describe()} of the endpoint"
            )
        allowed, unknown = endpoint.signers(request.at, earliest)
        if index is None:
            if unknown:
                return  # it may have been signed with the secret the suite was never shown
            self.v.check(["DLV-008"], False, f"{what}: {wrong}", fatal=False)
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
        what = self.what(arrival)
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
            if status in (self.succeeded, self.failed) and isinstance(attempts, int):
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
                if status == self.failed or (status == self.pending and overdue):
                    self.v.check(
                        ["DLV-014"],
                        False,
                        f"delivery {delivery_id} is {status} although a try was answered "
                        f"{answered_2xx[0].answered}",
                        fatal=False,
                    )
                elif status == self.succeeded:
                    self.v.check(["DLV-014"], True, "")
            seen = self.succeeded_seen.get(delivery_id)
            # judged only when it was watched long enough after success for another try
            if seen is not None and listing.sent_at - seen >= RETRY_GRACE_SECS:
                resent = self.resent.get(delivery_id, math.inf)
                later = [r for r in got if seen < r.at < resent]
                self.v.check(
                    ["DLV-014"],
                    not later,
                    f"delivery {delivery_id} was tried again after the server listed it as "
                    f"{self.succeeded} ({len(later)} more tries)",
                    fatal=False,
                )
                dropped = self.dropped_tries(got[0].path)
                if not answered_2xx and status == self.succeeded and dropped is not None:
                    self.not_reached.setdefault("DLV-015", dropped)  # a 2xx try may be one
                elif not answered_2xx and status == self.succeeded:
                    self.v.check(
                        ["DLV-015"],
                        False,
                        f"delivery {delivery_id} is {self.succeeded} although no try of it was "
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
