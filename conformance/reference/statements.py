"""Operation 20, ``getStatement``: one merchant's ledger for one currency over ``[from, to)``.

Lines are ordered by ``ledger_entry_id``; the window is a contiguous id range because the ledger
never dates an entry before an earlier one. The opening balance is the balance before ``from``,
the closing balance the one after the window's last entry (whatever page is shown), and the
statement reconciles when opening plus the signed amounts of every line in the window equals the
closing balance. Pages are chained by an opaque cursor that is bound, by an HMAC, to the
merchant and the query it was issued for.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
import sqlite3
from dataclasses import dataclass
from typing import Any

from conformance.core.formats import parse_date_time
from conformance.reference import ledger
from conformance.reference.context import RequestContext
from conformance.reference.errors import business_rule, validation_error
from conformance.reference.operations import Reply, operation
from conformance.reference.timestamps import iso

SCHEMA = ""  # statements read the ledger's tables

# Cursors are only valid for the lifetime of the process that issued them.
_CURSOR_KEY = secrets.token_bytes(32)


@dataclass(frozen=True)
class StatementQuery:
    merchant_id: str
    currency_id: str
    from_us: int
    to_us: int

    def binding(self) -> bytes:
        return f"{self.merchant_id}\n{self.currency_id}\n{self.from_us}\n{self.to_us}".encode()


def encode_cursor(query: StatementQuery, after_entry_id: int) -> str:
    body = base64.urlsafe_b64encode(json.dumps({"after": after_entry_id}).encode()).decode()
    tag = hmac.new(_CURSOR_KEY, query.binding() + b"\n" + body.encode(), hashlib.sha256)
    return f"{body.rstrip('=')}.{tag.hexdigest()[:32]}"


def decode_cursor(query: StatementQuery, cursor: str) -> int | None:
    """The entry id a cursor continues after, or None when it is garbage or not this query's."""
    match = re.fullmatch("([A-Za-z0-9_-]{1,200})[.]([0-9a-f]{32})", cursor)
    if match is None:
        return None
    body, tag = match.group(1), match.group(2)
    padded = body + "=" * (-len(body) % 4)
    expected = hmac.new(_CURSOR_KEY, query.binding() + b"\n" + padded.encode(), hashlib.sha256)
    if not hmac.compare_digest(expected.hexdigest()[:32], tag):
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(padded))
    except (binascii.Error, ValueError):
        return None
    after = data.get("after") if isinstance(data, dict) else None
    if not isinstance(after, int) or isinstance(after, bool) or after < 0:
        return None
    return after


@dataclass(frozen=True)
class Window:
    opening_raw: int
    closing_raw: int
    entry_count: int
    signed_sum_raw: int


def _window(conn: sqlite3.Connection, query: StatementQuery, *, include_to: bool) -> Window:
    account = (query.merchant_id, query.currency_id)
    before = conn.execute(
        "SELECT balance_after_raw FROM ledger_entries WHERE merchant_id = ? AND currency_id = ?"
        " AND created_us < ? ORDER BY ledger_entry_id DESC LIMIT 1",
        (*account, query.from_us),
    ).fetchone()
    opening = 0 if before is None else int(before[0])
    upper = "<=" if include_to else "<"
    rows = conn.execute(
        "SELECT direction, amount_raw, balance_after_raw FROM ledger_entries"
        " WHERE merchant_id = ? AND currency_id = ? AND created_us >= ?"
        f" AND created_us {upper} ? ORDER BY ledger_entry_id",
        (*account, query.from_us, query.to_us),
    ).fetchall()
    signed = sum(int(r[1]) if r[0] == ledger.CREDIT else -int(r[1]) for r in rows)
    closing = int(rows[-1][2]) if rows else opening
    return Window(opening, closing, len(rows), signed)


