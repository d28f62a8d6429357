"""The model of the merchant's payments and the calls that keep it in step with the server.

``PaymentBook`` is what the state machine and the scenarios share: every method makes one call
(create, cancel, accept-underpaid, a test helper, a replay), checks the answer against what
the model says must happen, under the requirement ids that say so, updates the model, and
after a refusal re-reads the payment (through the ``merchant_order_no`` filter) to show that
nothing changed. A failed check raises ``ConformanceFailure``, so a machine shrinks to the
shortest sequence that shows it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import quote as url_quote

import httpx

from conformance.core.formats import parse_date_time
from conformance.core.profile import ErrorSpec
from conformance.judge.answers import AnswerChecks
from conformance.judge.deposits import DepositRules
from conformance.judge.lifecycle import StateMachine
from conformance.judge.lists import ListWalks, OrderNumbers, OrderUse
from conformance.judge.payment_quotes import AMOUNT, deployed_chains, quote_problems
from conformance.judge.payment_rules import (
    ACCEPT,
    CANCEL,
    CREATE,
    DEPOSIT,
    EXPIRE,
    HELPERS,
    LIST,
    PaymentRules,
    amount_text,
)
from conformance.judge.tables import When, digest
from conformance.suite import shard_data
from conformance.suite.factories import locate_operation
from conformance.suite.stateful import MachineContext, Verdicts, body_of, compact
from conformance.suite.tool_errors import CaseError
from conformance.suite.wire.client import AUTO
from conformance.suite.wire.judged_call import JudgedCall

TIME_TOLERANCE_SECS = 2.0  # a server may keep whole seconds, and take "now" at any moment
ACCEPT_FIELDS = ("payment_id", "currency_id", "currency_chain_id", "accepted_raw")
OWN = digest("merchant", "book")  # the merchant of the book's client, to the list judges


@dataclass
class Quote:
    """One quote of a payment as requested: the raw amount and the chains named (if any)."""

    currency_id: str
    amount: str
    raw: int
    chain_ids: tuple[str, ...] | None = None
    deployments: tuple[str, ...] = ()  # the chains the server listed, for deposits


@dataclass
class ModelPayment:
    id: str
    order_no: str
    status: str
    quotes: dict[str, Quote]
    sequence: int  # creation order within the book
    create_body: dict[str, Any]
    create_key: str
    received: tuple[str, str, int] | None = None  # currency, chain, raw
    cancel_key: str | None = None

    def describe(self) -> str:
        return f"payment {self.order_no} ({self.status})"


@dataclass
class ExpiryClock:
    """PAY-010 without trusting the two clocks to agree: each create gives the range of clock
    offsets (server minus suite) for which ``expires_at - expires_in_secs`` lies within the
    request's round trip; every create of a test must share one offset. That each offset is
    within the auth clock window is the judge's, per answer (``PaymentBook.judge``)."""

    low: float = float("-inf")
    high: float = float("inf")

    def problems(
        self, sent: float, received: float, expires_in: int, expires_at: object
    ) -> list[str]:
        moment = parse_date_time(expires_at)
        if moment is None:
            return [f"expires_at {expires_at!r} is not an RFC 3339 date-time"]
        created = moment.timestamp() - expires_in
        low, high = created - received - TIME_TOLERANCE_SECS, created - sent + TIME_TOLERANCE_SECS
        if low > self.high or high < self.low:
            return [
                f"expires_at {expires_at} is not the creation time plus expires_in_secs "
                f"{expires_in}: it is {max(low - self.high, self.low - high):.0f} s off the "
                "times of the other payments of this test"
            ]
        self.low, self.high = max(self.low, low), min(self.high, high)
        return []


