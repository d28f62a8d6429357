"""What the isolation family created, as which merchant, and what state each object must be in.

Objects of the first merchant ("the owner") are probed by the second; the states follow the
owner's own successful operations only, so any change a probe caused shows on the next re-read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.core.profile import Profile


@dataclass
class Payment:
    id: str
    order_no: str
    status: str
    reused_by: str | None = None  # the second merchant's payment with the same order number


@dataclass
class Subscription:
    id: str
    status: str


@dataclass
class Schedule:
    id: str
    status: str
    withdraw_address_id: str


@dataclass
class X402Payment:
    payment_id: str
    scheme: str
    requirements: dict[str, Any]
    settled: bool = False


@dataclass
class World:
    """Ids each merchant created during the test (across examples: more to find in lists)."""

    owner_payments: dict[str, str] = field(default_factory=dict)  # id -> merchant_order_no
    other_payments: set[str] = field(default_factory=set)

    def foreign_payments(self, listed: list[dict[str, Any]]) -> list[str]:
        """Ids of owner payments in a list the second merchant got."""
        return [
            str(p.get("id"))
            for p in listed
            if p.get("id") in self.owner_payments
            and p.get("id") not in self.other_payments
            and p.get("merchant_order_no") == self.owner_payments[str(p.get("id"))]
        ]


def transition(profile: Profile, resource: str, operation_id: str, state: str) -> str | None:
    """The state ``operation_id`` moves an object in ``state`` to, or None when refused."""
    for allowed in profile.transitions(resource):
        if allowed.operation == operation_id and state in allowed.sources:
            return allowed.target
    return None


def initial_state(profile: Profile, resource: str) -> str:
    return profile.lifecycle(resource).initial_state
