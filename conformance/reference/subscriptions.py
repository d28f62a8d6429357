"""Subscriptions (operations 10 and 11): create and cancel.

States ``pending_authorization`` and ``canceled``; ``cancel`` moves any other state to
``canceled`` and refuses a canceled subscription with 409.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from datetime import timedelta
from typing import Any

from conformance.reference.amounts import fraction_digits, is_decimal_string, normalise, to_raw
from conformance.reference.context import RequestContext
from conformance.reference.errors import business_rule, invalid_state, not_found, validation_error
from conformance.reference.fixtures import currency, require_deployment
from conformance.reference.operations import Reply, operation
from conformance.reference.splits import validate_splits
from conformance.reference.states import states
from conformance.reference.timestamps import iso

SCHEMA = """
CREATE TABLE IF NOT EXISTS subscriptions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    merchant_id TEXT NOT NULL,
    status TEXT NOT NULL,
    currency_id TEXT NOT NULL,
    chain_id TEXT NOT NULL,
    amount TEXT NOT NULL,
    amount_raw TEXT NOT NULL,
    interval_secs INTEGER NOT NULL,
    splits TEXT NOT NULL,
    allowance_mode TEXT,
    next_bill_at TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""


def represent(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "status": row["status"],
        "amount": row["amount"],
        "interval_secs": row["interval_secs"],
        "currency_id": row["currency_id"],
        "currency_chain_id": f"{row['currency_id']}:{row['chain_id']}",
        "chain_id": row["chain_id"],
        "next_bill_at": row["next_bill_at"],
    }


def authorize_url(ctx: RequestContext, subscription_id: str) -> str:
    return f"{ctx.config.public_url}/authorize/{subscription_id}"


@operation("createSubscription")
def create_subscription(ctx: RequestContext) -> Reply:
    body = ctx.body
    interval = body["interval_secs"]
    limits = ctx.config.profile.range("subscriptions", "interval_secs")
    if not limits.min <= interval <= limits.max:
        raise validation_error(
            ctx, [{"field": "interval_secs", "message": f"must be {limits.min} to {limits.max}"}]
        )
    found = currency(ctx, body["currency_id"])
    if not ctx.fault("subscription-undeployed-chain-accepted"):
        require_deployment(ctx, found, body["chain_id"])
    elif body["chain_id"] not in ctx.config.profile.chains:
        raise business_rule(ctx, "unknown_chain", f"unknown chain {body['chain_id']!r}")
    amount = body["amount"]
    if not is_decimal_string(amount):
        raise business_rule(ctx, "invalid_amount", f"amount {amount!r} is not a decimal")
    if fraction_digits(amount) > found.decimals:
        raise business_rule(
            ctx, "too_many_decimals", f"amount has more than {found.decimals} decimals"
        )
    raw = to_raw(amount, found.decimals)
    if raw == 0:
        raise business_rule(ctx, "invalid_amount", "amount must be greater than 0")
    splits = validate_splits(ctx, body.get("splits", []))
    subscription_id = "sub_" + secrets.token_hex(12)
    next_bill = (
        ctx.now
        if ctx.fault("subscription-next-bill-at-now")
        else (ctx.now + timedelta(seconds=interval))
    )
    ctx.conn.execute(
        "INSERT INTO subscriptions (id, merchant_id, status, currency_id, chain_id, amount,"
        " amount_raw, interval_secs, splits, allowance_mode, next_bill_at, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            subscription_id,
            ctx.merchant_id,
            ctx.config.profile.lifecycle("subscriptions").initial_state,
            found.currency_id,
            body["chain_id"],
            normalise(amount),
            str(raw),
            interval,
            json.dumps([list(s) for s in splits]),
            body.get("allowance_mode"),
            iso(next_bill),
            iso(ctx.now),
        ),
    )
    row = ctx.conn.execute(
        "SELECT * FROM subscriptions WHERE id = ?", (subscription_id,)
    ).fetchone()
    subscription = represent(row)
    ctx.emit("createSubscription", subscription)
    subscription["authorize_url"] = authorize_url(ctx, subscription_id)
    return Reply(ctx.config.profile.success_status(ctx.operation_id), subscription)


@operation("cancelSubscription")
def cancel_subscription(ctx: RequestContext) -> Reply:
    row = ctx.conn.execute(
        "SELECT * FROM subscriptions WHERE id = ? AND merchant_id = ?",
        (ctx.path["id"], ctx.merchant_id),
    ).fetchone()
    if ctx.fault("isolation-subscription-cancel-any-merchant"):
        query = "SELECT * FROM subscriptions WHERE id = ?"
        row = ctx.conn.execute(query, (ctx.path["id"],)).fetchone()
    if row is None:
        raise not_found(ctx, "subscription")
    success = ctx.config.profile.success_status(ctx.operation_id)
    canceled = states(ctx.config.profile).subscription_canceled
    if row["status"] == canceled:
        if ctx.fault("state-cancel-canceled-subscription-200"):
            return Reply(success, represent(row))
        raise invalid_state(ctx, "the subscription is already canceled")
    ctx.conn.execute("UPDATE subscriptions SET status = ? WHERE seq = ?", (canceled, row["seq"]))
    row = ctx.conn.execute("SELECT * FROM subscriptions WHERE seq = ?", (row["seq"],)).fetchone()
    subscription = represent(row)
    ctx.emit("cancelSubscription", subscription)
    if ctx.fault("shape-cancel-subscription-has-authorize-url"):
        subscription["authorize_url"] = authorize_url(ctx, row["id"])
    return Reply(success, subscription)