def _page(
    ctx: RequestContext, query: StatementQuery, after: int, limit: int, *, include_to: bool
) -> list[ledger.Entry]:
    """Up to ``limit + 1`` lines after entry ``after`` (one more tells whether more remain)."""
    upper = "<=" if include_to else "<"
    continues = after > 0
    resume = ">=" if continues and ctx.fault("statement-page-repeats-boundary-line") else ">"
    skip = 1 if continues and ctx.fault("statement-page-skips-boundary-line") else 0
    everyone = int(ctx.fault("isolation-statement-mixes-merchants"))
    rows = ctx.conn.execute(
        f"SELECT {ledger.ENTRY_COLUMNS} FROM ledger_entries"
        f" WHERE (merchant_id = ? OR {everyone}) AND currency_id = ? AND created_us >= ?"
        f" AND created_us {upper} ? AND ledger_entry_id {resume} ?"
        " ORDER BY ledger_entry_id LIMIT ? OFFSET ?",
        (query.merchant_id, query.currency_id, query.from_us, query.to_us, after, limit + 1, skip),
    ).fetchall()
    return [ledger.entry_from_row(r) for r in rows]


def _direction_name(ctx: RequestContext, direction: str) -> str:
    """The profile's name of a stored direction (statements.directions: credit's first)."""
    credit, debit = ctx.config.profile.statements.directions[:2]
    return credit if direction == ledger.CREDIT else debit


def render_line(ctx: RequestContext, entry: ledger.Entry, places: int) -> dict[str, Any]:
    signed = entry.signed_raw
    if ctx.fault("statement-debit-sign-positive"):
        signed = entry.amount_raw
    line: dict[str, Any] = {
        "ledger_entry_id": entry.ledger_entry_id,
        "ledger_transaction_id": entry.ledger_transaction_id,
        "tx_type": entry.tx_type,
        "business_type": entry.business_type,
        "direction": _direction_name(ctx, entry.direction),
        "canonical_amount": ledger.canonical(entry.amount_raw, places),
        "signed_canonical_amount": ledger.canonical(signed, places),
        "balance_after_canonical": ledger.canonical(entry.balance_after_raw, places),
        "platform_fee_canonical": ledger.canonical(entry.platform_fee_raw, places),
        "is_split_recipient_income": entry.is_split_recipient_income,
        "created_at": iso(ledger.from_micros(entry.created_us)),
    }
    optional = {
        "payment_id": entry.payment_id,
        "merchant_order_no": entry.merchant_order_no,
        "source_merchant_id": entry.source_merchant_id,
        "withdrawal_id": entry.withdrawal_id,
    }
    line.update({k: v for k, v in optional.items() if v is not None})
    return line


def _parse_query(ctx: RequestContext) -> tuple[StatementQuery, int, int]:
    """The query, the page size and the entry id to continue after; 400 on a bad parameter."""
    problems: list[dict[str, str]] = []
    moments: dict[str, int] = {}
    for name in ("from", "to"):
        raw = ctx.query.get(name)
        moment = parse_date_time(raw) if isinstance(raw, str) else None
        if moment is None:
            problems.append({"field": f"query.{name}", "message": "must be an RFC 3339 date-time"})
        else:
            moments[name] = ledger.to_micros(moment)
    if ctx.fault("statement-from-equal-to-accepted"):
        not_before = not problems and moments["from"] > moments["to"]
    else:
        not_before = not problems and moments["from"] >= moments["to"]
    if not_before:
        problems.append({"field": "query.from", "message": "must be before to"})
    bounds = ctx.config.profile.range("statements", "limit")
    default = bounds.default if bounds.default is not None else bounds.max
    if ctx.fault("statement-default-limit-50"):
        default = 50 if default != 50 else 25  # never the profile's own default
    limit = ctx.query.get("limit", default)
    if ctx.fault("statement-limit-max-unchecked") and isinstance(limit, int):
        limit = min(limit, bounds.max)
    if isinstance(limit, bool) or not isinstance(limit, int):
        problems.append({"field": "query.limit", "message": "must be an integer"})
    elif not bounds.min <= limit <= bounds.max:
        problems.append(
            {"field": "query.limit", "message": f"must be {bounds.min} to {bounds.max}"}
        )
    if problems:
        raise validation_error(ctx, problems)
    query = StatementQuery(
        ctx.merchant_id, str(ctx.query["currency_id"]), moments["from"], moments["to"]
    )
    after = 0
    cursor = ctx.query.get("cursor")
    if cursor is not None:
        decoded = decode_cursor(query, str(cursor))
        if decoded is None and ctx.fault("statement-bad-cursor-first-page"):
            decoded = 0  # the bug: `decode_cursor(...) or 0`, a cursor it cannot read restarts
        if decoded is None:
            raise validation_error(
                ctx,
                [{"field": "query.cursor", "message": "unknown cursor, or one of another query"}],
            )
        after = decoded
    return query, int(limit), after


