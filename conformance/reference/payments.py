"""Payments (operations 6 to 9): create, list, cancel, accept underpaid.

States ``pending``, ``underpaid``, ``settled``, ``expired``, ``canceled``. A pending payment
expires by itself once ``expires_at`` has passed (checked whenever payments are read or acted
on). Rows of kind ``x402`` are payments created by x402 requirements (``x402.py``): they share
the id space but are not listed or acted on here.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import struct
from datetime import datetime, timedelta
from typing import Any

from conformance.reference.amounts import fraction_digits, is_decimal_string, normalise, to_raw
from conformance.reference.context import RequestContext
from conformance.reference.errors import (
    ApiError,
    business_rule,
    invalid_state,
    not_found,
    profile_error,
    validation_error,
)
from conformance.reference.fixtures import currency, deposit_address, require_deployment
from conformance.reference.ledger import to_micros
from conformance.reference.operations import Reply, operation
from conformance.reference.splits import validate_splits
from conformance.reference.states import states
from conformance.reference.timestamps import iso

SCHEMA = """
CREATE TABLE IF NOT EXISTS payments (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    merchant_id TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'payment',
    status TEXT NOT NULL,
    merchant_order_no TEXT,
    quotes TEXT NOT NULL DEFAULT '{}',
    quote_raw TEXT NOT NULL DEFAULT '{}',
    splits TEXT NOT NULL DEFAULT '[]',
    received_currency TEXT,
    received_chain TEXT,
    received_raw TEXT NOT NULL DEFAULT '0',
    expires_at TEXT NOT NULL,
    expires_us INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    details TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS payments_by_merchant ON payments (merchant_id, kind, seq);
CREATE INDEX IF NOT EXISTS payments_due ON payments (status, expires_us);
"""
KIND_PAYMENT = "payment"
KIND_X402 = "x402"


PAYMENT_ID_PREFIX = "pay_"


def new_payment_id() -> str:
    return PAYMENT_ID_PREFIX + secrets.token_hex(12)


def _cursor_shard(cursor: str) -> int:
    """The bug of payments-cursor-truncated-500: a cursor (a payment id) is unpacked as the
    shard number and row key of its 12 bytes before it is looked up, unguarded, so a cut one
    (hex of another length) raises struct.error or ValueError: a 500."""
    shard, _row = struct.unpack(">IQ", bytes.fromhex(cursor.removeprefix(PAYMENT_ID_PREFIX)))
    return int(shard)


def insert_payment(
    conn: sqlite3.Connection,
    *,
    payment_id: str,
    merchant_id: str,
    kind: str,
    status: str,
    created_at: datetime,
    expires_at: datetime,
    merchant_order_no: str | None = None,
    quotes: dict[str, Any] | None = None,
    quote_raw: dict[str, int] | None = None,
    splits: list[tuple[str, int]] | None = None,
    details: dict[str, Any] | None = None,
) -> None:
    """Insert a payment row (``kind`` ``payment`` or ``x402``); amounts as raw integers."""
    conn.execute(
        "INSERT INTO payments (id, merchant_id, kind, status, merchant_order_no, quotes,"
        " quote_raw, splits, expires_at, expires_us, created_at, details)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            payment_id,
            merchant_id,
            kind,
            status,
            merchant_order_no,
            json.dumps(quotes or {}, ensure_ascii=False),
            json.dumps({k: str(v) for k, v in (quote_raw or {}).items()}),
            json.dumps([list(s) for s in splits or []]),
            iso(expires_at),
            to_micros(expires_at),
            iso(created_at),
            json.dumps(details or {}, ensure_ascii=False),
        ),
    )


def insert_replayed_copy(conn: sqlite3.Connection, merchant_id: str, stored: bytes) -> None:
    """The bug of fault ``payment-replay-inserts-second-row``: a replayed create inserts the
    payment of the stored response again, under a new id."""
    payment_id = json.loads(stored).get("id")
    row = get_payment(conn, merchant_id, str(payment_id))
    if row is None:
        return
    columns = [c for c in row.keys() if c not in ("seq", "id")]  # noqa: SIM118 (values)
    conn.execute(
        f"INSERT INTO payments (id, {', '.join(columns)})"
        f" VALUES (?, {', '.join('?' for _ in columns)})",
        (new_payment_id(), *(row[c] for c in columns)),
    )


def get_payment(
    conn: sqlite3.Connection, merchant_id: str, payment_id: str, kind: str | None = None
) -> sqlite3.Row | None:
    """The merchant's payment row, or None (unknown id, or another merchant's)."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT * FROM payments WHERE id = ? AND merchant_id = ?", (payment_id, merchant_id)
    ).fetchone()
    if row is not None and kind is not None and row["kind"] != kind:
        return None
    return row


