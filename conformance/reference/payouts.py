"""Payout schedules (operations 12 to 15): create, replace, pause, retire.

States ``active``, ``paused``, ``retired``; ``enabled`` is true exactly when ``active``.
Replace (PUT) sets every field and makes the schedule active again (how a paused one resumes);
pause keeps a paused schedule paused; retire sets ``retired_at``; a retired schedule refuses
all three with 409.
"""

from __future__ import annotations

import secrets
import sqlite3
from datetime import timedelta
from typing import Any

from conformance.core.formats import parse_date_time
from conformance.reference.amounts import fraction_digits, to_raw
from conformance.reference.context import RequestContext
from conformance.reference.errors import business_rule, invalid_state, not_found, profile_error
from conformance.reference.fixtures import currency, require_deployment
from conformance.reference.operations import Reply, operation
from conformance.reference.states import states
from conformance.reference.timestamps import iso

SCHEMA = """
CREATE TABLE IF NOT EXISTS payout_schedules (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    merchant_id TEXT NOT NULL,
    status TEXT NOT NULL,
    currency_id TEXT NOT NULL,
    target_chain_id TEXT NOT NULL,
    withdraw_address_id TEXT NOT NULL,
    interval_secs INTEGER NOT NULL,
    min_send_amount TEXT NOT NULL,
    min_send_raw TEXT NOT NULL,
    mode TEXT NOT NULL,
    next_run_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    retired_at TEXT
);
"""
FIELDS = (
    "currency_id",
    "target_chain_id",
    "withdraw_address_id",
    "interval_secs",
    "min_send_amount",
    "min_send_raw",
    "mode",
    "next_run_at",
)


