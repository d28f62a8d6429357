"""The default profile's test helpers (profile section 6): deposit and expire.

``deposit`` is what a chain deposit would do: the amount is added to what the payment received
in that currency; the payment becomes ``settled`` once it has at least the quoted amount,
``underpaid`` before; every deposit is credited to the merchant in the ledger (with split
shares) and the status change emits its event.
"""

from __future__ import annotations

import json
import sqlite3

from conformance.reference import ledger
from conformance.reference.amounts import fraction_digits, to_raw
from conformance.reference.context import RequestContext
from conformance.reference.errors import business_rule
from conformance.reference.fixtures import currency
from conformance.reference.operations import Reply, operation
from conformance.reference.payments import (
    KIND_PAYMENT,
    find,
    refuse,
    represent,
    set_status,
    transition_target,
)
from conformance.reference.states import states

SCHEMA = ""  # the helpers act on the payments table


def _find(ctx: RequestContext, payment_id: str) -> sqlite3.Row:
    if ctx.fault("isolation-helpers-any-merchant"):
        query = "SELECT * FROM payments WHERE id = ? AND kind = ?"
        row: sqlite3.Row | None = ctx.conn.execute(query, (payment_id, KIND_PAYMENT)).fetchone()
        if row is not None:
            return row
    return find(ctx, payment_id)


@operation("testDepositPayment")
def deposit(ctx: RequestContext) -> Reply:
    row = _find(ctx, ctx.path["id"])
    named = states(ctx.config.profile)
    if row["status"] not in (named.pending, named.underpaid):
        raise refuse(ctx, row, "deposit to")
    body = ctx.body
    currency_id, chain_id, amount = body["currency_id"], body["chain_id"], body["amount"]
    quotes = json.loads(row["quotes"])
    found = currency(ctx, currency_id)
    if currency_id not in quotes:
        raise business_rule(
            ctx, "currency_not_quoted", f"the payment has no quote in {currency_id}"
        )
    chains = [d["chain_id"] for d in quotes[currency_id]["deployments"]]
    if chain_id not in chains:
        raise business_rule(
            ctx, "currency_not_on_chain", f"the {currency_id} quote is not payable on {chain_id}"
        )
    if row["received_currency"] not in (None, currency_id):
        raise business_rule(
            ctx, "currency_mismatch", f"the payment already received {row['received_currency']}"
        )
    if fraction_digits(amount) > found.decimals:
        raise business_rule(
            ctx, "too_many_decimals", f"amount has more than {found.decimals} decimals"
        )
    raw = to_raw(amount, found.decimals)
    if ctx.fault("deposit-raw-six-decimals"):  # the bug: every currency scaled like USDC
        whole, _, fraction = amount.partition(".")
        raw = to_raw(f"{whole}.{fraction[:6]}" if fraction else whole, 6)
    if raw == 0:
        raise business_rule(ctx, "invalid_amount", "amount must be greater than 0")
    received = int(row["received_raw"]) + raw
    ctx.conn.execute(
        "UPDATE payments SET received_currency = ?, received_chain = ?, received_raw = ?"
        " WHERE seq = ?",
        (currency_id, chain_id, str(received), row["seq"]),
    )
    quoted = int(json.loads(row["quote_raw"])[currency_id])
    settled = received >= quoted or ctx.fault("deposit-underpaid-settles")
    if received > quoted and ctx.fault("deposit-overpaid-stays-underpaid"):
        settled = False  # the bug: only the exact amount settles
    target = named.settled if settled else named.underpaid
    if target != row["status"]:
        emits = "payment_settled" if settled else "payment_underpaid"
        row = set_status(ctx, row, target, emits)
    else:
        row = ctx.conn.execute("SELECT * FROM payments WHERE seq = ?", (row["seq"],)).fetchone()
    splits = [(str(m), int(b)) for m, b in json.loads(row["splits"])]
    ledger.post_payment_income(
        ctx.conn,
        merchant_id=row["merchant_id"],
        payment_id=row["id"],
        merchant_order_no=row["merchant_order_no"],
        currency_id=currency_id,
        raw_amount=raw,
        splits=splits,
        now=ctx.now,
        fault=ctx.fault,
    )
    return Reply(ctx.config.profile.success_status(ctx.operation_id), represent(row, ctx))


@operation("testExpirePayment")
def expire(ctx: RequestContext) -> Reply:
    row = _find(ctx, ctx.path["id"])
    sources = next(
        t.sources
        for t in ctx.config.profile.transitions("payments")
        if t.operation == ctx.operation_id
    )
    if ctx.fault("state-expire-helper-settled-allowed"):
        sources = (*sources, states(ctx.config.profile).settled)
    if row["status"] not in sources:
        raise refuse(ctx, row, "expire")
    row = set_status(ctx, row, transition_target(ctx, ctx.operation_id), "payment_expired")
    return Reply(ctx.config.profile.success_status(ctx.operation_id), represent(row, ctx))
