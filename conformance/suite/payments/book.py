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
    decimal_value,
)
from conformance.suite import shard_data
from conformance.suite.factories import locate_operation
from conformance.suite.stateful import MachineContext, Verdicts, body_of, compact
from conformance.suite.wire.client import AUTO

TIME_TOLERANCE_SECS = 2.0  # a server may keep whole seconds, and take "now" at any moment
ACCEPT_FIELDS = ("payment_id", "currency_id", "currency_chain_id", "accepted_raw")


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
    request's round trip; every create must share one offset, within the auth clock window."""

    window_secs: float
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
        if low > self.window_secs or high < -self.window_secs:
            return [
                f"expires_at {expires_at} minus expires_in_secs {expires_in} is "
                f"{created - received:+.0f} s from the time of the request"
            ]
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
        self.clock = ExpiryClock(float(self.ctx.profile.clock_window_secs))
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
        """Create a payment; check status, state, quotes and expires_at against the request."""
        key = shard_data.unique_uuid()
        sent = time.time()
        response = self.send(CREATE, json=body, key=key)
        received = time.time()
        self.verdicts.status(["OPS-001"], response, self.rules.success(CREATE), "create")
        data = body_of(response)
        payment_id = data.get("id")
        self.check(["OPS-001"], isinstance(payment_id, str) and bool(payment_id), "no id")
        assert isinstance(payment_id, str)
        status = data.get("status")
        self.check(
            ["PAY-STATE-002"],
            status in self.rules.states,
            f"create: status {status!r} is not a state of the profile",
        )
        self.check(
            ["PAY-STATE-001"],
            status == self.rules.initial,
            f"create: status {status!r}, expected {self.rules.initial!r}",
        )
        payment = ModelPayment(
            id=payment_id,
            order_no=str(body["merchant_order_no"]),
            status=self.rules.initial,
            quotes={k: Quote(**vars(q)) for k, q in quotes.items()},
            sequence=len(self.payments),
            create_body=body,
            create_key=key,
        )
        self.check_quotes(data.get("quotes"), payment, creating=True)
        self.check_expiry(body, data.get("expires_at"), sent, received)
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

    def check_quotes(self, quotes: object, payment: ModelPayment, *, creating: bool) -> None:
        """PAY-006..009, FIX-003 and FIX-004 on a payment's quotes, as created or listed."""
        findings: dict[str, list[str]] = {
            rid: [] for rid in ("PAY-006", "PAY-007", "PAY-008", "FIX-003", "FIX-004")
        }
        if creating:
            findings["PAY-009"] = []
        if not isinstance(quotes, dict) or set(quotes) != set(payment.quotes):
            shown = sorted(quotes) if isinstance(quotes, dict) else quotes
            findings["PAY-006"].append(
                f"quotes {compact(shown)}, expected entries for {sorted(payment.quotes)}"
            )
            self._raise_findings(findings, payment)
            return
        for currency_id, quote in payment.quotes.items():
            entry = quotes[currency_id]
            self._quote_findings(findings, currency_id, quote, entry, creating)
        self._raise_findings(findings, payment)

    def _quote_findings(
        self,
        findings: dict[str, list[str]],
        currency_id: str,
        quote: Quote,
        entry: object,
        creating: bool,
    ) -> None:
        where = f"quotes.{currency_id}"
        if not isinstance(entry, dict):
            findings["PAY-006"].append(f"{where} is not an object")
            return
        value = decimal_value(entry.get("amount"))
        if value is None or value != Decimal(quote.amount):
            findings["PAY-006"].append(
                f"{where}.amount {entry.get('amount')!r}, expected {quote.amount} normalised"
            )
        currency = self.rules.currencies[currency_id]
        for name in ("code", "symbol", "name"):
            if entry.get(name) != getattr(currency, name):
                problem = (
                    f"{where}.{name} {entry.get(name)!r}, expected {getattr(currency, name)!r}"
                )
                findings["PAY-007"].append(problem)
                findings["FIX-003"].append(problem)
        deployments = entry.get("deployments")
        if not isinstance(deployments, list):
            findings["PAY-008"].append(f"{where}.deployments is not a list")
            return
        listed: list[str] = []
        for index, deployment in enumerate(deployments):
            at = f"{where}.deployments[{index}]"
            if not isinstance(deployment, dict):
                findings["PAY-008"].append(f"{at} is not an object")
                continue
            chain_id = deployment.get("chain_id")
            if chain_id not in currency.chains:
                findings["PAY-008"].append(
                    f"{at}.chain_id {chain_id!r} is not a chain {currency_id} is deployed on"
                )
                continue
            listed.append(str(chain_id))
            kind = currency.asset_kinds[str(chain_id)]
            if deployment.get("asset_kind") != kind:
                problem = f"{at}.asset_kind {deployment.get('asset_kind')!r}, expected {kind!r}"
                findings["PAY-008"].append(problem)
                findings["FIX-004"].append(problem)
            address = deployment.get("address")
            if not isinstance(address, str) or not address:
                findings["PAY-008"].append(f"{at} has no address")
        if creating:
            missing = [c for c in quote.chain_ids or () if c not in listed]
            if missing:
                findings["PAY-009"].append(f"{where}.deployments lack the chains {missing}")
            quote.deployments = tuple(listed)

    def _raise_findings(self, findings: dict[str, list[str]], payment: ModelPayment) -> None:
        for rid, problems in findings.items():
            self.verdicts.problems([rid], [f"{payment.order_no}: {p}" for p in problems])

    def refused_create(
        self, body: dict[str, Any], expected: ErrorSpec, ids: Sequence[str], what: str
    ) -> None:
        """A create the profile refuses; a re-read shows no payment with its order number."""
        response = self.send(CREATE, json=body)
        self.verdicts.status(ids, response, expected, what)
        self.check_absent(str(body["merchant_order_no"]), ids, what)

    def duplicate(self, payment: ModelPayment) -> None:
        """Another payment with ``payment``'s number and another Idempotency-Key: refused,
        and the number still lists only the first payment."""
        body = self.body(payment.quotes, order_no=payment.order_no)
        response = self.send(CREATE, json=body)
        self.verdicts.status(
            ["PAY-013"], response, self.rules.error("duplicate_order"), "a duplicate order number"
        )
        self.reread(payment, ["PAY-013"], "a duplicate order number")

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
        others = [i.get("merchant_order_no") for i in items if isinstance(i, dict)]
        self.check(
            ["PAY-015"],
            all(o == order_no for o in others) and len(others) == len(items),
            f"merchant_order_no={order_no} returned payments numbered {others}",
        )
        self.check(
            ["PAY-019"],
            not body_of(response).get("next_cursor") or len(items) > 1,
            f"merchant_order_no={order_no} returned one payment and a next_cursor",
        )
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
            ["PAY-STATE-002"],
            item.get("status") in self.rules.states,
            f"listed status {item.get('status')!r} is not a state of the profile",
        )
        self.check(
            ids,
            item.get("status") == payment.status,
            f"after {what}: {payment.order_no} is listed {item.get('status')!r}, "
            f"expected {payment.status!r}",
        )
        self.check_quotes(item.get("quotes"), payment, creating=False)
        return item

    # -- transitions ----------------------------------------------------------------------------
    def refused(
        self, response: httpx.Response, payment: ModelPayment, ids: Sequence[str], what: str
    ) -> None:
        self.verdicts.status(ids, response, self.rules.error("invalid_state"), what)
        self.reread(payment, ids, f"the refused {what}")

    def cancel(self, payment: ModelPayment, *, key: str | None = None) -> None:
        source = payment.status
        target = self.rules.target(CANCEL, source)
        key = key or shard_data.unique_uuid()
        response = self.send(CANCEL, payment.id, key=key)
        what = f"cancel of a {source} payment"
        if target is None:
            canceled = self.rules.transitions[CANCEL].target
            ids = ["PAY-STATE-004"] if source == canceled else ["PAY-STATE-005"]
            self.refused(response, payment, ids, what)
            return
        ids = ["PAY-STATE-003", "OPS-001"]
        self.verdicts.status(ids, response, self.rules.success(CANCEL), what)
        data = body_of(response)
        self.check(
            ["PAY-STATE-003"],
            data.get("status") == target,
            f"{what}: status {data.get('status')!r}, expected {target!r}",
        )
        payment.status, payment.cancel_key = target, key
        self.check_quotes(data.get("quotes"), payment, creating=False)

    def accept(self, payment: ModelPayment) -> None:
        source = payment.status
        target = self.rules.target(ACCEPT, source)
        response = self.send(ACCEPT, payment.id)
        what = f"accept-underpaid of a {source} payment"
        if target is None:
            ids = ["PAY-STATE-008"] if source == self.rules.initial else ["PAY-STATE-009"]
            self.refused(response, payment, ids, what)
            return
        self.verdicts.status(
            ["PAY-STATE-006", "OPS-001", "OPS-019"], response, self.rules.success(ACCEPT), what
        )
        data = body_of(response)
        shape = [
            f"{name} is not a string"
            for name in ACCEPT_FIELDS
            if not isinstance(data.get(name), str)
        ]
        if "status" not in data:
            shape.append("no status")
        self.verdicts.problems(["SHAPE-025", "OPS-019"], [f"{what}: {p}" for p in shape])
        self.check(
            ["PAY-STATE-006", "PAY-STATE-007"],
            data.get("status") == target,
            f"{what}: status {data.get('status')!r}, expected {target!r}",
        )
        self.check(
            ["PAY-STATE-007"],
            data.get("payment_id") == payment.id,
            f"{what}: payment_id {data.get('payment_id')!r}, expected {payment.id}",
        )
        if payment.received is not None:
            currency_id, _, raw = payment.received
            self.check(
                ["PAY-STATE-007"],
                data.get("currency_id") == currency_id,
                f"{what}: currency_id {data.get('currency_id')!r}, received {currency_id}",
            )
            self.check(
                ["PAY-STATE-007", "FIX-003"],
                data.get("accepted_raw") == str(raw),
                f"{what}: accepted_raw {data.get('accepted_raw')!r}, the payment received "
                f"{raw} raw",
            )
        payment.status = target
        self.reread(payment, ["PAY-STATE-006"], what)

    def expire(self, payment: ModelPayment, *, key: Any = AUTO) -> None:
        source = payment.status
        target = self.rules.target(EXPIRE, source)
        response = self.helper(EXPIRE, payment.id, key=key)
        what = f"expire helper on a {source} payment"
        if target is None:
            self.refused(response, payment, ["HELP-006"], what)
            return
        self.verdicts.status(["HELP-005", "HELP-008"], response, self.rules.success(EXPIRE), what)
        data = body_of(response)
        self.check(
            ["HELP-005"],
            data.get("status") == target,
            f"{what}: status {data.get('status')!r}, expected {target!r}",
        )
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
        data = body_of(response)
        self.check(
            ids,
            data.get("status") == target,
            f"{what}: status {data.get('status')!r}, expected {target!r}",
        )
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