def represent(row: sqlite3.Row, ctx: RequestContext) -> dict[str, Any]:
    """The payment as listed and as returned by cancel (no checkout_url)."""
    expires_at = row["expires_at"]
    if ctx.fault("shape-expires-at-not-date-time"):
        expires_at = expires_at.replace("T", " ").rstrip("Z")
    body = {
        "id": row["id"],
        "status": row["status"],
        "quotes": json.loads(row["quotes"]),
        "expires_at": expires_at,
        "merchant_order_no": row["merchant_order_no"],
    }
    if ctx.fault("shape-checkout-url-everywhere"):
        body["checkout_url"] = checkout_url(ctx, row["id"])
    return body


def checkout_url(ctx: RequestContext, payment_id: str) -> str:
    return f"{ctx.config.public_url}/checkout/{payment_id}"


def set_status(ctx: RequestContext, row: sqlite3.Row, status: str, emits: str) -> sqlite3.Row:
    """Set the payment's status; ``emits`` is the key of [webhooks.emits] the change is."""
    ctx.conn.execute("UPDATE payments SET status = ? WHERE seq = ?", (status, row["seq"]))
    updated: sqlite3.Row = ctx.conn.execute(
        "SELECT * FROM payments WHERE seq = ?", (row["seq"],)
    ).fetchone()
    ctx.emit(emits, represent(updated, ctx))
    return updated


def expire_due(ctx: RequestContext) -> None:
    """Pending payments of the merchant whose expires_at has passed become expired."""
    named = states(ctx.config.profile)
    due = ctx.conn.execute(
        "SELECT * FROM payments WHERE merchant_id = ? AND kind = ? AND status = ?"
        " AND expires_us <= ?",
        (ctx.merchant_id, KIND_PAYMENT, named.pending, to_micros(ctx.now)),
    ).fetchall()
    for row in due:
        set_status(ctx, row, named.expired, "payment_expired")


def find(ctx: RequestContext, payment_id: str) -> sqlite3.Row:
    """The caller's payment (kind ``payment``), after lazy expiry, or 404."""
    expire_due(ctx)
    row: sqlite3.Row | None
    if ctx.fault("isolation-payment-cross-merchant"):
        row = ctx.conn.execute(
            "SELECT * FROM payments WHERE id = ? AND kind = ?", (payment_id, KIND_PAYMENT)
        ).fetchone()
    else:
        row = get_payment(ctx.conn, ctx.merchant_id, payment_id, KIND_PAYMENT)
    foreign = "SELECT 1 FROM payments WHERE id = ?"
    if (
        row is None
        and ctx.fault("isolation-foreign-id-403")
        and ctx.conn.execute(foreign, (payment_id,)).fetchone()
    ):
        raise ApiError(403, "forbidden", "the payment belongs to another merchant")
    if row is None:
        raise not_found(ctx, "payment")
    return row


# ------------------------------------------------------------------------------- create
def _quote(
    ctx: RequestContext, payment_id: str, currency_id: str, entry: dict[str, Any]
) -> tuple[dict[str, Any], int]:
    found = currency(ctx, currency_id)
    amount = entry["amount"]
    if not is_decimal_string(amount):
        raise business_rule(
            ctx, "invalid_amount", f"quotes.{currency_id}.amount {amount!r} is not a decimal"
        )
    if fraction_digits(amount) > found.decimals:
        raise business_rule(
            ctx,
            "too_many_decimals",
            f"quotes.{currency_id}.amount has more than {found.decimals} decimals",
        )
    raw = to_raw(amount, found.decimals)
    if raw == 0:
        raise business_rule(ctx, "invalid_amount", f"quotes.{currency_id}.amount must be > 0")
    max_digits = ctx.config.profile.payments.raw_amount_max_digits
    if len(str(raw)) > max_digits:
        raise profile_error(
            ctx, "status", "amount_too_large", f"quotes.{currency_id}.amount is too large"
        )
    chain_ids = entry.get("chain_ids")
    if chain_ids is None:
        chains = list(found.chains)
    else:
        chains = []
        for chain_id in chain_ids:
            require_deployment(ctx, found, chain_id)
            if chain_id not in chains:
                chains.append(chain_id)
    quote = {
        "amount": normalise(amount),
        "code": found.code,
        "symbol": found.symbol,
        "name": found.name,
        "deployments": [
            {
                "chain_id": chain_id,
                "asset_kind": found.asset_kinds[chain_id],
                "address": deposit_address(payment_id, chain_id),
            }
            for chain_id in chains
        ],
    }
    return quote, raw