def represent(row: sqlite3.Row, ctx: RequestContext) -> dict[str, Any]:
    named = states(ctx.config.profile)
    enabled = row["status"] == named.payout_active
    if ctx.fault("state-enabled-while-paused") and row["status"] == named.payout_paused:
        enabled = True
    if ctx.fault("payout-retire-leaves-enabled") and row["status"] == named.payout_retired:
        enabled = True
    return {
        "id": row["id"],
        "currency_id": row["currency_id"],
        "currency_chain_id": f"{row['currency_id']}:{row['target_chain_id']}",
        "target_chain_id": row["target_chain_id"],
        "withdraw_address_id": row["withdraw_address_id"],
        "interval_secs": row["interval_secs"],
        "min_send_amount": row["min_send_amount"],
        "min_send_raw": row["min_send_raw"],
        "mode": row["mode"],
        "status": row["status"],
        "enabled": enabled,
        "next_run_at": row["next_run_at"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "retired_at": row["retired_at"],
    }


def _rounded(amount: str, decimals: int) -> str:
    units, _, fraction = amount.partition(".")
    return f"{units}.{fraction[:decimals]}" if fraction[:decimals] else units


def _fields(ctx: RequestContext, *, replacing: bool = False) -> dict[str, Any]:
    """The schedule fields of a create or replace body, after the profile's business rules."""
    body = ctx.body
    found = currency(ctx, body["currency_id"])
    require_deployment(ctx, found, body["target_chain_id"])
    own = ctx.config.profile.withdraw_addresses(ctx.merchant_id)
    address = body["withdraw_address_id"]
    if address not in own:
        everyone = {
            a
            for c in ctx.config.profile.credentials
            for a in ctx.config.profile.withdraw_addresses(c.merchant_id)
        }
        lenient = ctx.fault("payout-foreign-withdraw-address-accepted") or (
            replacing and ctx.fault("payout-replace-skips-withdraw-address-check")
        )
        if not (address in everyone and lenient):
            raise business_rule(
                ctx, "unknown_withdraw_address", f"unknown withdraw address {address!r}"
            )
    amount = body["min_send_amount"]
    if replacing and ctx.fault("payout-replace-rounds-decimals"):
        amount = _rounded(amount, found.decimals)  # the bug: rounds what create refuses
    if fraction_digits(amount) > found.decimals:
        raise business_rule(
            ctx,
            "too_many_decimals",
            f"min_send_amount has more than {found.decimals} decimals",
        )
    decimals = found.decimals
    if ctx.fault("payout-min-send-raw-wrong-decimals"):
        decimals = 18 if found.decimals != 18 else 6
    min_send_raw = (
        to_raw(amount, decimals)
        if fraction_digits(amount) <= decimals
        else int(amount.partition(".")[0])
    )
    if ctx.fault("payout-min-send-raw-truncates-fraction"):
        min_send_raw = to_raw(amount.partition(".")[0], decimals)
    if len(str(min_send_raw)) > ctx.config.profile.payments.raw_amount_max_digits:
        raise profile_error(ctx, "status", "amount_too_large", "min_send_amount is too large")
    first_run = body.get("first_run_at")
    if first_run is not None:
        moment = parse_date_time(first_run)
        assert moment is not None  # the contract's date-time format was checked
        if moment <= ctx.now and not ctx.fault("payout-first-run-at-past-accepted"):
            raise business_rule(ctx, "first_run_at_not_in_future", "first_run_at must be later")
        next_run = moment
        if ctx.fault("payout-next-run-at-ignores-first-run-at"):
            next_run = ctx.now + timedelta(seconds=body["interval_secs"])
    else:
        next_run = ctx.now + timedelta(seconds=body["interval_secs"])
    return {
        "currency_id": found.currency_id,
        "target_chain_id": body["target_chain_id"],
        "withdraw_address_id": address,
        "interval_secs": body["interval_secs"],
        "min_send_amount": amount,
        "min_send_raw": str(min_send_raw),
        "mode": body["mode"],
        "next_run_at": iso(next_run),
    }


def _load(ctx: RequestContext) -> sqlite3.Row:
    row: sqlite3.Row | None
    if ctx.fault("isolation-payout-cross-merchant"):
        row = ctx.conn.execute(
            "SELECT * FROM payout_schedules WHERE id = ?", (ctx.path["id"],)
        ).fetchone()
    else:
        row = ctx.conn.execute(
            "SELECT * FROM payout_schedules WHERE id = ? AND merchant_id = ?",
            (ctx.path["id"], ctx.merchant_id),
        ).fetchone()
    if row is None:
        raise not_found(ctx, "payout schedule")
    return row


def _reload(ctx: RequestContext, row: sqlite3.Row) -> sqlite3.Row:
    fresh = ctx.conn.execute("SELECT * FROM payout_schedules WHERE seq = ?", (row["seq"],))
    found: sqlite3.Row = fresh.fetchone()
    return found


def _updated(ctx: RequestContext, row: sqlite3.Row) -> Reply:
    row = _reload(ctx, row)
    schedule = represent(row, ctx)
    ctx.emit("payout_schedule_changed", schedule)
    return Reply(ctx.config.profile.success_status(ctx.operation_id), schedule)


@operation("createPayoutSchedule")
def create_payout_schedule(ctx: RequestContext) -> Reply:
    fields = _fields(ctx)
    schedule_id = "ps_" + secrets.token_hex(12)
    now = iso(ctx.now)
    ctx.conn.execute(
        f"INSERT INTO payout_schedules (id, merchant_id, status, {', '.join(FIELDS)},"
        " created_at, updated_at, retired_at)"
        f" VALUES (?, ?, ?, {', '.join('?' for _ in FIELDS)}, ?, ?, NULL)",
        (
            schedule_id,
            ctx.merchant_id,
            ctx.config.profile.lifecycle("payout_schedules").initial_state,
            *(fields[f] for f in FIELDS),
            now,
            now,
        ),
    )
    row = ctx.conn.execute("SELECT * FROM payout_schedules WHERE id = ?", (schedule_id,)).fetchone()
    return Reply(ctx.config.profile.success_status(ctx.operation_id), represent(row, ctx))


@operation("replacePayoutSchedule")
def replace_payout_schedule(ctx: RequestContext) -> Reply:
    row = _load(ctx)
    named = states(ctx.config.profile)
    if row["status"] == named.payout_retired:
        raise invalid_state(ctx, "a retired payout schedule cannot be replaced")
    fields = _fields(ctx, replacing=True)
    if ctx.fault("payout-replace-keeps-interval"):
        fields["interval_secs"] = row["interval_secs"]
    status = row["status"] if ctx.fault("state-put-does-not-resume") else named.payout_active
    ctx.conn.execute(
        f"UPDATE payout_schedules SET {', '.join(f'{f} = ?' for f in FIELDS)},"
        " status = ?, updated_at = ? WHERE seq = ?",
        (*(fields[f] for f in FIELDS), status, iso(ctx.now), row["seq"]),
    )
    return _updated(ctx, row)


@operation("pausePayoutSchedule")
def pause_payout_schedule(ctx: RequestContext) -> Reply:
    row = _load(ctx)
    named = states(ctx.config.profile)
    if row["status"] == named.payout_retired and not ctx.fault("state-pause-retired-allowed"):
        raise invalid_state(ctx, "a retired payout schedule cannot be paused")
    if row["status"] == named.payout_paused and not ctx.fault(
        "payout-pause-paused-bumps-updated-at"
    ):
        return Reply(ctx.config.profile.success_status(ctx.operation_id), represent(row, ctx))
    retired_at = iso(ctx.now) if ctx.fault("payout-retired-at-set-on-pause") else row["retired_at"]
    ctx.conn.execute(
        "UPDATE payout_schedules SET status = ?, updated_at = ?, retired_at = ? WHERE seq = ?",
        (named.payout_paused, iso(ctx.now), retired_at, row["seq"]),
    )
    return _updated(ctx, row)


@operation("retirePayoutSchedule")
def retire_payout_schedule(ctx: RequestContext) -> Reply:
    row = _load(ctx)
    named = states(ctx.config.profile)
    if row["status"] == named.payout_retired and not ctx.fault("state-retire-twice-allowed"):
        raise invalid_state(ctx, "the payout schedule is already retired")
    now = iso(ctx.now)
    ctx.conn.execute(
        "UPDATE payout_schedules SET status = ?, retired_at = ?, updated_at = ? WHERE seq = ?",
        (named.payout_retired, now, now, row["seq"]),
    )
    return _updated(ctx, row)
