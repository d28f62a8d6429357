"""What the deposit helper paid into a payment, seen across recorded exchanges.

``DepositChecks`` follows each payment whose creation the recording holds (its quotes) and the
deposits the test helper made into it for the same API key, and asks ``judge.deposits`` about
each later deposit (HELP-001) and accept-underpaid (PAY-STATE-007, FIX-003) of the payment.

The deposit helper is how a payment receives on a server that has it (a sandbox): a payment
created in the recording received what the recorded deposits paid. A failure waits until no
later-recorded deposit of the payment can have come first (``tables.WaitingRoom``); a payment
paid in two currencies, or by a deposit whose answer the recording lacks, is not judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from conformance.core.profile import Profile
from conformance.core.results import Evidence, Outcome
from conformance.judge.deposits import DepositRules
from conformance.judge.findings import Finding as JudgeFinding
from conformance.judge.payment_rules import decimal_value
from conformance.judge.tables import TABLE_LIMIT, BoundedTable
from conformance.validator.checks import FAMILY, api_path
from conformance.validator.exchange import Exchange
from conformance.validator.tables import Finding, Moment, Waiting, WaitingRoom, json_body

API_KEY_HEADER = "x-api-key"
RECEIVED = f"{FAMILY}.deposits_received"
CREATE, DEPOSIT, ACCEPT = "createPayment", "testDepositPayment", "acceptUnderpaidPayment"
OPERATIONS = frozenset({CREATE, DEPOSIT, ACCEPT})


@dataclass(frozen=True, slots=True)
class _Payment:
    api_key: str
    quotes: tuple[tuple[str, Decimal], ...]  # currency id, quoted amount
    currency: str | None = None  # of the deposits so far
    received: Decimal = Decimal(0)
    unjudged: bool = False  # paid in two currencies, or by a deposit not understood


class DepositChecks:
    """The payments created in the recording and what the deposit helper paid into them."""

    READS_BODY = OPERATIONS  # the operations whose answers it reads

    def __init__(self, profile: Profile, waiting: WaitingRoom, *, limit: int = TABLE_LIMIT) -> None:
        self._rules = DepositRules(profile)
        self._payments: BoundedTable[str, _Payment] = BoundedTable(limit)
        self._waiting = waiting

    def observe(
        self,
        exchange: Exchange,
        operation_id: str,
        headers: dict[str, str],
        body: Any,
        when: Moment,
        *,
        replayed: bool,
        shown: Callable[[], Evidence],
    ) -> Iterator[Finding]:
        """Learn a creation, judge a deposit or an accept-underpaid (a replay changes nothing)."""
        if operation_id not in OPERATIONS or replayed or not isinstance(body, dict):
            return
        if not 200 <= (exchange.status or 0) < 300:
            return
        api_key = headers.get(API_KEY_HEADER, "")
        if operation_id == CREATE:
            self._created(body, api_key)
            return
        payment_id = _path_id(exchange, operation_id)
        payment = self._payments.get(payment_id) if payment_id is not None else None
        if payment_id is None or payment is None or payment.api_key != api_key:
            return
        self._waiting.withdraw(_subject(payment_id), when)
        if operation_id == DEPOSIT:
            yield from self._deposit(exchange, payment_id, payment, body, when, shown)
        elif not payment.unjudged and payment.currency is not None:
            what = f"accept-underpaid of {payment_id}"
            for found in self._rules.accepted(body, payment.currency, payment.received):
                yield from self._found(exchange, payment_id, when, found, what, ACCEPT, shown)

    def _created(self, body: dict[str, Any], api_key: str) -> None:
        ident, quotes = body.get("id"), body.get("quotes")
        if not isinstance(ident, str) or not isinstance(quotes, dict):
            return
        amounts = tuple(
            (cid, amount)
            for cid, quote in quotes.items()
            if isinstance(quote, dict)
            and (amount := decimal_value(quote.get("amount"))) is not None
        )
        self._payments.put(ident, _Payment(api_key, amounts))

    def _deposit(
        self,
        exchange: Exchange,
        payment_id: str,
        payment: _Payment,
        body: dict[str, Any],
        when: Moment,
        shown: Callable[[], Evidence],
    ) -> Iterator[Finding]:
        request = json_body(exchange.request_body)
        currency = request.get("currency_id") if isinstance(request, dict) else None
        amount = decimal_value(request.get("amount")) if isinstance(request, dict) else None
        quoted = dict(payment.quotes).get(currency) if isinstance(currency, str) else None
        if (
            amount is None
            or quoted is None
            or not isinstance(currency, str)
            or payment.currency not in (None, currency)
        ):
            self._payments.put(payment_id, replace(payment, unjudged=True))
            return
        total = payment.received + amount
        self._payments.put(payment_id, replace(payment, currency=currency, received=total))
        if payment.unjudged:
            return
        found = self._rules.deposited(total, quoted, body.get("status"))
        if found is not None:
            what = f"deposits into {payment_id} ({currency})"
            yield from self._found(exchange, payment_id, when, found, what, DEPOSIT, shown)

    def _found(
        self,
        exchange: Exchange,
        payment_id: str,
        when: Moment,
        found: JudgeFinding,
        what: str,
        operation_id: str,
        shown: Callable[[], Evidence],
    ) -> Iterator[Finding]:
        """A pass at once; a failure about the payment's received amount held until no exchange
        recorded later (a deposit that overlaps this one) can have come first."""
        if found.outcome is not Outcome.FAILED:
            yield (RECEIVED, found.ids, found.outcome, found.message)
            return
        message = f"{what}: {found.message}"
        self._waiting.add(
            Waiting(
                _subject(payment_id),
                when,
                exchange.source,
                RECEIVED,
                found.ids,
                message,
                operation_id,
                shown(),
            )
        )


def _path_id(exchange: Exchange, operation_id: str) -> str | None:
    path = api_path(exchange.path)
    parts = path.strip("/").split("/") if path is not None else []
    index = 3 if operation_id == DEPOSIT else 2  # /v1/test-helpers/payments/{id}/deposit
    return parts[index] if len(parts) > index else None


def _subject(payment_id: str) -> str:
    return f"payment {payment_id}"