@operation("createPayment")
def create_payment(ctx: RequestContext) -> Reply:
    body = ctx.body
    limits = ctx.config.profile.range("payments", "expires_in_secs")
    expires_in = int(body.get("expires_in_secs", limits.default or limits.min))
    if not limits.min <= expires_in <= limits.max and not ctx.fault(
        "payments-expires-in-unbounded"
    ):
        raise validation_error(
            ctx,
            [
                {
                    "field": "expires_in_secs",
                    "message": f"must be {limits.min} to {limits.max}",
                }
            ],
        )
    payment_id = new_payment_id()
    if not body["quotes"] and not ctx.fault("payment-empty-quotes-accepted"):
        refusal = ctx.config.profile.payments.empty_quotes
        raise ApiError(
            refusal.status, refusal.code or "empty_quotes", "quotes must name at least one currency"
        )
    quotes: dict[str, Any] = {}
    quote_raw: dict[str, int] = {}
    for currency_id, entry in body["quotes"].items():
        quotes[currency_id], quote_raw[currency_id] = _quote(ctx, payment_id, currency_id, entry)
    splits = validate_splits(ctx, body.get("splits", []))
    order_no = body["merchant_order_no"]
    duplicate_scope = "" if ctx.fault("isolation-order-no-global") else " AND merchant_id = ?"
    params: tuple[str, ...] = (order_no,)
    if duplicate_scope:
        params += (ctx.merchant_id,)
    duplicate = ctx.conn.execute(
        f"SELECT 1 FROM payments WHERE merchant_order_no = ?{duplicate_scope}", params
    ).fetchone()
    if duplicate is not None and not ctx.fault("payment-duplicate-order-accepted"):
        raise profile_error(
            ctx, "status", "duplicate_order", f"merchant_order_no {order_no!r} is already used"
        )
    if ctx.fault("payment-expires-at-ignores-expires-in"):
        expires_in = int(limits.default or limits.min)
    expires_at = ctx.now + timedelta(seconds=expires_in)
    details = {
        k: body[k] for k in ("user_id", "overpay_policy", "memo", "redirect_url") if k in body
    }
    insert_payment(
        ctx.conn,
        payment_id=payment_id,
        merchant_id=ctx.merchant_id,
        kind=KIND_PAYMENT,
        status=ctx.config.profile.lifecycle("payments").initial_state,
        created_at=ctx.now,
        expires_at=expires_at,
        merchant_order_no=order_no,
        quotes=quotes,
        quote_raw=quote_raw,
        splits=splits,
        details=details,
    )
    row = get_payment(ctx.conn, ctx.merchant_id, payment_id)
    assert row is not None
    payment = represent(row, ctx)
    ctx.emit("createPayment", payment)
    if not ctx.fault("shape-missing-checkout-url"):
        payment["checkout_url"] = checkout_url(ctx, payment_id)
    return Reply(ctx.config.profile.success_status(ctx.operation_id), payment)