@operation("getStatement")
def get_statement(ctx: RequestContext) -> Reply:
    query, limit, after = _parse_query(ctx)
    currency = ctx.config.profile.currencies.get(query.currency_id)
    if currency is None and ctx.fault("statement-unknown-currency-empty"):
        return Reply(ctx.config.profile.success_status(ctx.operation_id), _empty(ctx, query, limit))
    if currency is None:
        raise business_rule(ctx, "unknown_currency", f"unknown currency {query.currency_id!r}")
    places = currency.decimals
    include_to = ctx.fault("statement-window-includes-to")
    window = _window(ctx.conn, query, include_to=include_to)
    entries = _page(ctx, query, after, limit, include_to=include_to)
    more = len(entries) > limit
    entries = entries[:limit]
    if ctx.fault("statement-next-cursor-on-last-page"):
        more = len(entries) == limit
    opening, closing = window.opening_raw, window.closing_raw
    if ctx.fault("statement-opening-ignores-history"):
        opening = 0
    if ctx.fault("statement-closing-from-page") and entries:
        closing = entries[-1].balance_after_raw
    count = len(entries) if ctx.fault("statement-count-page-only") else window.entry_count
    body: dict[str, Any] = {
        "merchant_id": ctx.merchant_id,
        "currency_id": currency.currency_id,
        "code": currency.code,
        "symbol": currency.symbol,
        "accounting_decimals": places,
        "opening_canonical": ledger.canonical(opening, places),
        "closing_canonical": ledger.canonical(closing, places),
        "window_entry_count": count,
        "limit": limit,
        "lines": [render_line(ctx, e, places) for e in entries],
        "reconciles": opening + window.signed_sum_raw == closing,
    }
    if ctx.fault("statement-reconciles-page-only"):
        body["reconciles"] = opening + sum(e.signed_raw for e in entries) == closing
    if ctx.fault("statement-lines-newest-first"):
        body["lines"].reverse()
    if ctx.fault("statement-amounts-trimmed"):
        _trim_amounts(body)
    if more and entries:
        body["next_cursor"] = encode_cursor(query, entries[-1].ledger_entry_id)
    return Reply(ctx.config.profile.success_status(ctx.operation_id), body)


def _empty(ctx: RequestContext, query: StatementQuery, limit: int) -> dict[str, Any]:
    """The bug of "statement-unknown-currency-empty": an empty statement for any currency."""
    return {
        "merchant_id": ctx.merchant_id,
        "currency_id": query.currency_id,
        "code": query.currency_id.upper(),
        "symbol": "",
        "accounting_decimals": 0,
        "opening_canonical": "0",
        "closing_canonical": "0",
        "window_entry_count": 0,
        "limit": limit,
        "lines": [],
        "reconciles": True,
    }


def _trim(amount: str) -> str:
    return amount.rstrip("0").rstrip(".") if "." in amount else amount


def _trim_amounts(body: dict[str, Any]) -> None:
    """The bug of "statement-amounts-trimmed": amounts written like numbers ("12.5")."""
    for name in ("opening_canonical", "closing_canonical"):
        body[name] = _trim(body[name])
    for line in body["lines"]:
        for name in (
            "canonical_amount",
            "signed_canonical_amount",
            "balance_after_canonical",
            "platform_fee_canonical",
        ):
            line[name] = _trim(line[name])
