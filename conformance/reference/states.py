"""The profile's state names for the roles the reference server's code plays them in.

The profile names states and the operations that move between them (section 5); the server's
code needs to know which name is, say, a settled payment. As the suite does
(``conformance.judge.payment_rules``), a role is read from the transitions: a short deposit
leads to the state accept-underpaid starts from, a full one to where it ends; expiry to where
the expire helper leads; the webhook delivery statuses are read by position (pending,
succeeded, failed).
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.core.profile import Profile


def _target(profile: Profile, resource: str, operation: str, fallback: str) -> str:
    for transition in profile.transitions(resource):
        if transition.operation == operation:
            return transition.target
    return fallback


def _source(profile: Profile, resource: str, operation: str, fallback: str) -> str:
    for transition in profile.transitions(resource):
        if transition.operation == operation and transition.sources:
            return transition.sources[0]
    return fallback


@dataclass(frozen=True)
class States:
    pending: str  # payments: created, nothing received
    underpaid: str
    settled: str
    expired: str
    canceled: str
    subscription_canceled: str
    payout_active: str
    payout_paused: str
    payout_retired: str
    delivery_pending: str
    delivery_succeeded: str
    delivery_failed: str

    def delivery(self, internal: str) -> str:
        """The profile's name of a delivery status the queue keeps as pending/succeeded/failed."""
        return {
            "pending": self.delivery_pending,
            "succeeded": self.delivery_succeeded,
            "failed": self.delivery_failed,
        }.get(internal, internal)


def states(profile: Profile) -> States:
    p = profile
    deliveries = p.webhooks.delivery_roles
    return States(
        pending=p.lifecycle("payments").initial_state,
        underpaid=_source(p, "payments", "acceptUnderpaidPayment", "underpaid"),
        settled=_target(p, "payments", "acceptUnderpaidPayment", "settled"),
        expired=_target(p, "payments", "testExpirePayment", "expired"),
        canceled=_target(p, "payments", "cancelPayment", "canceled"),
        subscription_canceled=_target(p, "subscriptions", "cancelSubscription", "canceled"),
        payout_active=p.lifecycle("payout_schedules").initial_state,
        payout_paused=_target(p, "payout_schedules", "pausePayoutSchedule", "paused"),
        payout_retired=_target(p, "payout_schedules", "retirePayoutSchedule", "retired"),
        delivery_pending=deliveries[0],
        delivery_succeeded=deliveries[1],
        delivery_failed=deliveries[2],
    )