# ------------------------------------------------------------------------------- list
@operation("listPayments")
def list_payments(ctx: RequestContext) -> Reply:
    expire_due(ctx)
    profile = ctx.config.profile
    limits = profile.range("payments", "list_limit")
    limit = int(ctx.query.get("limit", limits.default or limits.max))
    if limit > limits.max and ctx.fault("payments-list-limit-max-unenforced"):
        pass
    elif not limits.min <= limit <= limits.max:
        raise validation_error(
            ctx, [{"field": "query.limit", "message": f"must be {limits.min} to {limits.max}"}]
        )
    where = ["kind = ?"]
    params: list[Any] = [KIND_PAYMENT]
    by_order_no = "merchant_order_no" in ctx.query
    if not ctx.fault("isolation-list-all-merchants") and not (
        by_order_no and ctx.fault("isolation-order-no-filter-all-merchants")
    ):
        where.append("merchant_id = ?")
        params.append(ctx.merchant_id)
    status = ctx.query.get("status")
    if status is not None and not ctx.fault("payments-status-filter-ignored"):
        # The profile only says the filter returns matches: a value that is no state matches none.
        where.append("status = ?")
        params.append(status)
    if "merchant_order_no" in ctx.query:
        if ctx.fault("payments-order-filter-prefix-match"):  # the bug: a search, not a filter
            where.append("merchant_order_no LIKE ? || '%'")
        else:
            where.append("merchant_order_no = ?")
        params.append(ctx.query["merchant_order_no"])
    # the fault lists in the order the profile's payments.list_order does not choose
    newest_first = (profile.payments.list_order == "newest-first") != ctx.fault(
        "payments-list-oldest-first"
    )
    cursor = ctx.query.get("cursor")
    if cursor is not None:
        if ctx.fault("payments-cursor-truncated-500") and cursor.startswith(PAYMENT_ID_PREFIX):
            _cursor_shard(cursor)
        scope = "" if ctx.fault("payments-cursor-foreign-accepted") else " AND merchant_id = ?"
        args: tuple[str, ...] = (cursor, KIND_PAYMENT)
        if scope:
            args += (ctx.merchant_id,)
        anchor = ctx.conn.execute(
            f"SELECT seq FROM payments WHERE id = ? AND kind = ?{scope}", args
        ).fetchone()
        if anchor is None:
            raise validation_error(
                ctx, [{"field": "query.cursor", "message": "is not a cursor of this list"}]
            )
        where.append("seq < ?" if newest_first else "seq > ?")
        params.append(anchor["seq"])
    order = "DESC" if newest_first else "ASC"
    rows = ctx.conn.execute(
        f"SELECT * FROM payments WHERE {' AND '.join(where)} ORDER BY seq {order} LIMIT ?",
        [*params, limit + 1],
    ).fetchall()
    body: dict[str, Any] = {"payments": [represent(r, ctx) for r in rows[:limit]]}
    if len(rows) > limit:
        # the bug: the cursor names the next page's first row, which that page then starts after
        boundary = limit if ctx.fault("payments-cursor-skips-boundary-item") else limit - 1
        body["next_cursor"] = rows[boundary]["id"]
    return Reply(profile.success_status(ctx.operation_id), body)


# ------------------------------------------------------------------------------- transitions
def _allowed_sources(ctx: RequestContext, operation_id: str) -> tuple[str, ...]:
    for transition in ctx.config.profile.transitions("payments"):
        if transition.operation == operation_id:
            return transition.sources
    raise KeyError(operation_id)


def transition_target(ctx: RequestContext, operation_id: str) -> str:
    for transition in ctx.config.profile.transitions("payments"):
        if transition.operation == operation_id:
            return transition.target
    raise KeyError(operation_id)


def refuse(ctx: RequestContext, row: sqlite3.Row, action: str) -> ApiError:
    return invalid_state(ctx, f"cannot {action} a payment that is {row['status']}")


@operation("cancelPayment")
def cancel_payment(ctx: RequestContext) -> Reply:
    row = find(ctx, ctx.path["id"])
    success = ctx.config.profile.success_status(ctx.operation_id)
    if row["status"] == states(ctx.config.profile).canceled and ctx.fault(
        "state-cancel-canceled-payment-200"
    ):
        return Reply(success, represent(row, ctx))
    sources = _allowed_sources(ctx, ctx.operation_id)
    if ctx.fault("state-cancel-expired-payment-allowed"):
        sources = (*sources, states(ctx.config.profile).expired)
    if row["status"] not in sources:
        raise refuse(ctx, row, "cancel")
    row = set_status(ctx, row, transition_target(ctx, ctx.operation_id), "cancelPayment")
    return Reply(success, represent(row, ctx))


@operation("acceptUnderpaidPayment")
def accept_underpaid(ctx: RequestContext) -> Reply:
    row = find(ctx, ctx.path["id"])
    sources = _allowed_sources(ctx, ctx.operation_id)
    if ctx.fault("state-accept-underpaid-pending"):
        sources = (*sources, states(ctx.config.profile).pending)
    if row["status"] not in sources:
        raise refuse(ctx, row, "accept")
    row = set_status(ctx, row, transition_target(ctx, ctx.operation_id), "payment_settled")
    currency_id = row["received_currency"] or next(iter(json.loads(row["quotes"])), "")
    chain_id = row["received_chain"] or ""
    accepted = row["received_raw"]
    if ctx.fault("payment-accepted-raw-is-quoted"):
        accepted = json.loads(row["quote_raw"]).get(currency_id, accepted)
    result = {
        "payment_id": row["id"],
        "currency_id": currency_id,
        "currency_chain_id": f"{currency_id}:{chain_id}",
        "accepted_raw": str(accepted),
        "status": row["status"],
    }
    if ctx.fault("payment-accept-underpaid-without-chain"):
        del result["currency_chain_id"]
    return Reply(ctx.config.profile.success_status(ctx.operation_id), result)
