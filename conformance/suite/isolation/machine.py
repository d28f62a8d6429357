"""The isolation state machine: objects made by the first merchant, probed by the second.

Rules create payments, subscriptions, payout schedules and x402 payments as the owner (the
profile's first credential), make the second merchant name them in every operation that takes
an id (each must answer as for an unknown id), let the second merchant list payments with the
owner's filters and reuse the owner's order numbers, and let the owner carry on: the next
allowed transition of a probed object must still succeed, and the invariant re-reads every
probed payment through the owner's list. ``tour`` calls each rule once, in an order that
reaches every operation: it is the whole family in ``--quick`` and the first pass otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import hypothesis.strategies as st
from hypothesis.stateful import Bundle, invariant, rule

from conformance.core.profile import ErrorSpec
from conformance.core.test_helpers import HELPER_NAMES
from conformance.judge.isolation import FOREIGN_ID
from conformance.judge.outcomes import summary
from conformance.suite.factories import Factories, RequestSpec
from conformance.suite.isolation import requests, views
from conformance.suite.isolation.model import (
    Payment,
    Schedule,
    Subscription,
    World,
    X402Payment,
    initial_state,
    transition,
)
from conformance.suite.stateful import ConformanceMachine, MachineContext, body_of, compact
from conformance.suite.tool_errors import PrerequisiteError

PAYMENT_CALLS = (
    "cancelPayment",
    "acceptUnderpaidPayment",
    "testDepositPayment",
    "testExpirePayment",
)
OWNER_PAYMENT_CALLS = ("cancelPayment", "acceptUnderpaidPayment")
SCHEDULE_CALLS = ("replacePayoutSchedule", "pausePayoutSchedule", "retirePayoutSchedule")
LIST_FILTERS = ("none", "merchant_order_no", "status", "merchant_order_no and status")
SCHEMES = ("exact", "upto")

REQUIREMENT_IDS = ("TEN-001", "TEN-002", "TEN-003", "TEN-004", "TEN-006", "TEN-008", "HELP-009")
WORLD_KEY = "isolation world"


class IsolationMachine(ConformanceMachine):
    payments = Bundle("isolation_payments")
    subscriptions = Bundle("isolation_subscriptions")
    schedules = Bundle("isolation_schedules")
    x402_payments = Bundle("isolation_x402_payments")

    fatal: bool = True  # the tour records every failure and goes on

    def __init__(self) -> None:
        super().__init__()
        self.world = cast(World, self.ctx.extra.setdefault(WORLD_KEY, World()))
        self.touched: dict[str, tuple[str, Payment]] = {}
        self.probed: set[str] = set()  # ids of owner objects the second merchant named

    # -- shorthands ---------------------------------------------------------------------------
    @property
    def owner(self) -> Factories:
        return self.ctx.factories

    @property
    def other(self) -> Factories:
        return self.ctx.other_factories

    @property
    def not_found(self) -> ErrorSpec:
        return self.ctx.profile.error("status", "not_found")

    def check(self, requirement_id: str, ok: bool, message: str) -> bool:
        return self.verdicts.check((requirement_id,), ok, message, fatal=self.fatal)

    def created(self, spec: RequestSpec, key: str = "id") -> dict[str, Any]:
        """``spec`` sent as the owner; its success body, which carries ``key``."""
        self.step(f"as {self.owner.merchant_id}: {spec.operation_id}")
        response = self.owner.send(spec)
        body = body_of(response)
        expected = self.ctx.profile.success_status(spec.operation_id)
        if response.status_code != expected or not isinstance(body.get(key), str):
            raise PrerequisiteError(
                f"could not {spec.operation_id} as {self.owner.merchant_id}: expected "
                f"{expected} with a string {key!r}, got {summary(response)}"
            )
        return body

    def refused(self, operation_id: str, spec: RequestSpec, ident: str) -> None:
        """The second merchant sends ``spec`` naming the owner's ``ident``: as for an unknown id."""
        self.probed.add(ident)
        self.step(f"as {self.other.merchant_id}: {operation_id} on {ident} of the first merchant")
        response = self.other.send(spec)
        self.verdicts.status(
            (FOREIGN_ID[operation_id],),
            response,
            self.not_found,
            f"{operation_id} of another merchant's {ident}",
            fatal=self.fatal,
        )

    def owner_succeeds(
        self, requirement_id: str, spec: RequestSpec, ident: str, expected_state: str | None
    ) -> dict[str, Any] | None:
        """The owner's next allowed operation on a probed object still succeeds (and reaches
        ``expected_state``); on an object nobody probed it is a plain prerequisite."""
        self.step(f"as {self.owner.merchant_id}: {spec.operation_id} on {ident}")
        response = self.owner.send(spec)
        expected = self.ctx.profile.success_status(spec.operation_id)
        body = body_of(response)
        if ident not in self.probed:
            if response.status_code != expected:
                raise PrerequisiteError(
                    f"could not {spec.operation_id} {ident}: expected {expected}, "
                    f"got {summary(response)}"
                )
            return body
        what = f"{spec.operation_id} by the owner after another merchant named {ident}"
        if not self.verdicts.status((requirement_id,), response, expected, what, fatal=self.fatal):
            return None
        if expected_state is not None:
            self.check(
                requirement_id,
                body.get("status") == expected_state,
                f"{what}: status {body.get('status')!r}, expected {expected_state!r}",
            )
        return body

    # -- payments -----------------------------------------------------------------------------
    @rule(target=payments)
    def create_payment(self) -> Payment:
        spec = requests.create_payment(self.owner)
        body = self.created(spec)
        status = body.get("status")
        payment = Payment(
            id=str(body["id"]),
            order_no=str(spec.body["merchant_order_no"]),
            status=status
            if isinstance(status, str)
            else initial_state(self.ctx.profile, "payments"),
        )
        self.world.owner_payments[payment.id] = payment.order_no
        return payment

    @rule(payment=payments, operation_id=st.sampled_from(PAYMENT_CALLS))
    def other_acts_on_payment(self, payment: Payment, operation_id: str) -> None:
        if operation_id in HELPER_NAMES and not self.ctx.profile.helper(HELPER_NAMES[operation_id]):
            operation_id = "cancelPayment"
        spec = requests.payment_call(self.other, operation_id, payment.id)
        self.refused(operation_id, spec, payment.id)
        self.touched[payment.id] = (FOREIGN_ID[operation_id], payment)

    @rule(payment=payments)
    def owner_underpays(self, payment: Payment) -> None:
        """A deposit below the quote (test helpers): accept-underpaid becomes allowed."""
        if self.ctx.profile.helper("deposit") is None or payment.status != initial_state(
            self.ctx.profile, "payments"
        ):
            return
        spec = requests.helper(
            self.owner, "deposit", payment.id, requests.deposit_body(self.owner, 1)
        )
        body = self.owner_succeeds("HELP-009", spec, payment.id, None)
        if body is not None and isinstance(body.get("status"), str):
            payment.status = str(body["status"])

    @rule(payment=payments)
    def owner_advances_payment(self, payment: Payment) -> None:
        for operation_id in OWNER_PAYMENT_CALLS:
            target = transition(self.ctx.profile, "payments", operation_id, payment.status)
            if target is not None:
                spec = requests.payment_call(self.owner, operation_id, payment.id)
                if self.owner_succeeds("TEN-001", spec, payment.id, target) is not None:
                    payment.status = target
                return

    @rule(payment=payments, filters=st.sampled_from(LIST_FILTERS))
    def other_lists_payments(self, payment: Payment, filters: str) -> None:
        query: dict[str, str] = {}
        if "merchant_order_no" in filters:
            query["merchant_order_no"] = payment.order_no
        if "status" in filters:
            query["status"] = payment.status
        self.step(f"as {self.other.merchant_id}: list payments {compact(query)}")
        listed = views.payments(self.other, **query)
        if self.check("TEN-004", listed.ok, f"listPayments {compact(query)}: {listed.problem}"):
            foreign = self.world.foreign_payments(listed.items)
            self.check(
                "TEN-004",
                not foreign,
                f"listPayments {compact(query)} as {self.other.merchant_id} shows payments of "
                f"{self.owner.merchant_id}: {', '.join(foreign[:5])}",
            )

    @rule(payment=payments)
    def other_reuses_order_no(self, payment: Payment) -> None:
        if payment.reused_by is not None:
            return
        self.step(
            f"as {self.other.merchant_id}: create a payment with merchant_order_no "
            f"{payment.order_no} of the first merchant"
        )
        response = self.other.send(requests.create_payment(self.other, payment.order_no))
        expected = self.ctx.profile.success_status("createPayment")
        what = "a merchant_order_no another merchant already used"
        if not self.verdicts.status(("TEN-008",), response, expected, what, fatal=self.fatal):
            return
        theirs = str(body_of(response).get("id"))
        self.world.other_payments.add(theirs)
        payment.reused_by = theirs
        for reader, own, foreign in (
            (self.other, theirs, payment.id),
            (self.owner, payment.id, theirs),
        ):
            self.step(f"as {reader.merchant_id}: list payments by merchant_order_no")
            listed = views.payments(reader, merchant_order_no=payment.order_no)
            if not self.check("TEN-008", listed.ok, f"listPayments: {listed.problem}"):
                continue
            self.check(
                "TEN-008",
                own in listed.ids(),
                f"listPayments by merchant_order_no as {reader.merchant_id} does not show its "
                f"own payment {own}: {compact(listed.ids())}",
            )
            self.check(
                "TEN-004",
                foreign not in listed.ids(),
                f"listPayments by merchant_order_no as {reader.merchant_id} shows {foreign} "
                "of the other merchant",
            )
        self.touched[payment.id] = ("TEN-008", payment)

    @invariant()
    def owner_sees_its_payments_unchanged(self) -> None:
        touched, self.touched = self.touched, {}
        for requirement_id, payment in touched.values():
            self.step(f"as {self.owner.merchant_id}: re-read payment {payment.id}")
            listed = views.payments(self.owner, merchant_order_no=payment.order_no)
            if not self.check(requirement_id, listed.ok, f"re-read: {listed.problem}"):
                continue
            found = listed.find(payment.id)
            statuses = [p.get("status") for p in found]
            if (
                not self.check(
                    requirement_id,
                    statuses == [payment.status],
                    f"after another merchant's attempts the owner's payment {payment.id} reads "
                    f"{compact(found)}; expected it once with status {payment.status!r}",
                )
                and len(statuses) == 1
            ):
                payment.status = str(statuses[0])  # the tour goes on from what the server holds

    # -- subscriptions ------------------------------------------------------------------------
    @rule(target=subscriptions)
    def create_subscription(self) -> Subscription:
        body = self.created(
            requests.spec(self.owner, "createSubscription", body=self.owner.subscription_body())
        )
        status = body.get("status")
        initial = initial_state(self.ctx.profile, "subscriptions")
        return Subscription(str(body["id"]), status if isinstance(status, str) else initial)

    @rule(subscription=subscriptions)
    def other_cancels_subscription(self, subscription: Subscription) -> None:
        spec = requests.spec(self.other, "cancelSubscription", path_params={"id": subscription.id})
        self.refused("cancelSubscription", spec, subscription.id)

    @rule(subscription=subscriptions)
    def owner_cancels_subscription(self, subscription: Subscription) -> None:
        target = transition(
            self.ctx.profile, "subscriptions", "cancelSubscription", subscription.status
        )
        if target is None:
            return
        spec = requests.spec(self.owner, "cancelSubscription", path_params={"id": subscription.id})
        if self.owner_succeeds("TEN-002", spec, subscription.id, target) is not None:
            subscription.status = target

    # -- payout schedules ---------------------------------------------------------------------
    @rule(target=schedules)
    def create_schedule(self) -> Schedule:
        spec = requests.spec(
            self.owner, "createPayoutSchedule", body=self.owner.payout_schedule_body()
        )
        body = self.created(spec)
        status = body.get("status")
        return Schedule(
            str(body["id"]),
            status
            if isinstance(status, str)
            else initial_state(self.ctx.profile, "payout_schedules"),
            str(spec.body["withdraw_address_id"]),
        )

    @rule(schedule=schedules, operation_id=st.sampled_from(SCHEDULE_CALLS))
    def other_acts_on_schedule(self, schedule: Schedule, operation_id: str) -> None:
        if operation_id == "replacePayoutSchedule" and not self.ctx.profile.withdraw_addresses(
            self.other.merchant_id
        ):
            # Without an address of its own the second merchant's body would break a business
            # rule, which a server may check before it looks the id up.
            operation_id = "pausePayoutSchedule"
        spec = requests.schedule_call(self.other, operation_id, schedule.id)
        self.refused(operation_id, spec, schedule.id)

    @rule(schedule=schedules, operation_id=st.sampled_from(SCHEDULE_CALLS))
    def owner_acts_on_schedule(self, schedule: Schedule, operation_id: str) -> None:
        target = transition(self.ctx.profile, "payout_schedules", operation_id, schedule.status)
        if target is None:
            return
        spec = requests.schedule_call(self.owner, operation_id, schedule.id)
        body = self.owner_succeeds("TEN-003", spec, schedule.id, target)
        if body is None:
            return
        schedule.status = target
        if schedule.id in self.probed:
            self.check(
                "TEN-003",
                body.get("withdraw_address_id") == schedule.withdraw_address_id,
                f"after another merchant named schedule {schedule.id}, its withdraw_address_id "
                f"is {body.get('withdraw_address_id')!r}, expected "
                f"{schedule.withdraw_address_id!r}",
            )

    # -- x402 ---------------------------------------------------------------------------------
    @rule(target=x402_payments, scheme=st.sampled_from(SCHEMES))
    def create_x402(self, scheme: str) -> X402Payment:
        schemes: Sequence[str] = self.ctx.profile.x402.schemes or SCHEMES
        if scheme not in schemes:
            scheme = schemes[0]
        body = self.created(requests.x402_requirements(self.owner, scheme), key="payment_id")
        return X402Payment(str(body["payment_id"]), scheme, body)

    @rule(payment=x402_payments)
    def other_settles(self, payment: X402Payment) -> None:
        spec = requests.settle(self.other, payment.requirements)
        self.refused("settleX402Payment", spec, payment.payment_id)

    @rule(payment=x402_payments)
    def owner_settles(self, payment: X402Payment) -> None:
        if payment.settled:
            return
        spec = requests.settle(self.owner, payment.requirements)
        if self.owner_succeeds("TEN-006", spec, payment.payment_id, None) is not None:
            payment.settled = True

    @rule(payment=x402_payments)
    def other_reports_usage(self, payment: X402Payment) -> None:
        spec = requests.usage(self.other, payment.payment_id)
        self.refused("reportX402Usage", spec, payment.payment_id)

    @rule(payment=x402_payments)
    def owner_reports_usage(self, payment: X402Payment) -> None:
        if payment.settled and payment.scheme == "upto":
            spec = requests.usage(self.owner, payment.payment_id)
            self.owner_succeeds("TEN-006", spec, payment.payment_id, None)


