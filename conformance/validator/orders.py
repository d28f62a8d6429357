"""Merchant order numbers seen across recorded exchanges: one payment per number and merchant.

``OrderChecks`` feeds each createPayment (with the ``merchant_order_no`` its request names) and
each listPayments answer to the judge (``judge.lists.OrderNumbers``: PAY-013, TEN-008, and
IDEM-009 of a replay that inserted its payment again). Replays (marked, or found so by the
idempotency checks) show the stored payment: they create nothing and are not judged as
creations. An API key the profile does not assign to a merchant stands for its own merchant;
TEN-008 is judged only between keys the profile assigns to two merchants (two unknown keys may
belong to one).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.core.profile import Profile
from conformance.judge.lists import OrderNumbers, OrderUse
from conformance.judge.tables import TABLE_LIMIT
from conformance.validator.checks import FAMILY
from conformance.validator.exchange import Exchange
from conformance.validator.tables import Finding, json_body, list_items, party

API_KEY_HEADER = "x-api-key"
CREATE, LIST = "createPayment", "listPayments"


class OrderChecks:
    """Which payment holds each merchant's order numbers, and the answers that contradict it."""

    READS_BODY = frozenset({CREATE, LIST})  # the operations whose answers it reads

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        self._merchant = {c.api_key: c.merchant_id for c in profile.credentials}
        self._numbers = OrderNumbers(profile, limit=limit)

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
        merchant = party("merchant", merchant_id) if merchant_id else party("key", api_key)
        status = exchange.status or 0
        if operation_id == LIST:
            if isinstance(body, dict) and 200 <= status < 300:
                yield from _named(self._numbers.listed(merchant, list_items(body)))
            return
        request = json_body(exchange.request_body)
        number = request.get("merchant_order_no") if isinstance(request, dict) else None
        if not isinstance(number, str):
            return
        answer = body if isinstance(body, dict) else {}
        use = OrderUse(
            merchant,
            merchant_id is not None,
            number,
            status,
            answer.get("code"),
            answer.get("id"),
            exchange.source,
        )
        yield from _named(self._numbers.created(use, replayed=replayed))


def _named(found: Iterator[Finding]) -> Iterator[Finding]:
    for check, ids, outcome, message in found:
        yield (f"{FAMILY}.{check}", ids, outcome, message)
