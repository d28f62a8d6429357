"""Merchant order numbers seen across recorded exchanges: one payment per number and merchant.

``OrderChecks`` learns, from the payments a merchant's createPayment answers created, which
payment holds each of its ``merchant_order_no`` values, and judges:

- a second createPayment of that merchant with a number already used, sent with another
  Idempotency-Key: refused with the profile's duplicate-order error, never created (PAY-013);
- a createPayment of another merchant with that number: a new payment, never refused as a
  duplicate (TEN-008; judged only between API keys the profile's credentials assign to two
  merchants, since two unknown keys may belong to one);
- a listPayments answer showing a second payment with a number the merchant used: a replay
  that inserted the payment again (IDEM-009, when a replay of that number was recorded), else
  a duplicate created (PAY-013).

Replays (marked, or found so by the idempotency checks) show the stored payment: they create
nothing and are not judged as creations. The order of the recording is enough: whatever the
timing, a second payment holding a number exists only if it was created.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from conformance.core.profile import Profile
from conformance.core.results import Outcome
from conformance.validator.checks import FAMILY
from conformance.validator.exchange import Exchange
from conformance.validator.tables import (
    TABLE_LIMIT,
    BoundedTable,
    Finding,
    digest,
    json_body,
    list_items,
    party,
)

API_KEY_HEADER = "x-api-key"
ORDER_NUMBER = f"{FAMILY}.order_number"
CREATE, LIST = "createPayment", "listPayments"
EARLIER = "an earlier exchange"


@dataclass(frozen=True, slots=True)
class _Order:
    """The payment that holds a merchant's order number, and whether a replay of its
    creation was recorded."""

    payment_id: str
    source: str
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class _FirstUse:
    """The merchant whose payment first held an order number."""

    merchant: bytes
    known: bool  # the profile's credentials name the merchant (not only an API key)
    source: str


class OrderChecks:
    """Which payment holds each merchant's order numbers, and the answers that contradict it."""

    READS_BODY = frozenset({CREATE, LIST})  # the operations whose answers it reads

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        self._merchant = {c.api_key: c.merchant_id for c in profile.credentials}
        self._duplicate = profile.error("status", "duplicate_order")
        self._orders: BoundedTable[bytes, _Order] = BoundedTable(limit)
        self._first: BoundedTable[bytes, _FirstUse] = BoundedTable(limit)
        self._payments: BoundedTable[str, bytes] = BoundedTable(limit)  # payment id: merchant

    def observe(
        self,
        exchange: Exchange,
        operation_id: str,
        headers: dict[str, str],
        body: Any,
        *,
        replayed: bool,
    ) -> Iterator[Finding]:
        """Judge a createPayment or listPayments exchange, then learn what its answer shows."""
        if operation_id not in self.READS_BODY:
            return
        api_key = headers.get(API_KEY_HEADER)
        if not api_key:
            return
        merchant_id = self._merchant.get(api_key)
        known = merchant_id is not None
        merchant = party("merchant", merchant_id) if merchant_id else party("key", api_key)
        if operation_id == LIST:
            if isinstance(body, dict) and 200 <= (exchange.status or 0) < 300:
                yield from self._listed(exchange, merchant, body)
            return
        request = json_body(exchange.request_body)
        number = request.get("merchant_order_no") if isinstance(request, dict) else None
        if isinstance(number, str):
            yield from self._created(exchange, merchant, known, number, body, replayed)

    def _created(
        self,
        exchange: Exchange,
        merchant: bytes,
        known: bool,
        number: str,
        body: Any,
        replayed: bool,
    ) -> Iterator[Finding]:
        status = exchange.status or 0
        slot = digest(merchant, number)
        own = self._orders.get(slot)
        first = self._first.get(digest(number))
        other = first if first is not None and first.merchant != merchant else None
        if 200 <= status < 300:
            payment_id = body.get("id") if isinstance(body, dict) else None
            if not isinstance(payment_id, str):
                return
            if replayed:
                if own is not None and own.payment_id == payment_id:
                    self._orders.put(slot, replace(own, replayed=True))
                return
            if own is not None and own.payment_id != payment_id:
                yield (
                    ORDER_NUMBER,
                    ("PAY-013",),
                    Outcome.FAILED,
                    f"merchant_order_no {number!r}, used by {own.payment_id} created in "
                    f"{own.source or EARLIER}: a second payment {payment_id} created ({status})",
                )
            if own is None:
                self._orders.put(slot, _Order(payment_id, exchange.source))
            self._payments.put(payment_id, merchant)
            if first is None:
                self._first.put(digest(number), _FirstUse(merchant, known, exchange.source))
            if other is not None and other.known and known:
                yield (
                    ORDER_NUMBER,
                    ("TEN-008",),
                    Outcome.PASSED,
                    f"merchant_order_no {number!r}, used by another merchant: accepted",
                )
            return
        code = body.get("code") if isinstance(body, dict) else None
        if not self._duplicate.matches(status, code):
            return
        if own is not None:
            yield (
                ORDER_NUMBER,
                ("PAY-013",),
                Outcome.PASSED,
                f"merchant_order_no {number!r}, used in {own.source or EARLIER}: refused "
                f"({status} {code})",
            )
        elif other is not None and other.known and known:
            yield (
                ORDER_NUMBER,
                ("TEN-008",),
                Outcome.FAILED,
                f"merchant_order_no {number!r}, used only by another merchant (in "
                f"{other.source or EARLIER}): refused as a duplicate ({status} {code})",
            )

    def _listed(
        self, exchange: Exchange, merchant: bytes, body: dict[str, Any]
    ) -> Iterator[Finding]:
        shown_replayed = False
        for item in list_items(body):
            payment_id, number = item.get("id"), item.get("merchant_order_no")
            if not isinstance(payment_id, str) or not isinstance(number, str):
                continue
            owner = self._payments.get(payment_id)
            if owner is not None and owner != merchant:
                continue  # another merchant's payment: the isolation checks' business
            own = self._orders.get(digest(merchant, number))
            if own is None:
                continue
            if own.payment_id != payment_id:
                yield (
                    ORDER_NUMBER,
                    ("IDEM-009",) if own.replayed else ("PAY-013",),
                    Outcome.FAILED,
                    f"listPayments shows {payment_id} with merchant_order_no {number!r}, held "
                    f"by {own.payment_id} created in {own.source or EARLIER}"
                    + (" and replayed since: the replay created it again" if own.replayed else ""),
                )
                return
            shown_replayed = shown_replayed or own.replayed
        if shown_replayed:
            yield (
                ORDER_NUMBER,
                ("IDEM-009",),
                Outcome.PASSED,
                "listPayments shows each replayed creation's payment once",
            )
