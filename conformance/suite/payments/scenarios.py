"""Deterministic payment scenarios: what a generated sequence adds nothing to, and what must
be reached in every run (``--quick`` too).

- ``transition_tour``: a fresh payment brought into each state of the profile (through the
  transitions and the deposit helper), then every operation tried on it: each allowed one
  happens, each refused one gets the profile's status and changes nothing.
- ``deposits``: short by one raw unit, exact and over the quote, in every currency (the
  scaling by 6 or 18 decimals is exact), and an underpayment accepted for what was received.
- ``create_refusals``: unknown currency, chain not deployed, empty quotes, too many decimals,
  a raw amount over the profile's digits, expires_in_secs out of range, an order number twice.
- ``quotes_and_fixtures``: quotes in every currency and on every deployment.
- ``lifetimes``: expires_at for the range's edges and the default.
- ``helper_rules``: the helpers' authentication, Idempotency-Key and unknown ids.
- ``pagination``: own payments walked with small limits, filters, foreign and unknown cursors.
- ``replays``: a replayed create or cancel creates and changes nothing.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

from conformance.core.profile import ErrorSpec
from conformance.core.signing import SIGNATURE_HEADER
from conformance.judge.auth import HELPER_AUTH, AuthRules
from conformance.judge.outcomes import json_object
from conformance.judge.payment_rules import (
    ACCEPT,
    CANCEL,
    DEPOSIT,
    EXPIRE,
    LIST,
    amount_text,
)
from conformance.judge.signatures import Signed
from conformance.suite.payments.book import ModelPayment, PaymentBook, Quote
from conformance.suite.payments.listing import walk
from conformance.suite.stateful import body_of
from conformance.suite.tool_errors import CaseError
from conformance.suite.wire.client import AUTO

Scenario = Callable[[PaymentBook], None]
SHORT, FULL = "deposit short", "deposit in full"
PAGE_PAYMENTS = 5


# ------------------------------------------------------------------------------ helpers
def quote(book: PaymentBook, currency_id: str, raw: int | None = None) -> Quote:
    """A quote of ``currency_id`` (by default 12 units and one raw unit: every decimal used)."""
    decimals = book.rules.currencies[currency_id].decimals
    raw = raw if raw is not None else 12 * 10**decimals + 1
    chain = book.rules.currencies[currency_id].chains[0]
    return Quote(currency_id, amount_text(raw, decimals), raw, (chain,))


def fresh(book: PaymentBook, currency_id: str, **body: Any) -> ModelPayment:
    quotes = {currency_id: quote(book, currency_id)}
    book.step(f"create a payment of {quotes[currency_id].amount} {currency_id}")
    return book.create(book.body(quotes, **body), quotes)


def currency_ids(book: PaymentBook) -> list[str]:
    return sorted(book.rules.currencies)


def apply(book: PaymentBook, payment: ModelPayment, action: str) -> None:
    """One action of a recipe or a tour on ``payment`` (checked by the book)."""
    book.step(f"{action}: {payment.describe()}")
    if action == CANCEL:
        book.cancel(payment)
    elif action == ACCEPT:
        book.accept(payment)
    elif action == EXPIRE:
        book.expire(payment)
    else:
        currency_id, q = next(iter(payment.quotes.items()))
        raw = q.raw if action == FULL else q.raw // 2
        chain = (q.deployments or q.chain_ids or ("",))[0]
        book.deposit(payment, currency_id, chain, raw)


def actions(book: PaymentBook) -> list[str]:
    found = [op for op in (CANCEL, ACCEPT) if book.rules.has(op)]
    if book.rules.has_helper(EXPIRE) and book.rules.has(EXPIRE):
        found.append(EXPIRE)
    return found


def recipes(book: PaymentBook) -> dict[str, list[str]]:
    """The shortest list of actions that brings a new payment into each reachable state."""
    rules = book.rules
    edges: list[tuple[str, str, str]] = [
        (source, op, rules.transitions[op].target)
        for op in actions(book)
        for source in rules.transitions[op].sources
    ]
    if rules.deposits and rules.underpaid and rules.settled:
        edges += [(rules.initial, SHORT, rules.underpaid), (rules.initial, FULL, rules.settled)]
    found: dict[str, list[str]] = {rules.initial: []}
    queue = deque([rules.initial])
    while queue:
        state = queue.popleft()
        for source, action, target in edges:
            if source == state and target not in found:
                found[target] = [*found[state], action]
                queue.append(target)
    return found


# ------------------------------------------------------------------------------ scenarios
def transition_tour(book: PaymentBook) -> None:
    """Every operation from every reachable state: allowed ones happen, refused ones 409."""
    currencies = currency_ids(book)
    for index, (state, recipe) in enumerate(sorted(recipes(book).items())):
        currency_id = currencies[index % len(currencies)]

        def reach(recipe: list[str] = recipe, currency_id: str = currency_id) -> ModelPayment:
            payment = fresh(book, currency_id)
            for action in recipe:
                apply(book, payment, action)
            return payment

        payment = reach()
        allowed = [op for op in actions(book) if book.rules.target(op, state) is not None]
        for op in actions(book):
            if op not in allowed:
                apply(book, payment, op)
        for number, op in enumerate(allowed):
            apply(book, payment if number == 0 else reach(), op)


def deposits(book: PaymentBook) -> None:
    """Short by one raw unit, exact, and over by one, in every currency; the short one
    accepted for what it received."""
    if not book.rules.deposits:
        return
    for currency_id in currency_ids(book):
        for delta in (0, 1, -1):
            payment = fresh(book, currency_id)
            q = payment.quotes[currency_id]
            chain = (q.deployments or q.chain_ids or ("",))[0]
            book.step(f"deposit {q.raw + delta} raw {currency_id} (quoted {q.raw} raw)")
            book.deposit(payment, currency_id, chain, q.raw + delta, key=None if delta else AUTO)
            if delta < 0 and book.rules.has(ACCEPT):
                book.step(f"accept-underpaid {payment.describe()}")
                book.accept(payment)


def create_refusals(book: PaymentBook) -> None:
    rules = book.rules
    business = rules.error("business_rule")
    some = currency_ids(book)[0]
    unknown = book.ctx.factories.unique("conformance_unknown_")

    def refuse(quotes: dict[str, Any], expected: ErrorSpec | None, rid: str, what: str) -> None:
        """``expected`` None: a rule the judge reads from the request gives the answer."""
        book.step(what)
        body = {"quotes": quotes, "merchant_order_no": book.fresh_order_no()}
        if expected is None:
            book.broken_create(body, [rid], what)
        else:
            book.refused_create(body, expected, [rid], what)

    refuse({unknown: {"amount": "1"}}, business, "PAY-001", "a quote in an unknown currency")
    currency_id, chain = _undeployed(book)
    refuse(
        {currency_id: {"amount": "1", "chain_ids": [chain]}},
        None,
        "PAY-002",
        f"a {currency_id} quote on {chain}, where it is not deployed",
    )
    refuse({}, None, "PAY-003", "an empty quotes map")
    for currency_id, currency in sorted(rules.currencies.items()):
        digits = currency.decimals + 1
        refuse(
            {currency_id: {"amount": "1." + "0" * (digits - 1) + "1"}},
            None,
            "PAY-004",
            f"a {currency_id} amount with {digits} decimals",
        )
        whole = "1" + "0" * (rules.raw_max_digits - currency.decimals)
        refuse(
            {currency_id: {"amount": whole}},
            rules.error("amount_too_large"),
            "PAY-005",
            f"a {currency_id} amount of {rules.raw_max_digits + 1} raw digits",
        )
    limits = rules.expires_in
    for lifetime in (limits.min - 1, limits.max + 1):
        q = quote(book, some)
        book.step(f"a payment with expires_in_secs {lifetime}")
        body = book.body({some: q}, expires_in=lifetime)
        book.refused_create(body, rules.error("validation"), ["PAY-012"], "expires_in_secs")
    if rules.unique_order_no:
        first = fresh(book, some)
        book.step(f"another payment numbered {first.order_no}, with another Idempotency-Key")
        book.duplicate(first)


def _undeployed(book: PaymentBook) -> tuple[str, str]:
    """A currency and a chain it is not deployed on (a chain of the profile if one exists)."""
    for currency_id, currency in sorted(book.rules.currencies.items()):
        for chain in book.rules.profile.chains:
            if chain not in currency.chains:
                return currency_id, chain
    return currency_ids(book)[0], book.ctx.factories.unique("conformance_chain_")


def quotes_and_fixtures(book: PaymentBook) -> None:
    """One payment quoting every currency on every deployment; one naming no chains."""
    everything = {}
    for currency_id, currency in book.rules.currencies.items():
        raw = 7 * 10**currency.decimals + 30
        text = amount_text(raw, currency.decimals, zeros=2)  # trailing zeros, normalised
        everything[currency_id] = Quote(currency_id, text, raw, currency.chains)
    book.step("create a payment quoting every currency on every chain")
    payment = book.create(book.body(everything), everything)
    book.reread(payment, ["PAY-006"], "create")
    bare = {c: Quote(c, "5", 5 * 10**cur.decimals) for c, cur in book.rules.currencies.items()}
    book.step("create a payment quoting every currency, naming no chains")
    book.create(book.body(bare), bare)


def lifetimes(book: PaymentBook) -> None:
    limits = book.rules.expires_in
    some = currency_ids(book)[0]
    for lifetime in (limits.min, limits.max, (limits.min + limits.max) // 2, None):
        q = {some: quote(book, some)}
        book.step(f"create a payment with expires_in_secs {lifetime}")
        book.create(book.body(q, expires_in=lifetime), q)


def helper_rules(book: PaymentBook) -> None:
    rules = book.rules
    if not rules.helpers:
        return
    some = currency_ids(book)[0]
    payment = fresh(book, some)
    q = payment.quotes[some]
    body = {"currency_id": some, "chain_id": (q.deployments or ("",))[0], "amount": q.amount}
    profile = book.ctx.profile
    auth = AuthRules(profile)
    known_keys = {c.api_key for c in profile.credentials}
    # "0" * 64 may not even have the scheme's form: the judge then reads it as malformed
    for op, what, kwargs, signed in (
        (DEPOSIT, "deposit helper without authentication", {"sign": False}, Signed.AS_SENT),
        (
            DEPOSIT,
            "deposit helper with a wrong signature",
            {"auth": {SIGNATURE_HEADER: "0" * 64}},
            Signed.UNKNOWN,
        ),
        (EXPIRE, "expire helper without authentication", {"sign": False}, Signed.AS_SENT),
    ):
        book.step(what)
        sent_at = time.time()
        response = book.helper(op, payment.id, body if op == DEPOSIT else None, **kwargs)
        breach = auth.breach(
            response.request.headers.get, sent_at=sent_at, signed=signed, known_keys=known_keys
        )
        if breach is None:
            raise CaseError(f"{what}: the judge sees no authentication rule broken")
        found = auth.refusal(
            breach, response.status_code, json_object(response), known_valid=True, helper=True
        )
        # the auth family judges the AUTH ids of such requests; here the helpers' own rule
        book.verdicts.findings(
            [f._replace(ids=(HELPER_AUTH,)) for f in found if HELPER_AUTH in f.ids], what
        )
    book.reread(payment, ["HELP-007"], "unauthenticated helper calls")
    not_found = rules.error("not_found")
    unknown = book.ctx.factories.unique("pay_conformance_unknown_")
    for op in (DEPOSIT, EXPIRE):
        book.step(f"{op} on an unknown payment id")
        response = book.helper(op, unknown, body if op == DEPOSIT else None)
        book.verdicts.status(["HELP-009"], response, not_found, f"{op} on an unknown id")
    if rules.has(EXPIRE):
        for key in (None, AUTO):
            target = fresh(book, some)
            book.step(f"expire helper {'without' if key is None else 'with'} an Idempotency-Key")
            book.expire(target, key=key)


def pagination(book: PaymentBook) -> None:
    rules = book.rules
    some = currency_ids(book)[0]
    own = [fresh(book, some) for _ in range(PAGE_PAYMENTS - 1)]
    # a number that extends another: the filter must match whole numbers only
    own.insert(1, fresh(book, some, order_no=own[0].order_no + "-2"))
    own.sort(key=lambda p: p.sequence)
    book.step(f"list by merchant_order_no {own[0].order_no}, a prefix of another number")
    book.reread(own[0], ["PAY-015"], "list by merchant_order_no")
    small = max(rules.list_limit.min, min(2, rules.list_limit.max))
    book.step(f"walk every page with limit={small}")
    walk(book, own, limit=small)
    book.step("walk without a limit")
    walk(book, own)
    if rules.has(CANCEL):
        for payment in own[1:3]:
            book.step(f"cancel {payment.describe()}")
            book.cancel(payment)
        for status in sorted({p.status for p in own}):
            mine = [p for p in own if p.status == status]
            book.step(f"walk every page of status={status} with limit={rules.list_limit.min}")
            walk(book, mine, limit=rules.list_limit.min, status=status)
    limits = rules.list_limit
    for limit in (limits.min - 1, limits.max + 1):
        book.step(f"list with limit={limit}")
        book.verdicts.status(
            ["PAY-017"], book.list_payments(limit=limit), rules.error("validation"), "limit"
        )
    _cursors(book)


def _cursors(book: PaymentBook) -> None:
    rules = book.rules
    other = book.ctx.other_client
    for _ in range(2):
        book.ctx.other_factories.create_payment()
    book.step("the second merchant lists one payment per page")
    method, path = book.path(LIST)
    theirs = body_of(other.request(method, path, params={"limit": 1}, operation_id=LIST))
    cursor = theirs.get("next_cursor")
    if isinstance(cursor, str) and cursor:
        book.step("list with the second merchant's cursor")
        response = book.list_payments(cursor=cursor)
        book.verdicts.status(["PAY-020"], response, rules.bad_cursor, "a foreign cursor")
    mine = body_of(book.list_payments(limit=1)).get("next_cursor")
    if isinstance(mine, str) and mine:
        book.step("the second merchant lists with this merchant's cursor")
        response = other.request(method, path, params={"cursor": mine}, operation_id=LIST)
        book.verdicts.status(["PAY-020"], response, rules.bad_cursor, "a foreign cursor")
    book.step("list with a cursor the server never issued")
    unknown = book.ctx.factories.unique("conformance-cursor-")
    response = book.list_payments(cursor=unknown)
    book.verdicts.status(["PAY-020"], response, rules.bad_cursor, "an unknown cursor")


def replays(book: PaymentBook) -> None:
    some = currency_ids(book)[0]
    payment = fresh(book, some)
    book.step(f"replay the create of {payment.order_no}")
    book.replay_create(payment)
    if book.rules.target(CANCEL, payment.status) is None:
        return
    book.step(f"cancel {payment.describe()}")
    book.cancel(payment)
    book.step(f"replay the cancel of {payment.order_no}")
    book.replay_cancel(payment)
    book.step(f"replay the create of {payment.order_no} once more")
    book.replay_create(payment)


SCENARIOS: dict[str, Scenario] = {
    "transitions": transition_tour,
    "deposits": deposits,
    "create refusals": create_refusals,
    "quotes": quotes_and_fixtures,
    "lifetimes": lifetimes,
    "helpers": helper_rules,
    "pagination": pagination,
    "replays": replays,
}