@dataclass
class PaymentBook:
    """The merchant's payments as this test made them, and the calls that change them."""

    ctx: MachineContext
    payments: dict[str, ModelPayment] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rules = PaymentRules(self.ctx.profile)
        self.deposits = DepositRules(self.ctx.profile)
        self.machine = StateMachine.of(self.ctx.profile, "payments")
        self.answers = AnswerChecks(self.ctx.profile)
        self.clock = ExpiryClock()
        self.lists = ListWalks(self.ctx.profile)
        self.orders = OrderNumbers(self.ctx.profile)
        self._position = 0  # of the creates the list judges learn, in the order sent
        # how far the server's clock and its whole-second times may be from the suite's
        self.clock_margin = self.ctx.profile.clock_window_secs + TIME_TOLERANCE_SECS
        self._paths = {
            op: locate_operation(self.ctx.contract, op) for op in (CREATE, LIST, CANCEL, ACCEPT)
        }

    @property
    def verdicts(self) -> Verdicts:
        return self.ctx.verdicts

    @property
    def client(self) -> Any:
        return self.ctx.client

    def step(self, title: str) -> None:
        self.ctx.transcript.step(title)

    def check(self, ids: Sequence[str], ok: bool, message: str) -> None:
        self.verdicts.check(ids, ok, message)

    def judge(
        self,
        response: httpx.Response,
        operation_id: str,
        payment_id: str = "",
        handled: tuple[float, float] | None = None,
    ) -> None:
        """The judge's rules of an answer against its own request (``judge.answers``)."""
        path_params = {"id": payment_id} if payment_id else {}
        call = JudgedCall(response, operation_id, path_params, handled)
        self.verdicts.findings(self.answers.judge(call))

    # -- sending --------------------------------------------------------------------------------
    def path(self, operation_id: str, payment_id: str = "") -> tuple[str, str]:
        method, template = self._paths[operation_id]
        return method, template.replace("{id}", url_quote(payment_id, safe=""))

    def send(
        self, operation_id: str, payment_id: str = "", *, key: Any = AUTO, **kwargs: Any
    ) -> httpx.Response:
        method, path = self.path(operation_id, payment_id)
        return self.client.request(  # type: ignore[no-any-return]
            method, path, operation_id=operation_id, idempotency_key=key, **kwargs
        )

    def helper(
        self, operation_id: str, payment_id: str, body: Any = None, *, key: Any = AUTO, **kw: Any
    ) -> httpx.Response:
        """Call a test helper of the profile (``testDepositPayment``, ``testExpirePayment``)."""
        return self.ctx.factories.test_helper(
            HELPERS[operation_id], payment_id, body, idempotency_key=key, **kw
        )

    def list_payments(self, **query: Any) -> httpx.Response:
        return self.send(LIST, params={k: v for k, v in query.items() if v is not None})

    def listed(self, query: dict[str, Any], ids: list[str], next_cursor: object, what: str) -> None:
        """The judge's verdicts on a page of the list that ``query`` asked for."""
        sent = {k: str(v) for k, v in query.items() if v is not None}
        self.verdicts.findings(self.lists.listed(OWN, "", sent, ids, next_cursor, what), what)

    def _order_use(self, response: httpx.Response, order_no: str) -> OrderUse:
        data = body_of(response)
        return OrderUse(
            OWN, False, order_no, response.status_code, data.get("code"), data.get("id")
        )

    # -- bodies ---------------------------------------------------------------------------------
    def fresh_order_no(self, prefix: str = "pay-") -> str:
        return self.ctx.factories.unique(prefix)

    def body(
        self,
        quotes: Mapping[str, Quote],
        *,
        order_no: str | None = None,
        splits: list[dict[str, Any]] | None = None,
        expires_in: int | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "quotes": {
                q.currency_id: (
                    {"amount": q.amount}
                    if q.chain_ids is None
                    else {"amount": q.amount, "chain_ids": list(q.chain_ids)}
                )
                for q in quotes.values()
            },
            "merchant_order_no": order_no or self.fresh_order_no(),
        }
        if splits:
            body["splits"] = splits
        if expires_in is not None:
            body["expires_in_secs"] = expires_in
        return body

    # -- create ---------------------------------------------------------------------------------
    def create(self, body: dict[str, Any], quotes: Mapping[str, Quote]) -> ModelPayment:
        """Create a payment: the judge checks its state, quotes and expires_at against the
        request, the clock that its expires_at shares the offset of the test's other creates."""
        key = shard_data.unique_uuid()
        sent = time.time()
        response = self.send(CREATE, json=body, key=key)
        received = time.time()
        self.verdicts.status(["OPS-001"], response, self.rules.success(CREATE), "create")
        data = body_of(response)
        payment_id = data.get("id")
        self.check(["OPS-001"], isinstance(payment_id, str) and bool(payment_id), "no id")
        assert isinstance(payment_id, str)
        margin = self.clock_margin
        self.judge(response, CREATE, handled=(sent - margin, received + margin))
        payment = ModelPayment(
            id=payment_id,
            order_no=str(body["merchant_order_no"]),
            status=self.rules.initial,
            quotes={k: Quote(**vars(q)) for k, q in quotes.items()},
            sequence=len(self.payments),
            create_body=body,
            create_key=key,
        )
        quotes_answered = data.get("quotes")
        for currency_id, quote in payment.quotes.items():
            entry = quotes_answered.get(currency_id) if isinstance(quotes_answered, dict) else None
            quote.deployments = deployed_chains(entry, self.rules.currencies[currency_id])
        self.check_expiry(body, data.get("expires_at"), sent, received)
        self._position += 1
        self.lists.created(OWN, payment_id, When(sent, received, self._position))
        self.verdicts.findings(self.orders.created(self._order_use(response, payment.order_no)))
        self.payments[payment_id] = payment
        return payment

    def check_expiry(
        self, body: Mapping[str, Any], expires_at: object, sent: float, received: float
    ) -> None:
        given = body.get("expires_in_secs")
        if isinstance(given, int):
            ids, seconds = ["PAY-010"], given
        elif self.rules.expires_in.default is not None:
            ids, seconds = ["PAY-011"], int(self.rules.expires_in.default)
        else:
            return
        self.verdicts.problems(ids, self.clock.problems(sent, received, seconds, expires_at))

    def check_quotes(self, quotes: object, payment: ModelPayment) -> None:
        """PAY-006 on a payment's quotes as listed or answered after its create: the amounts
        its create asked for, which the model remembers (the judge, which has not the create
        at hand there, judges their names and deployments)."""
        asked = payment.create_body["quotes"]
        # no currencies: the amounts alone (the judge judged the rest of the answer)
        found = quote_problems(quotes, asked, {}, creating=False)
        problems = [f"{payment.order_no}: {p}" for p in found[AMOUNT]]
        self.verdicts.problems([AMOUNT], problems)

    def refused_create(
        self, body: dict[str, Any], expected: ErrorSpec, ids: Sequence[str], what: str
    ) -> None:
        """A create the profile refuses; a re-read shows no payment with its order number."""
        response = self.send(CREATE, json=body)
        self.verdicts.status(ids, response, expected, what)
        self.check_absent(str(body["merchant_order_no"]), ids, what)

    def broken_create(self, body: dict[str, Any], ids: Sequence[str], what: str) -> None:
        """A create breaking a rule the judge reads from the request (``judge.admission``):
        refused as the profile says; a re-read shows no payment with its order number."""
        response = self.send(CREATE, json=body)
        self.ctx.refused(ids, JudgedCall(response, CREATE), what)
        self.check_absent(str(body["merchant_order_no"]), ids, what)

    def duplicate(self, payment: ModelPayment) -> None:
        """Another payment with ``payment``'s number and another Idempotency-Key: refused,
        and the number still lists only the first payment."""
        body = self.body(payment.quotes, order_no=payment.order_no)
        response = self.send(CREATE, json=body)
        what = "a duplicate order number"
        try:
            found = list(
                self.orders.created(self._order_use(response, payment.order_no), known_valid=True)
            )
        except ValueError as unseen:
            raise CaseError(f"{what}: {unseen}") from None
        self.verdicts.findings(found, what)
        self.reread(payment, ["PAY-013"], what)

    def check_absent(self, order_no: str, ids: Sequence[str], what: str) -> None:
        listed = self.read(order_no, ids)
        self.check(ids, not listed, f"{what}: refused, yet it is listed: {compact(listed)}")

    # -- reading --------------------------------------------------------------------------------
    def read(self, order_no: str, ids: Sequence[str] = ()) -> list[dict[str, Any]]:
        """The payments the ``merchant_order_no`` filter returns (PAY-015: only that number)."""
        response = self.list_payments(merchant_order_no=order_no)
        self.verdicts.status(
            ["PAY-015", *ids], response, self.rules.success(LIST), "list by merchant_order_no"
        )
        items = body_of(response).get("payments")
        self.check(["PAY-015"], isinstance(items, list), "the list has no payments array")
        assert isinstance(items, list)
        self.judge(response, LIST)
        ids = [str(i.get("id")) for i in items if isinstance(i, dict)]
        next_cursor = body_of(response).get("next_cursor")
        self.listed({"merchant_order_no": order_no}, ids, next_cursor, "list by merchant_order_no")
        return items

    def reread(self, payment: ModelPayment, ids: Sequence[str], what: str) -> dict[str, Any]:
        """The payment as listed: the one row of its number, in the model's status."""
        listed = self.read(payment.order_no, ids)
        self.check(
            ids,
            len(listed) == 1 and listed[0].get("id") == payment.id,
            f"after {what}: merchant_order_no={payment.order_no} lists "
            f"{[p.get('id') for p in listed]}, expected only {payment.id}",
        )
        item = listed[0]
        self.check(
            ids,
            item.get("status") == payment.status,
            f"after {what}: {payment.order_no} is listed {item.get('status')!r}, "
            f"expected {payment.status!r}",
        )
        self.check_quotes(item.get("quotes"), payment)
        return item

    # -- transitions ----------------------------------------------------------------------------
    def refused(self, response: httpx.Response, operation_id: str, payment: ModelPayment) -> None:
        """A transition the profile does not allow from the payment's state: refused with the
        profile's error (the judge's), and the payment re-read unchanged."""
        what = payment.describe()
        call = JudgedCall(response, operation_id, {"id": payment.id})
        self.verdicts.refusal(self.machine, payment.status, call, what)
        self.judge(response, operation_id, payment.id)
        ids = self.machine.refusal_ids(operation_id, payment.status)
        self.reread(payment, ids, f"the refused {operation_id} of {what}")

    def cancel(self, payment: ModelPayment, *, key: str | None = None) -> None:
        source = payment.status
        target = self.rules.target(CANCEL, source)
        key = key or shard_data.unique_uuid()
        response = self.send(CANCEL, payment.id, key=key)
        what = f"cancel of a {source} payment"
        if target is None:
            self.refused(response, CANCEL, payment)
            return
        ids = ["PAY-STATE-003", "OPS-001"]
        self.verdicts.status(ids, response, self.rules.success(CANCEL), what)
        self.judge(response, CANCEL, payment.id)
        data = body_of(response)
        payment.status, payment.cancel_key = target, key
        self.check_quotes(data.get("quotes"), payment)

    def accept(self, payment: ModelPayment) -> None:
        source = payment.status
        target = self.rules.target(ACCEPT, source)
        response = self.send(ACCEPT, payment.id)
        what = f"accept-underpaid of a {source} payment"
        if target is None:
            self.refused(response, ACCEPT, payment)
            return
        self.verdicts.status(
            ["PAY-STATE-006", "OPS-001", "OPS-019"], response, self.rules.success(ACCEPT), what
        )
        self.judge(response, ACCEPT, payment.id)
        data = body_of(response)
        shape = [
            f"{name} is not a string"
            for name in ACCEPT_FIELDS
            if not isinstance(data.get(name), str)
        ]
        if "status" not in data:
            shape.append("no status")
        self.verdicts.problems(["SHAPE-025", "OPS-019"], [f"{what}: {p}" for p in shape])
        if payment.received is not None:
            currency_id, _, raw = payment.received
            decimals = self.rules.currencies[currency_id].decimals
            received = Decimal(raw).scaleb(-decimals)
            self.verdicts.findings(self.deposits.accepted(data, currency_id, received), what)
        payment.status = target
        self.reread(payment, ["PAY-STATE-006"], what)

    def expire(self, payment: ModelPayment, *, key: Any = AUTO) -> None:
        source = payment.status
        target = self.rules.target(EXPIRE, source)
        response = self.helper(EXPIRE, payment.id, key=key)
        what = f"expire helper on a {source} payment"
        if target is None:
            self.refused(response, EXPIRE, payment)
            return
        self.verdicts.status(["HELP-005", "HELP-008"], response, self.rules.success(EXPIRE), what)
        self.judge(response, EXPIRE, payment.id)
        payment.status = target
        self.reread(payment, ["HELP-005"], what)

    def deposit(
        self, payment: ModelPayment, currency_id: str, chain_id: str, raw: int, *, key: Any = AUTO
    ) -> None:
        """A deposit helper call on a payment in the initial state (what the profile defines)."""
        quote = payment.quotes[currency_id]
        decimals = self.rules.currencies[currency_id].decimals
        full = raw >= quote.raw
        target = self.rules.settled if full else self.rules.underpaid
        ids = ["HELP-002"] if full else ["HELP-001"]
        amount = amount_text(raw, decimals)
        body = {"currency_id": currency_id, "chain_id": chain_id, "amount": amount}
        response = self.helper(DEPOSIT, payment.id, body, key=key)
        what = f"deposit of {amount} {currency_id} (quoted {quote.amount})"
        self.verdicts.status([*ids, "HELP-008"], response, self.rules.success(DEPOSIT), what)
        self.judge(response, DEPOSIT, payment.id)
        # The model knows that nothing was received before this deposit.
        status = body_of(response).get("status")
        found = self.deposits.deposited(
            Decimal(raw).scaleb(-decimals), Decimal(quote.raw).scaleb(-decimals), status
        )
        self.verdicts.findings([found] if found is not None else [], what)
        assert target is not None
        payment.status, payment.received = target, (currency_id, chain_id, raw)

    # -- replays (IDEM-009) ---------------------------------------------------------------------
    def replay_create(self, payment: ModelPayment) -> None:
        """The create sent again with its key: stored answer, no second payment, no reset."""
        self.send(CREATE, json=payment.create_body, key=payment.create_key)
        self.reread(payment, ["IDEM-009"], "a replayed create")

    def replay_cancel(self, payment: ModelPayment) -> None:
        assert payment.cancel_key is not None
        self.send(CANCEL, payment.id, key=payment.cancel_key)
        self.reread(payment, ["IDEM-009"], "a replayed cancel")
