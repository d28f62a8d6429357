"""The payments state machine: any sequence of the payment operations, checked against a model.

Each example starts an empty ``PaymentBook`` and works on its own fresh order numbers. Rules
create payments (generated quotes in every currency of the profile, splits, lifetimes, order
numbers that extend earlier ones so that the order filter must be exact), cancel, accept an
underpayment, deposit (short, exact, over the quote) and expire through the test helpers,
replay a create or a cancel with its Idempotency-Key, try an order number twice, re-read one
payment and walk the list's pages with a status filter and a small limit. Whatever the server
answers is compared with what the profile's transitions say; a refusal is followed by a re-read.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, precondition, rule

from conformance.judge.payment_rules import EXPIRE, PaymentRules
from conformance.suite.payments import generation
from conformance.suite.payments.book import ModelPayment, PaymentBook
from conformance.suite.payments.listing import walk
from conformance.suite.stateful import ConformanceFailure, ConformanceMachine, Verdicts
from conformance.suite.wire.client import AUTO

MAX_PAGE = 4  # small pages: a walk crosses several of them
BUDGET = "payments shrink budget"
Method = TypeVar("Method", bound=Callable[..., Any])


class OutOfShrinkTime(BaseException):
    """Raised through hypothesis (which catches Exception) to end a long shrink."""


@dataclass
class ShrinkBudget:
    """Each replay of a failing sequence while hypothesis shrinks it is a round of HTTP calls;
    hundreds of them would take minutes. ``seconds`` after the first failure the shortest
    failing sequence seen so far is the one reported."""

    seconds: float
    first: float | None = None
    best: tuple[int, ConformanceFailure, str] | None = None

    def check(self) -> None:
        if self.first is not None and time.monotonic() - self.first > self.seconds:
            raise OutOfShrinkTime

    def note(self, failure: ConformanceFailure, steps: int, rendered: str) -> None:
        if self.first is None:
            self.first = time.monotonic()
        if self.best is None or steps < self.best[0]:
            self.best = (steps, failure, rendered)

    def report(self, verdicts: Verdicts) -> None:
        if self.best is None:
            return
        steps, failure, rendered = self.best
        verdicts.transcript.restart()
        note = f"(shrinking stopped after {self.seconds:.0f} s; {steps} steps)"
        message = "\n".join(part for part in (failure.message, rendered, note) if part)
        verdicts.fail(ConformanceFailure(failure.requirement_ids, message, failure.evidence))


def noted(method: Method) -> Method:
    """A rule whose failure is noted in the shrink budget before hypothesis sees it."""

    @functools.wraps(method)
    def run(self: PaymentMachine, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except ConformanceFailure as failure:
            self.budget.note(failure, self.taken, self.ctx.transcript.render())
            raise

    return cast(Method, run)


class PaymentMachine(ConformanceMachine):
    payments = Bundle("payments")

    def __init__(self) -> None:
        super().__init__()
        self.book = PaymentBook(self.ctx)
        self.terms: PaymentRules = self.book.rules
        self.budget: ShrinkBudget = self.ctx.extra.setdefault(BUDGET, ShrinkBudget(5.0))
        self.taken = 0

    def step(self, title: str) -> None:
        self.budget.check()
        self.taken += 1
        super().step(title)

    # -- helpers --------------------------------------------------------------------------------
    def model(self, payment_id: str) -> ModelPayment:
        return self.book.payments[payment_id]

    def in_state(self, status: str | None) -> list[ModelPayment]:
        return [p for p in self.book.payments.values() if p.status == status]

    def _helpers(self) -> bool:
        return self.terms.has_helper(EXPIRE)

    def _key(self, data: st.DataObject) -> Any:
        """The helpers take an Idempotency-Key but need none (HELP-008): send one or not."""
        return AUTO if data.draw(st.booleans(), label="with Idempotency-Key") else None

    # -- create ---------------------------------------------------------------------------------
    @rule(target=payments, data=st.data())
    @noted
    def create(self, data: st.DataObject) -> str:
        quotes = data.draw(generation.quotes(self.terms), label="quotes")
        splits = data.draw(generation.splits(self.terms, self.ctx.factories.merchant_id))
        lifetime = data.draw(generation.expires_in(self.terms), label="expires_in_secs")
        order_no = self.book.fresh_order_no()
        known = sorted(p.order_no for p in self.book.payments.values())
        extend = data.draw(st.booleans(), label="extend an order number")
        if known and extend:
            # one number the prefix of another: the order filter must match whole numbers
            order_no = data.draw(st.sampled_from(known)) + "-" + order_no[-6:]
        body = self.book.body(quotes, order_no=order_no, splits=splits, expires_in=lifetime)
        amounts = ", ".join(f"{q.amount} {c}" for c, q in quotes.items())
        self.step(f"create {order_no}: {amounts}, expires_in_secs={lifetime}")
        return self.book.create(body, quotes).id

    @rule(payment=payments)
    @noted
    def duplicate_order(self, payment: str) -> None:
        model = self.model(payment)
        if not self.terms.unique_order_no:
            return
        self.step(f"create another payment numbered {model.order_no}")
        self.book.duplicate(model)

    # -- transitions ----------------------------------------------------------------------------
    @rule(payment=payments)
    @noted
    def cancel(self, payment: str) -> None:
        model = self.model(payment)
        self.step(f"cancel {model.describe()}")
        self.book.cancel(model)

    @rule(payment=payments, data=st.data())
    @noted
    def accept_underpaid(self, payment: str, data: st.DataObject) -> None:
        model = self.model(payment)
        underpaid = self.in_state(self.terms.underpaid)
        prefer = data.draw(st.booleans(), label="an underpaid payment")
        if underpaid and prefer:
            model = data.draw(st.sampled_from(underpaid), label="payment")
        self.step(f"accept-underpaid {model.describe()}")
        self.book.accept(model)

    @precondition(_helpers)
    @rule(payment=payments, data=st.data())
    @noted
    def expire(self, payment: str, data: st.DataObject) -> None:
        model = self.model(payment)
        self.step(f"expire helper on {model.describe()}")
        self.book.expire(model, key=self._key(data))

    @precondition(lambda self: self.terms.deposits and self.in_state(self.terms.initial))
    @rule(data=st.data())
    @noted
    def deposit(self, data: st.DataObject) -> None:
        # the profile says what a deposit does to a new payment only
        pending = self.in_state(self.terms.initial)
        model = data.draw(st.sampled_from(pending), label="payment")
        currency_id = data.draw(st.sampled_from(sorted(model.quotes)), label="currency")
        quote = model.quotes[currency_id]
        chains = quote.deployments or quote.chain_ids or ()
        if not chains:
            return
        chain_id = data.draw(st.sampled_from(chains), label="chain")
        kinds = (["short"] if quote.raw > 1 else []) + ["exact", "over"]
        kind = data.draw(st.sampled_from(kinds), label="deposit")
        raw = {
            "short": lambda: data.draw(st.integers(1, quote.raw - 1)),
            "exact": lambda: quote.raw,
            "over": lambda: quote.raw + data.draw(st.integers(1, quote.raw)),
        }[kind]()
        self.step(f"deposit {kind} ({raw} raw {currency_id} on {chain_id}) to {model.describe()}")
        self.book.deposit(model, currency_id, chain_id, raw, key=self._key(data))

    # -- replays --------------------------------------------------------------------------------
    @rule(payment=payments)
    @noted
    def replay_create(self, payment: str) -> None:
        model = self.model(payment)
        self.step(f"replay the create of {model.describe()} with its Idempotency-Key")
        self.book.replay_create(model)

    @rule(payment=payments)
    @noted
    def replay_cancel(self, payment: str) -> None:
        model = self.model(payment)
        if model.cancel_key is None:
            return
        self.step(f"replay the cancel of {model.describe()} with its Idempotency-Key")
        self.book.replay_cancel(model)

    # -- reading --------------------------------------------------------------------------------
    @rule(payment=payments)
    @noted
    def reread(self, payment: str) -> None:
        model = self.model(payment)
        self.step(f"list by merchant_order_no {model.order_no}")
        self.book.reread(model, ["PAY-015"], "list by merchant_order_no")

    @precondition(lambda self: bool(self.book.payments))
    @rule(data=st.data())
    @noted
    def walk_pages(self, data: st.DataObject) -> None:
        limits = self.terms.list_limit
        limit = data.draw(
            st.one_of(st.integers(limits.min, min(limits.max, MAX_PAGE)), st.none()),
            label="limit",
        )
        status = data.draw(st.one_of(st.none(), st.sampled_from(self.terms.states)), "status")
        own = [p for p in self.book.payments.values() if status is None or p.status == status]
        self.step(f"walk every page: limit={limit}, status={status}")
        walk(self.book, own, limit=limit, status=status)
