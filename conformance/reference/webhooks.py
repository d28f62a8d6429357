"""Operations 1-5: webhook endpoints (list, create-or-replace, rotate secret) and deliveries.

Endpoint ids are chosen by the merchant (``PUT /v1/webhook-endpoints/{id}``) and live in the
merchant's own namespace. An endpoint gets a ``whsec_`` secret when it is created; the merchant
learns a secret only from ``rotate-secret``, which never hands out a secret the endpoint had
before. Deliveries are written by ``events.emit`` and sent by ``webhook_dispatch``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sqlite3
from typing import Any
from urllib.parse import urlsplit

from conformance.core.hosts import is_loopback
from conformance.core.profile import WebhooksSection
from conformance.reference import events, webhook_queue
from conformance.reference.context import RequestContext
from conformance.reference.errors import business_rule, not_found
from conformance.reference.ledger import to_micros
from conformance.reference.operations import Reply, operation
from conformance.reference.states import states
from conformance.reference.timestamps import iso

SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook_endpoints (
    merchant_id TEXT NOT NULL,
    id TEXT NOT NULL,
    url TEXT NOT NULL,
    event_types TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    secret TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (merchant_id, id)
);
CREATE TABLE IF NOT EXISTS webhook_endpoint_secrets (
    merchant_id TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL,
    PRIMARY KEY (merchant_id, endpoint_id, secret_sha256)
);
"""


def url_problem(url: str, *, allow_any_http: bool = False) -> str | None:
    """Why ``url`` cannot receive webhooks, or None when it can."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return "url is not a valid absolute URL"
    if not host:
        return "url must be absolute, with a host"
    scheme = parts.scheme.lower()
    if scheme == "https":
        return None
    if scheme == "http" and (allow_any_http or is_loopback(host)):
        return None
    if scheme == "http":
        return "an http url is only allowed on a loopback host; use https"
    return "url must use https (or http on a loopback host)"


def new_secret(prefix: str = "whsec_", random_bytes: int = 32) -> str:
    """The profile's webhooks.secret_prefix, then base64 of secret_random_bytes random bytes."""
    return prefix + base64.b64encode(secrets.token_bytes(random_bytes)).decode()