def tour(machine: IsolationMachine) -> None:
    """Every rule once, so that every operation is probed (``--quick``, and a first pass)."""
    m = machine
    m.fatal = False
    settle = m.owner_sees_its_payments_unchanged

    first = m.create_payment()
    for operation_id in PAYMENT_CALLS:
        m.other_acts_on_payment(first, operation_id)
        settle()
    for filters in LIST_FILTERS[::3]:
        m.other_lists_payments(first, filters)
    m.other_reuses_order_no(first)
    settle()
    m.owner_advances_payment(first)
    if m.ctx.profile.helper("deposit") is not None:
        underpaid = m.create_payment()
        m.owner_underpays(underpaid)
        m.other_acts_on_payment(underpaid, "acceptUnderpaidPayment")
        settle()
        m.owner_advances_payment(underpaid)

    subscription = m.create_subscription()
    m.other_cancels_subscription(subscription)
    m.owner_cancels_subscription(subscription)
    m.other_cancels_subscription(subscription)

    schedule = m.create_schedule()
    for operation_id in SCHEDULE_CALLS:
        m.other_acts_on_schedule(schedule, operation_id)
    m.owner_acts_on_schedule(schedule, "pausePayoutSchedule")
    m.owner_acts_on_schedule(schedule, "replacePayoutSchedule")
    m.other_acts_on_schedule(schedule, "retirePayoutSchedule")
    m.owner_acts_on_schedule(schedule, "retirePayoutSchedule")

    payment = m.create_x402("upto")
    m.other_settles(payment)
    m.owner_settles(payment)
    m.other_reports_usage(payment)
    m.owner_reports_usage(payment)


def bound(ctx: MachineContext) -> type[IsolationMachine]:
    return cast(type[IsolationMachine], IsolationMachine.bind(ctx))
