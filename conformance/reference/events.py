"""Events: what happened to a merchant's resources, turned into webhook deliveries.

``emit`` runs inside the request's transaction: it writes one ``pending`` delivery per active
endpoint of the merchant subscribed to the event type, so a rolled-back request sends nothing
and a committed one is picked up by the dispatcher thread (``webhook_dispatch``).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

from conformance.reference import webhook_queue
from conformance.reference.ledger import to_micros
from conformance.reference.timestamps import iso

SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id TEXT PRIMARY KEY,
    merchant_id TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    attempt_budget INTEGER NOT NULL,
    generation INTEGER NOT NULL DEFAULT 0,
    next_attempt_us INTEGER NOT NULL,
    last_response_status INTEGER,
    created_at TEXT NOT NULL,
    created_us INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (status, next_attempt_us);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_merchant
    ON webhook_deliveries (merchant_id, created_us);
"""

# Tries per send (the first one and the retries); a resend grants the same number again.
ATTEMPTS_PER_SEND = 3


def _no_fault(name: str) -> bool:
    return False


def event_body(
    event_id: str,
    event_type: str,
    data: dict[str, Any],
    now: datetime,
    *,
    fault: Callable[[str], bool] = _no_fault,
) -> str:
    """The body POSTed to endpoints: ``{id, type, timestamp, data}``, compact JSON."""
    body: dict[str, Any] = {"id": event_id, "type": event_type, "timestamp": iso(now), "data": data}
    if fault("webhook-body-without-timestamp"):
        del body["timestamp"]  # "the webhook-timestamp header says when"
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def emit(
    conn: sqlite3.Connection,
    merchant_id: str,
    event_type: str,
    data: dict[str, Any],
    now: datetime,
    *,
    fault: Callable[[str], bool] = _no_fault,
) -> list[str]:
    """Queue one delivery of the event per subscribed active endpoint; returns their ids."""
    event_id = "evt_" + secrets.token_hex(12)
    payload = event_body(event_id, event_type, data, now, fault=fault)
    endpoints = conn.execute(
        "SELECT id, event_types FROM webhook_endpoints WHERE merchant_id = ? AND active = 1"
        " ORDER BY created_us, id",
        (merchant_id,),
    ).fetchall()
    created: list[str] = []
    for endpoint_id, event_types in endpoints:
        subscribed = event_type in json.loads(event_types)
        if not subscribed and not fault("webhook-delivery-ignores-subscription"):
            continue
        delivery_id = "msg_" + secrets.token_hex(12)
        conn.execute(
            "INSERT INTO webhook_deliveries (id, merchant_id, endpoint_id, event_id, event_type,"
            " payload, status, attempts, attempt_budget, next_attempt_us, created_at, created_us)"
            " VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?)",
            (
                delivery_id,
                merchant_id,
                endpoint_id,
                event_id,
                event_type,
                payload,
                ATTEMPTS_PER_SEND,
                to_micros(now),
                iso(now),
                to_micros(now),
            ),
        )
        created.append(delivery_id)
    if created:
        webhook_queue.queued(conn)
    return created