def _fingerprint(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _remember_secret(
    conn: sqlite3.Connection, merchant_id: str, endpoint_id: str, secret: str
) -> bool:
    """Record a secret as used by the endpoint; False when it already was."""
    cursor = conn.execute(
        "INSERT OR IGNORE INTO webhook_endpoint_secrets (merchant_id, endpoint_id, secret_sha256)"
        " VALUES (?, ?, ?)",
        (merchant_id, endpoint_id, _fingerprint(secret)),
    )
    return cursor.rowcount == 1


def _fresh_secret(
    conn: sqlite3.Connection, merchant_id: str, endpoint_id: str, webhooks: WebhooksSection
) -> str:
    while True:  # 256 random bits: a repeat is practically impossible, but the rule is absolute
        secret = new_secret(webhooks.secret_prefix, webhooks.secret_random_bytes)
        if _remember_secret(conn, merchant_id, endpoint_id, secret):
            return secret


def endpoint_body(row: sqlite3.Row | tuple[Any, ...]) -> dict[str, Any]:
    return {
        "id": row[0],
        "url": row[1],
        "event_types": json.loads(row[2]),
        "active": bool(row[3]),
        "created_at": row[4],
    }


_ENDPOINT_COLUMNS = "id, url, event_types, active, created_at"


def _endpoint(conn: sqlite3.Connection, merchant_id: str, endpoint_id: str) -> Any:
    return conn.execute(
        f"SELECT {_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE merchant_id = ? AND id = ?",
        (merchant_id, endpoint_id),
    ).fetchone()


def _owner(ctx: RequestContext, table: str, ident: str, fault: str) -> str:
    """The caller, or with ``fault`` (a lookup by id alone) whichever merchant has ``ident``."""
    if ctx.fault(fault):
        row = ctx.conn.execute(f"SELECT merchant_id FROM {table} WHERE id = ?", (ident,)).fetchone()
        if row is not None:
            return str(row[0])
    return ctx.merchant_id


@operation("listWebhookEndpoints")
def list_endpoints(ctx: RequestContext) -> Reply:
    rows = ctx.conn.execute(
        f"SELECT {_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE merchant_id = ?"
        " ORDER BY created_us, id",
        (ctx.merchant_id,),
    ).fetchall()
    body = {"endpoints": [endpoint_body(r) for r in rows]}
    return Reply(ctx.config.profile.success_status(ctx.operation_id), body)


@operation("putWebhookEndpoint")
def put_endpoint(ctx: RequestContext) -> Reply:
    endpoint_id = ctx.path["id"]
    url = str(ctx.body["url"])
    event_types = list(ctx.body["event_types"])
    problem = url_problem(url, allow_any_http=ctx.fault("webhook-accepts-non-loopback-http"))
    if problem is not None:
        raise business_rule(ctx, "invalid_webhook_url", problem)
    known = ctx.config.profile.webhooks.event_types
    unknown = [t for t in event_types if t not in known]
    if unknown and not ctx.fault("webhook-accepts-unknown-event-type"):
        raise business_rule(
            ctx,
            "unknown_event_type",
            f"unknown event type {unknown[0]!r}; known: {', '.join(known)}",
        )
    now = iso(ctx.now)
    owner = _owner(ctx, "webhook_endpoints", endpoint_id, "isolation-endpoint-ids-global")
    existing = _endpoint(ctx.conn, owner, endpoint_id)
    if existing is None:
        secret = _fresh_secret(ctx.conn, ctx.merchant_id, endpoint_id, ctx.config.profile.webhooks)
        ctx.conn.execute(
            "INSERT INTO webhook_endpoints (merchant_id, id, url, event_types, active, secret,"
            " created_at, created_us, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?)",
            (
                ctx.merchant_id,
                endpoint_id,
                url,
                json.dumps(event_types),
                secret,
                now,
                to_micros(ctx.now),
                now,
            ),
        )
    else:
        stored_types = (
            existing[2]
            if ctx.fault("webhook-replace-keeps-event-types")
            else json.dumps(event_types)
        )
        ctx.conn.execute(
            "UPDATE webhook_endpoints SET url = ?, event_types = ?, active = 1, updated_at = ?"
            " WHERE merchant_id = ? AND id = ?",
            (url, stored_types, now, owner, endpoint_id),
        )
    row = _endpoint(ctx.conn, owner, endpoint_id)
    return Reply(ctx.config.profile.success_status(ctx.operation_id), endpoint_body(row))


@operation("rotateWebhookEndpointSecret")
def rotate_secret(ctx: RequestContext) -> Reply:
    endpoint_id = ctx.path["id"]
    owner = _owner(ctx, "webhook_endpoints", endpoint_id, "isolation-rotate-secret-any-merchant")
    row = ctx.conn.execute(
        "SELECT secret FROM webhook_endpoints WHERE merchant_id = ? AND id = ?",
        (owner, endpoint_id),
    ).fetchone()
    if row is None:
        raise not_found(ctx, "webhook endpoint")
    if ctx.fault("webhook-rotate-keeps-secret"):
        secret = str(row[0])
    else:
        secret = _fresh_secret(ctx.conn, owner, endpoint_id, ctx.config.profile.webhooks)
        ctx.conn.execute(
            "UPDATE webhook_endpoints SET secret = ?, updated_at = ?"
            " WHERE merchant_id = ? AND id = ?",
            (secret, iso(ctx.now), owner, endpoint_id),
        )
    body = {"id": endpoint_id, "secret": secret}
    if ctx.fault("webhook-rotate-response-without-id"):
        del body["id"]
    return Reply(ctx.config.profile.success_status(ctx.operation_id), body)


def delivery_body(row: sqlite3.Row | tuple[Any, ...], ctx: RequestContext) -> dict[str, Any]:
    """A delivery record; the queue keeps pending/succeeded/failed, shown in the profile's names."""
    return {
        "id": row[0],
        "event_type": row[1],
        "status": states(ctx.config.profile).delivery(str(row[2])),
        "attempts": int(row[3]),
        "created_at": row[4],
    }


@operation("listWebhookDeliveries")
def list_deliveries(ctx: RequestContext) -> Reply:
    # The fault counts sends (the first one and each resend) instead of tries.
    attempts = (
        "CASE WHEN attempts > 0 THEN generation + 1 ELSE 0 END"
        if ctx.fault("webhook-attempts-count-sends")
        else "attempts"
    )
    rows = ctx.conn.execute(
        f"SELECT id, event_type, status, {attempts}, created_at FROM webhook_deliveries"
        " WHERE merchant_id = ? OR ? ORDER BY created_us, rowid",
        (ctx.merchant_id, ctx.fault("isolation-deliveries-all-merchants")),
    ).fetchall()
    body = {"deliveries": [delivery_body(r, ctx) for r in rows]}
    return Reply(ctx.config.profile.success_status(ctx.operation_id), body)


@operation("resendWebhookDelivery")
def resend_delivery(ctx: RequestContext) -> Reply:
    if ctx.fault("webhook-resend-queues-nothing"):
        found = ctx.conn.execute(
            "SELECT 1 FROM webhook_deliveries WHERE merchant_id = ? AND id = ?",
            (ctx.merchant_id, ctx.path["id"]),
        ).fetchone()
        if found is None:
            raise not_found(ctx, "webhook delivery")
        status = ctx.config.profile.webhooks.resend_status
        return Reply(ctx.config.profile.success_status(ctx.operation_id), {"status": status})
    owner = _owner(ctx, "webhook_deliveries", ctx.path["id"], "isolation-resend-any-merchant")
    cursor = ctx.conn.execute(
        "UPDATE webhook_deliveries SET status = 'pending', generation = generation + 1,"
        " attempt_budget = attempts + ?, next_attempt_us = ? WHERE merchant_id = ? AND id = ?",
        (events.ATTEMPTS_PER_SEND, to_micros(ctx.now), owner, ctx.path["id"]),
    )
    if cursor.rowcount != 1:
        raise not_found(ctx, "webhook delivery")
    webhook_queue.queued(ctx.conn)
    status = ctx.config.profile.webhooks.resend_status
    return Reply(ctx.config.profile.success_status(ctx.operation_id), {"status": status})
