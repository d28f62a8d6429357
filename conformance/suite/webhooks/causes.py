"""Which action of the suite causes which event (profile 5, EVT-001..009).

The profile lists the event type names (``webhooks.event_types``) and says what emits which of
them (``[webhooks.emits]``: an operation or a payment state change -> an event type, "" for
none). ``CAUSES`` pairs each of those keys with its EVT requirement and the suite's action; a
key that emits nothing, or an event type another key already emits (the suite could not tell
the two apart), is "not exercised" with that reason, never failed.
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
from conformance.judge.outcomes import json_body
from conformance.suite.factories import Factories, RequestSpec, locate_operation, send
from conformance.suite.tool_errors import PrerequisiteError


@dataclass(frozen=True)
class Cause:
    key: str  # of [webhooks.emits]
    requirement_id: str
    action: str
    helper: str = ""  # the test helper it needs ("deposit", "expire"), if any


# In the order the suite causes them (a fail endpoint subscribes to the first one caused).
CAUSES: tuple[Cause, ...] = (
    Cause("createSubscription", "EVT-006", "create a subscription"),
    Cause("cancelSubscription", "EVT-007", "cancel the subscription"),
    Cause("createPayment", "EVT-001", "create a payment"),
    Cause("cancelPayment", "EVT-005", "cancel the payment"),
    Cause("payment_underpaid", "EVT-002", "deposit less than quoted (test helper)", "deposit"),
    Cause(
        "payment_settled",
        "EVT-003",
        "accept the underpaid payment; deposit the full amount on another (test helper)",
        "deposit",
    ),
    Cause("payment_expired", "EVT-004", "expire a pending payment (test helper)", "expire"),
    Cause("payout_schedule_changed", "EVT-008", "replace, pause and retire a payout schedule"),
    Cause("settleX402Payment", "EVT-009", "settle an x402 payment"),
)
EVENT_IDS = tuple(c.requirement_id for c in CAUSES)
BY_KEY = {c.key: c for c in CAUSES}


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
    webhooks = profile.webhooks
    listed = set(listed_types(profile))
    reasons: dict[str, str] = {}
    emitted_by: dict[str, str] = {}
    for cause in CAUSES:
        event_type = webhooks.emitted(cause.key)
        if event_type is None:
            reasons[cause.requirement_id] = (
                f"the profile says {cause.key} emits no event (webhooks.emits.{cause.key})"
            )
        elif event_type not in listed:
            reasons[cause.requirement_id] = (
                f"the profile lists no event type {event_type} (webhooks.event_types)"
            )
        elif event_type in emitted_by:
            reasons[cause.requirement_id] = (
                f"{cause.key} emits {event_type}, as {emitted_by[event_type]} does: the suite "
                "cannot tell which of the two a webhook comes from (webhooks.emits)"
            )
        elif cause.helper and profile.helper(cause.helper) is None:
            reasons[cause.requirement_id] = (
                f"needs the profile's {cause.helper} test helper to {cause.action}: "
                "the profile has none"
            )
        if event_type is not None:
            emitted_by.setdefault(event_type, cause.key)
    return reasons


def caused_keys(profile: Profile) -> list[str]:
    """The keys of [webhooks.emits] whose events the suite causes and judges, in order."""
    left_out = unreachable(profile)
    return [c.key for c in CAUSES if c.requirement_id not in left_out]


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
        found = [self._expect("createSubscription", subscription_id, started)]
        if "cancelSubscription" in wanted:
            started = self.clock()
            self.succeed(
                self.spec("cancelSubscription", path_params={"id": subscription_id}),
                "cancel a subscription",
            )
            found.append(self._expect("cancelSubscription", subscription_id, started))
        return found

    def payment_events(self, wanted: set[str]) -> list[Expected]:
        found: list[Expected] = []
        started = self.clock()
        canceled = self.f.create_payment()["id"]
        found.append(self._expect("createPayment", canceled, started))
        if "cancelPayment" in wanted:
            started = self.clock()
            self.succeed(
                self.spec("cancelPayment", path_params={"id": canceled}), "cancel a payment"
            )
            found.append(self._expect("cancelPayment", canceled, started))
        profile = self.f.profile
        if wanted & {"payment_underpaid", "payment_settled"} and profile.helper("deposit"):
            started = self.clock()
            underpaid = self.f.create_payment()["id"]
            self.f.deposit_short(underpaid)
            found.append(self._expect("payment_underpaid", underpaid, started))
            started = self.clock()
            self.succeed(
                self.spec("acceptUnderpaidPayment", path_params={"id": underpaid}),
                "accept an underpaid payment",
            )
            found.append(self._expect("payment_settled", underpaid, started))
            started = self.clock()
            paid = self.f.create_payment()["id"]
            self.deposit(paid, self.f.amount())
            found.append(self._expect("payment_settled", paid, started))
        if "payment_expired" in wanted and profile.helper("expire"):
            started = self.clock()
            expired = self.f.create_payment()["id"]
            self.helper("expire", expired)
            found.append(self._expect("payment_expired", expired, started))
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
        return [self._expect("payout_schedule_changed", schedule_id, started, minimum=3)]

    def x402_events(self) -> list[Expected]:
        started = self.clock()
        payment_id = self.f.settled_x402("exact")
        return [self._expect("settleX402Payment", payment_id, started)]

    def _expect(self, key: str, resource_id: str, started: float, minimum: int = 1) -> Expected:
        """What ``key`` of [webhooks.emits] emitted (its event type; "" when none: such an
        expectation is never among the wanted ones)."""
        cause = BY_KEY[key]
        event_type = self.f.profile.webhooks.emitted(key) or ""
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
