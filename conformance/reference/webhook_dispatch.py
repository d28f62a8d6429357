"""The webhook sender: a background thread that POSTs pending deliveries, signed.

Requests follow Standard Webhooks: headers ``webhook-id`` (the delivery id),
``webhook-timestamp`` (Unix seconds) and ``webhook-signature`` = ``v1,`` + base64 of
HMAC-SHA256 over ``"{id}.{timestamp}.{body}"``, keyed with the base64-decoded part of the
endpoint secret after ``whsec_``. A 2xx answer marks the delivery ``succeeded``; anything else
(an error status, a refused connection, a timeout) is retried after a short backoff until the
attempt budget is spent, then it is ``failed``. The secret and url are read at send time, so a
rotation applies to every later attempt.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass

import httpx

from conformance.reference.config import ServerConfig
from conformance.reference.store import Store

SECRET_PREFIX = "whsec_"
SIGNATURE_VERSION = "v1"
BACKOFF_SECS = (0.2, 0.5, 1.0, 2.0)
CLAIM_BATCH = 32  # deliveries read per round

log = logging.getLogger(__name__)

Transaction = Callable[[], AbstractContextManager[sqlite3.Connection]]


def secret_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_`` secret: its base64 part, decoded."""
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError("a webhook secret starts with whsec_")
    try:
        return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except binascii.Error:
        raise ValueError("the part of a webhook secret after whsec_ is not base64") from None


