"""Which action of the suite causes which event (profile 5, EVT-001..009).

The profile lists the event type names (``webhooks.event_types``); the catalogue's EVT
requirements say which change emits which of them. ``CAUSES`` pairs each event with its
requirement; an event type the profile does not list is "not exercised" with that reason.
The actions run through the factories (fresh payments, subscriptions, schedules and x402
settlements per run) and return what each must have emitted: the event type, the id of the
resource it concerns, and how many events of that type the resource must get at least.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from conformance.core.profile import Profile
from conformance.suite.factories import (
    Factories,
    PrerequisiteError,
    RequestSpec,
    locate_operation,
    send,
)
from conformance.suite.outcomes import json_body


@dataclass(frozen=True)
class Cause:
    event_type: str
    requirement_id: str
    action: str
    helper: str = ""  # the test helper it needs ("deposit", "expire"), if any


CAUSES: tuple[Cause, ...] = (
    Cause("subscription.created", "EVT-006", "create a subscription"),
    Cause("subscription.canceled", "EVT-007", "cancel the subscription"),
    Cause("payment.created", "EVT-001", "create a payment"),
    Cause("payment.canceled", "EVT-005", "cancel the payment"),
    Cause("payment.underpaid", "EVT-002", "deposit less than quoted (test helper)", "deposit"),
    Cause(
        "payment.settled",
        "EVT-003",
        "accept the underpaid payment; deposit the full amount on another (test helper)",
        "deposit",
    ),
    Cause("payment.expired", "EVT-004", "expire a pending payment (test helper)", "expire"),
    Cause("payout_schedule.updated", "EVT-008", "replace, pause and retire a payout schedule"),
    Cause("x402.settled", "EVT-009", "settle an x402 payment"),
)
EVENT_IDS = tuple(c.requirement_id for c in CAUSES)


@dataclass(frozen=True)
class Expected:
    """An event the suite caused: ``minimum`` events of ``event_type`` naming ``resource_id``."""

    event_type: str
    resource_id: str
    requirement_id: str
    action: str
    started_at: float
    minimum: int = 1


def listed_types(profile: Profile) -> list[str]:
    return list(profile.webhooks.event_types)


def unreachable(profile: Profile) -> dict[str, str]:
    """Requirement id -> why the suite cannot cause its event under this profile."""
    listed = set(listed_types(profile))
    reasons: dict[str, str] = {}
    for cause in CAUSES:
        if cause.event_type not in listed:
            reasons[cause.requirement_id] = (
                f"the profile lists no event type {cause.event_type} (webhooks.event_types)"
            )
        elif cause.helper and profile.helper(cause.helper) is None:
            reasons[cause.requirement_id] = (
                f"needs the profile's {cause.helper} test helper to {cause.action}: "
                "the profile has none"
            )
    return reasons


class Actions:
    """The calls that cause events, through one merchant's factories."""

    def __init__(self, factories: Factories, clock: Callable[[], float]) -> None:
        self.f = factories
        self.clock = clock

    def spec(self, operation_id: str, **parts: Any) -> RequestSpec:
        method, template = locate_operation(self.f.contract, operation_id)
        return RequestSpec(operation_id, method, template, **parts)

    def succeed(self, spec: RequestSpec, what: str, **overrides: Any) -> Any:
        response = send(self.f.client, spec, **overrides)
        expected = self.f.profile.success_status(spec.operation_id)
        if response.status_code != expected:
            raise PrerequisiteError(
                f"could not {what}: {spec.method} {spec.path} answered "
                f"{response.status_code} (expected {expected})"
            )
        return _json(response)

    def helper(self, name: str, payment_id: str, body: Mapping[str, Any] | None = None) -> None:
        response = self.f.test_helper(
            name, payment_id, None if body is None else dict(body), idempotency_key=None
        )
        if response.status_code >= 300:
            raise PrerequisiteError(
                f"could not use the {name} test helper: it answered {response.status_code}"
            )

    def deposit(self, payment_id: str, amount: str) -> None:
        body = {"currency_id": self.f.currency, "chain_id": self.f.chain, "amount": amount}
        self.helper("deposit", payment_id, body)

    # -- the causes ---------------------------------------------------------------------------
    def subscription_events(self, wanted: set[str]) -> list[Expected]:
        started = self.clock()
        subscription_id = self.f.create_subscription()
        found = [self._expect("subscription.created", subscription_id, started)]
        if "subscription.canceled" in wanted:
            started = self.clock()
            self.succeed(
                self.spec("cancelSubscription", path_params={"id": subscription_id}),
                "cancel a subscription",
            )
            found.append(self._expect("subscription.canceled", subscription_id, started))
        return found

    def payment_events(self, wanted: set[str]) -> list[Expected]:
        found: list[Expected] = []
        started = self.clock()
        canceled = self.f.create_payment()["id"]
        found.append(self._expect("payment.created", canceled, started))
        if "payment.canceled" in wanted:
            started = self.clock()
            self.succeed(
                self.spec("cancelPayment", path_params={"id": canceled}), "cancel a payment"
            )
            found.append(self._expect("payment.canceled", canceled, started))
        profile = self.f.profile
        if wanted & {"payment.underpaid", "payment.settled"} and profile.helper("deposit"):
            started = self.clock()
            underpaid = self.f.create_payment()["id"]
            self.deposit(underpaid, self.f.amount(1))
            found.append(self._expect("payment.underpaid", underpaid, started))
            started = self.clock()
            self.succeed(
                self.spec("acceptUnderpaidPayment", path_params={"id": underpaid}),
                "accept an underpaid payment",
            )
            found.append(self._expect("payment.settled", underpaid, started))
            started = self.clock()
            paid = self.f.create_payment()["id"]
            self.deposit(paid, self.f.amount())
            found.append(self._expect("payment.settled", paid, started))
        if "payment.expired" in wanted and profile.helper("expire"):
            started = self.clock()
            expired = self.f.create_payment()["id"]
            self.helper("expire", expired)
            found.append(self._expect("payment.expired", expired, started))
        return found

    def payout_events(self) -> list[Expected]:
        started = self.clock()
        schedule_id = self.f.create_payout_schedule()
        body = self.f.payout_schedule_body()
        self.succeed(
            self.spec("replacePayoutSchedule", path_params={"id": schedule_id}, body=body),
            "replace a payout schedule",
        )
        self.succeed(
            self.spec("pausePayoutSchedule", path_params={"id": schedule_id}),
            "pause a payout schedule",
        )
        self.succeed(
            self.spec("retirePayoutSchedule", path_params={"id": schedule_id}),
            "retire a payout schedule",
        )
        return [self._expect("payout_schedule.updated", schedule_id, started, minimum=3)]

    def x402_events(self) -> list[Expected]:
        started = self.clock()
        payment_id = self.f.settled_x402("exact")
        return [self._expect("x402.settled", payment_id, started)]

    def _expect(
        self, event_type: str, resource_id: str, started: float, minimum: int = 1
    ) -> Expected:
        cause = next(c for c in CAUSES if c.event_type == event_type)
        return Expected(
            event_type, resource_id, cause.requirement_id, cause.action, started, minimum
        )

    # -- replays (IDEM-009) ---------------------------------------------------------------------
    def replayed_payment(self, key: str) -> tuple[str, str]:
        """(a payment created once, one created and replayed with the same key)."""
        plain = self.f.create_payment()["id"]
        spec = self.spec("createPayment", body=self.f.payment_body())
        first = self.succeed(spec, "create a payment", idempotency_key=key)
        send(self.f.client, spec, idempotency_key=key)  # the replay; its answer is not judged
        return str(plain), _id(first, "create a payment")

    def replayed_replace(self, key: str) -> tuple[str, str]:
        """(a schedule replaced once, one replaced and the replace replayed)."""
        ids = []
        for replay in (False, True):
            schedule_id = self.f.create_payout_schedule()
            spec = self.spec(
                "replacePayoutSchedule",
                path_params={"id": schedule_id},
                body=self.f.payout_schedule_body(),
            )
            overrides: dict[str, Any] = {"idempotency_key": key} if replay else {}
            self.succeed(spec, "replace a payout schedule", **overrides)
            if replay:
                send(self.f.client, spec, idempotency_key=key)
            ids.append(schedule_id)
        return ids[0], ids[1]


def _json(response: httpx.Response) -> Any:
    return json_body(response)


def _id(body: Any, what: str) -> str:
    if not isinstance(body, dict) or not isinstance(body.get("id"), str):
        raise PrerequisiteError(f"could not {what}: the response has no string 'id'")
    return str(body["id"])