def signed_content(message_id: str, timestamp: int, body: bytes) -> bytes:
    return f"{message_id}.{timestamp}.".encode() + body


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value: ``v1,<base64 HMAC-SHA256>``."""
    digest = hmac.new(secret_key(secret), signed_content(message_id, timestamp, body), "sha256")
    return f"{SIGNATURE_VERSION},{base64.b64encode(digest.digest()).decode()}"


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    now: float | None = None,
    tolerance_secs: int = 300,
) -> bool:
    """A receiver's check: the timestamp is recent and one ``v1`` signature matches.

    ``headers`` must be case-insensitive for the three names (httpx and Starlette headers are).
    """
    message_id = headers.get("webhook-id")
    stamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not message_id or not stamp or not signatures or not stamp.isdigit():
        return False
    moment = time.time() if now is None else now
    if abs(moment - int(stamp)) > tolerance_secs:
        return False
    expected = sign(secret, message_id, int(stamp), body).split(",", 1)[1]
    for candidate in signatures.split(" "):
        version, _, value = candidate.partition(",")
        if version == SIGNATURE_VERSION and hmac.compare_digest(value, expected):
            return True
    return False


def _faulty_sign(faults: frozenset[str], secret: str, message_id: str, ts: int, body: bytes) -> str:
    if "webhook-signature-over-body-only" in faults:
        digest = hmac.new(secret_key(secret), body, hashlib.sha256).digest()
        return f"{SIGNATURE_VERSION},{base64.b64encode(digest).decode()}"
    if "webhook-signature-key-not-decoded" in faults:
        content = signed_content(message_id, ts, body)
        digest = hmac.new(secret.encode(), content, hashlib.sha256).digest()
        return f"{SIGNATURE_VERSION},{base64.b64encode(digest).decode()}"
    return sign(secret, message_id, ts, body)


@dataclass(frozen=True)
class DueDelivery:
    id: str
    generation: int
    url: str
    secret: str
    payload: str
    endpoint: tuple[str, str] = ("", "")  # (merchant id, endpoint id)


def _event_id(payload: str) -> str:
    try:
        return str(json.loads(payload)["id"])
    except (ValueError, KeyError, TypeError):
        return ""


class WebhookDispatcher:
    """Sends due deliveries from a daemon thread; ``start()`` and ``stop()`` bracket a server."""

    def __init__(
        self,
        transaction: Transaction,
        *,
        faults: frozenset[str] = frozenset(),
        poll_interval: float = 0.1,
        timeout: float = 2.0,
        max_concurrent: int = 16,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._transaction = transaction
        self._faults = faults
        self._poll_interval = poll_interval
        self._timeout = timeout
        self._clock = clock
        self._slots = threading.BoundedSemaphore(max_concurrent)
        self._in_flight: set[str] = set()
        self._secrets: dict[tuple[str, str], str] = {}  # fault webhook-signs-with-cached-secret
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        # One client for every try: a client per request costs ~0.1 s (its TLS context), which
        # under a full suite run queues deliveries for tens of seconds.
        self._http = self._client()

    def _client(self) -> httpx.Client:
        return httpx.Client(timeout=self._timeout, follow_redirects=False, trust_env=False)

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return
        if self._http.is_closed:
            self._http = self._client()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="webhook-dispatch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self._http.close()

    def wake(self) -> None:
        """Look for due deliveries now rather than at the next poll."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            claimed = 0
            try:
                for due in self._claim_due():
                    claimed += 1
                    self._slots.acquire()
                    worker = threading.Thread(
                        target=self._deliver_and_release, args=(due,), daemon=True
                    )
                    worker.start()
            except Exception:
                if self._stop.is_set():  # the store is closing under us: the server stops
                    return
                log.exception("webhook dispatcher could not read pending deliveries")
            if claimed < CLAIM_BATCH:  # a full batch: more may be due already
                self._wake.wait(self._poll_interval)
                self._wake.clear()

    # -- one round, usable without the thread (tests) -----------------------------------------
    def run_once(self) -> int:
        """Send every due delivery in this thread; returns how many were attempted."""
        due = list(self._claim_due())
        for delivery in due:
            self._deliver(delivery)
        return len(due)

    def _claim_due(self) -> Iterator[DueDelivery]:
        now_us = int(self._clock() * 1_000_000)
        due = "d.status = 'pending'"
        if "webhook-retries-after-success" in self._faults:
            due = "(d.status = 'pending' OR d.attempts < d.attempt_budget)"
        with self._transaction() as conn:
            rows = conn.execute(
                "SELECT d.id, d.generation, e.url, e.secret, d.payload, d.merchant_id,"
                " d.endpoint_id FROM webhook_deliveries d"
                " JOIN webhook_endpoints e ON e.merchant_id = d.merchant_id"
                f" AND e.id = d.endpoint_id WHERE {due} AND d.next_attempt_us <= ?"
                # Round robin over endpoints: a backlog of one endpoint (a dead receiver)
                # does not hold back the deliveries of the others.
                " ORDER BY ROW_NUMBER() OVER (PARTITION BY d.merchant_id, d.endpoint_id"
                " ORDER BY d.next_attempt_us, d.created_us), d.next_attempt_us, d.created_us"
                f" LIMIT {CLAIM_BATCH}",
                (now_us,),
            ).fetchall()
        for row in rows:
            with self._lock:
                if row[0] in self._in_flight:
                    continue
                self._in_flight.add(row[0])
            yield DueDelivery(
                str(row[0]),
                int(row[1]),
                str(row[2]),
                self._signing_secret((str(row[5]), str(row[6])), str(row[3])),
                str(row[4]),
                (str(row[5]), str(row[6])),
            )

    def _signing_secret(self, endpoint: tuple[str, str], secret: str) -> str:
        if "webhook-signs-with-cached-secret" not in self._faults:
            return secret
        with self._lock:
            return self._secrets.setdefault(endpoint, secret)

    def _deliver_and_release(self, delivery: DueDelivery) -> None:
        try:
            self._deliver(delivery)
        finally:
            self._slots.release()

    def _deliver(self, delivery: DueDelivery) -> None:
        try:
            if not self._still_due(delivery):
                return
            status = self._post(delivery)
            self._record(delivery, status)
        except (sqlite3.Error, RuntimeError):
            if not self._stop.is_set():
                log.exception("webhook dispatcher could not record delivery %s", delivery.id)
        finally:
            with self._lock:
                self._in_flight.discard(delivery.id)

    def _still_due(self, delivery: DueDelivery) -> bool:
        """Whether the claimed row is still what was read: a claim can read a row just before
        the previous attempt recorded its outcome, and must then not send it again."""
        if "webhook-retries-after-success" in self._faults:
            return True
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT status, generation FROM webhook_deliveries WHERE id = ?", (delivery.id,)
            ).fetchone()
        return row is not None and row[0] == "pending" and int(row[1]) == delivery.generation

    def _post(self, delivery: DueDelivery) -> int | None:
        """The response status, or None when no response came back."""
        body = delivery.payload.encode("utf-8")
        timestamp = int(self._clock())
        if "webhook-timestamp-milliseconds" in self._faults:
            timestamp = int(self._clock() * 1000)
        message_id = delivery.id
        if "webhook-id-is-event-id" in self._faults:
            message_id = _event_id(delivery.payload)
        headers = {
            "content-type": "application/json",
            "user-agent": "payment-conformance-reference/webhooks",
            "webhook-id": message_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": _faulty_sign(
                self._faults, delivery.secret, message_id, timestamp, body
            ),
        }
        try:
            response = self._http.post(delivery.url, content=body, headers=headers)
        except Exception as exc:  # whatever stops the request, the attempt failed
            log.info("webhook delivery %s: no response (%s)", delivery.id, type(exc).__name__)
            return None
        return response.status_code

    def _record(self, delivery: DueDelivery, status: int | None) -> None:
        succeeded = status is not None and 200 <= status < 300
        if "webhook-any-answer-succeeds" in self._faults:
            succeeded = status is not None
        now_us = int(self._clock() * 1_000_000)
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT attempts, attempt_budget, generation FROM webhook_deliveries WHERE id = ?",
                (delivery.id,),
            ).fetchone()
            if row is None:
                return
            attempts, budget, generation = int(row[0]) + 1, int(row[1]), int(row[2])
            if generation != delivery.generation:
                # A resend arrived while this attempt was in flight: it queued its own attempt.
                conn.execute(
                    "UPDATE webhook_deliveries SET attempts = ?, last_response_status = ?"
                    " WHERE id = ?",
                    (attempts, status, delivery.id),
                )
                return
            if succeeded and "webhook-retries-after-success" in self._faults:
                retry = BACKOFF_SECS[min(attempts - 1, len(BACKOFF_SECS) - 1)]
                new_status, next_us = "succeeded", now_us + int(retry * 1_000_000)
            elif succeeded:
                new_status, next_us = "succeeded", now_us
            elif attempts >= budget:
                new_status, next_us = "failed", now_us
            else:
                retry = BACKOFF_SECS[min(attempts - 1, len(BACKOFF_SECS) - 1)]
                new_status, next_us = "pending", now_us + int(retry * 1_000_000)
            conn.execute(
                "UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_us = ?,"
                " last_response_status = ? WHERE id = ?",
                (new_status, attempts, next_us, status, delivery.id),
            )


def start_background(store: Store, config: ServerConfig) -> Callable[[], None]:
    """The framework's hook (``app.DOMAIN_MODULES``): start the sender, return its stop."""
    dispatcher = WebhookDispatcher(store.transaction, faults=config.faults)
    dispatcher.start()
    return dispatcher.stop
