"""The webhook sender: a background thread that POSTs pending deliveries, signed.

Requests follow Standard Webhooks: headers ``webhook-id`` (the delivery id),
``webhook-timestamp`` (Unix seconds) and ``webhook-signature`` = ``v1,`` + base64 of
HMAC-SHA256 over ``"{id}.{timestamp}.{body}"``, keyed with the base64-decoded part of the
endpoint secret after ``whsec_``; or as the profile's ``[webhooks.signing]`` says
(``core.webhook_scheme``). A 2xx answer marks the delivery ``succeeded``; anything else
(an error status, a refused connection, a timeout) is retried after a short backoff until the
attempt budget is spent, then it is ``failed``. The secret and url are read at send time, so a
rotation applies to every later attempt.

A receiver is the merchant's code, so it may be hostile: only the status line of its answer is
read (never more than ``MAX_ANSWER_BYTES``) before the connection is closed, one deadline bounds
the whole attempt (looking up the name, connecting, TLS, sending, the status line), a redirect
is a failed attempt and never followed, and one merchant's deliveries hold
at most ``MAX_PER_MERCHANT`` of the ``max_concurrent`` slots, so its slow receivers cannot
starve the other merchants.

A long-lived server keeps the endpoints of merchants' earlier work, and their receivers may be
gone (a sandbox shared by many test runs). An endpoint whose last ``FAILING_AFTER`` attempts all
failed is *failing* (``webhook_endpoint_health`` counts its failures in a row; a 2xx resets it):
its deliveries are claimed after every other due delivery, the ones that failed least first, and
at most ``MAX_FAILING_IN_FLIGHT`` of them are in flight at once. Among the others, first
attempts go before retries. So dead receivers never hold the slots that deliveries to live ones
need, while their own deliveries are still tried, each within its attempt budget. What a claim
reads, at a cost that does not grow with that backlog, and the order it sends in:
``webhook_queue``. Between claims the dispatcher sleeps until a delivery is queued or falls due.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import json
import logging
import re
import socket
import sqlite3
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from conformance.core.webhook_scheme import KEY_UTF8, SEPARATE, STANDARD, WebhookScheme
from conformance.reference import webhook_queue
from conformance.reference.config import ServerConfig
from conformance.reference.store import Store
from conformance.reference.webhook_queue import DueReader, send_order

SECRET_PREFIX = "whsec_"
STANDARD_SCHEME = WebhookScheme.of(STANDARD, None)
SIGNATURE_VERSION = "v1"
BACKOFF_SECS = (0.2, 0.5, 1.0, 2.0)
CLAIM_BATCH = 32  # deliveries claimed per round, at most
MAX_PER_MERCHANT = 8  # of one merchant in flight at once: half the default 16 slots
MAX_ANSWER_BYTES = 4096  # read of a receiver's answer, at most: room for its status line
MAX_FAILING_IN_FLIGHT = 2  # deliveries to failing endpoints in flight at once, all merchants
# Failing endpoints a claim reads, and due deliveries of each: those in flight and as many again.
FAILING_CANDIDATES = 2 * MAX_FAILING_IN_FLIGHT
# The longest wait between claims: every queued delivery wakes the dispatcher (webhook_queue),
# and it sleeps only until the next retry falls due. The poll catches what neither announces.
POLL_SECS = 1.0
# Name lookups running at once, those that outlived their attempt included (see ``_resolve``).
MAX_LOOKUPS = 16

SCHEMA = """
CREATE TABLE IF NOT EXISTS webhook_endpoint_health (
    merchant_id TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    failures INTEGER NOT NULL,
    PRIMARY KEY (merchant_id, endpoint_id)
);
-- a claim's reads (webhook_queue): the failing endpoints, those that failed least first, and
-- the due deliveries of one endpoint
CREATE INDEX IF NOT EXISTS webhook_endpoint_health_by_failures
    ON webhook_endpoint_health (failures);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_endpoint
    ON webhook_deliveries (merchant_id, endpoint_id, status, next_attempt_us, created_us);
"""

log = logging.getLogger(__name__)

Transaction = Callable[[], AbstractContextManager[sqlite3.Connection]]


def secret_key(secret: str, prefix: str = SECRET_PREFIX) -> bytes:
    """The HMAC key of a secret (``whsec_`` or the profile's prefix): its base64 part, decoded."""
    if not secret.startswith(prefix):
        raise ValueError(f"a webhook secret starts with {prefix}")
    try:
        return base64.b64decode(secret[len(prefix) :], validate=True)
    except binascii.Error:
        raise ValueError(f"the part of a webhook secret after {prefix} is not base64") from None


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


def _faulty_sign(
    faults: frozenset[str],
    secret: str,
    message_id: str,
    ts: int,
    body: bytes,
    scheme: WebhookScheme = STANDARD_SCHEME,
    prefix: str = SECRET_PREFIX,
) -> dict[str, str]:
    """The headers that sign a delivery as ``scheme`` says (``sign`` for Standard Webhooks),
    but for the signing faults switched on."""
    content = scheme.content(message_id, str(ts), body)
    if "webhook-signature-over-body-only" in faults:
        content = body
    decoded = scheme.key != KEY_UTF8
    if "webhook-signature-key-not-decoded" in faults:  # the key read the other way
        decoded = not decoded
    key = secret_key(secret, prefix) if decoded else secret.encode()
    digest = hmac.new(key, content, getattr(hashlib, scheme.algorithm)).digest()
    value = digest.hex() if scheme.encoding == "hex" else base64.b64encode(digest).decode()
    headers = {scheme.id_header: message_id}
    if scheme.format == SEPARATE:
        headers[scheme.timestamp_header] = str(ts)
    headers[scheme.signature_header] = scheme.header_value(str(ts), [value])
    return headers


# ------------------------------------------------------------------------- one attempt
_STATUS_LINE = re.compile(rb"HTTP/1\.[01] ([0-9]{3})(?:[ \t][^\r\n]*)?\r?\n")
_END_OF_HEAD = re.compile(rb"\r?\n\r?\n")
_UNSAFE_IN_HEAD = re.compile(r"[^\x21-\x7e]")  # a request line or Host: visible ASCII only


@cache
def _tls() -> ssl.SSLContext:
    """One context for every HTTPS attempt (building one loads the CA bundle: ~0.1 s)."""
    return httpx.create_ssl_context(trust_env=False)


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self._at = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left for the next socket operation; TimeoutError once there are none."""
        left = self._at - time.monotonic()
        if left <= 0:
            raise TimeoutError("the delivery attempt ran out of time")
        return left


def post_for_status(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> int:
    """POST ``body`` to ``url`` (HTTP/1.1, ``Connection: close``) and return the answer's status.

    Only the status line is read, then the connection is closed: the rest of the answer, however
    large, is never read. ``timeout`` bounds the whole attempt, so a receiver that trickles its
    answer a byte at a time cannot hold it longer. Redirects are not followed (a 3xx is not a
    success). Raises OSError, ValueError or TimeoutError when no status comes back.
    """
    deadline = _Deadline(timeout)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an http(s) URL")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host = parts.netloc.rpartition("@")[2]
    if _UNSAFE_IN_HEAD.search(target + host):
        raise ValueError("the URL has characters a request line cannot carry")
    head = [f"POST {target} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}"]
    head.append("Connection: close")
    if parts.username is not None:  # credentials in the URL: Basic, as HTTP clients do
        userinfo = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        head.append("Authorization: Basic " + base64.b64encode(userinfo.encode()).decode())
    head += [f"{name}: {value}" for name, value in headers.items()]
    request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
    sock = _connect(_resolve(parts.hostname, port, deadline), deadline)
    try:
        if parts.scheme == "https":
            sock.settimeout(deadline.left())  # the handshake as a whole
            sock = _tls().wrap_socket(sock, server_hostname=parts.hostname)
        sock.settimeout(deadline.left())  # sendall as a whole
        sock.sendall(request)
        return _read_status(sock, deadline)
    finally:
        sock.close()


_lookups = threading.BoundedSemaphore(MAX_LOOKUPS)
_Address = tuple[int, int, int, str, Any]  # getaddrinfo's: family, type, proto, name, address


def _resolve(host: str, port: int, deadline: _Deadline) -> Sequence[_Address]:
    """The addresses of ``host`` within the attempt's deadline (``getaddrinfo`` has no timeout
    of its own, and a resolver may take many seconds): an IP address at once, a name looked up
    in a thread of its own. A lookup that outlives its attempt ends in that thread, unwaited
    for; at most ``MAX_LOOKUPS`` run at once, so a stalled resolver holds no more threads."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    if not _lookups.acquire(timeout=deadline.left()):
        raise TimeoutError(f"no lookup of {host} could start before the attempt's deadline")
    found: list[_Address] = []
    failed: list[Exception] = []
    done = threading.Event()

    def look_up() -> None:
        try:
            found.extend(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except Exception as exc:  # gaierror, or UnicodeError for a name IDNA cannot encode
            failed.append(exc)
        finally:
            _lookups.release()
            done.set()

    threading.Thread(target=look_up, name="webhook-lookup", daemon=True).start()
    if not done.wait(deadline.left()):
        raise TimeoutError(f"looking up {host} took longer than the attempt's deadline")
    if failed:
        raise failed[0]
    return found


def _connect(addresses: Sequence[_Address], deadline: _Deadline) -> socket.socket:
    """A socket connected to the first of ``addresses`` that accepts, as
    ``socket.create_connection`` does, within the deadline."""
    error: OSError = OSError("the name has no address")
    for family, kind, proto, _, address in addresses:
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(deadline.left())
            sock.connect(address)
            return sock
        except OSError as exc:  # TimeoutError too: then every later address times out at once
            sock.close()
            error = exc
    raise error


def _read_status(sock: socket.socket, deadline: _Deadline) -> int:
    """The status of the final answer (interim 1xx answers skipped), from its first bytes."""
    data = b""
    read = 0
    while True:
        line = _STATUS_LINE.match(data)
        if line is not None:
            status = int(line.group(1))
            if not 100 <= status < 200:
                return status
            end = _END_OF_HEAD.search(data, line.end() - 2)
            if end is not None:
                data = data[end.end() :]  # an interim answer: the final one follows
                continue
        elif len(data) >= 16 and not data.startswith(b"HTTP/"):
            raise ValueError("the answer does not start with an HTTP status line")
        room = MAX_ANSWER_BYTES - read
        if room <= 0:
            raise ValueError(f"no status line in the first {MAX_ANSWER_BYTES} bytes")
        sock.settimeout(deadline.left())
        chunk = sock.recv(room)
        if not chunk:
            raise ConnectionError("the receiver closed the connection without a status")
        read += len(chunk)
        data += chunk


@dataclass(frozen=True)
class DueDelivery:
    id: str
    generation: int
    url: str
    secret: str
    payload: str
    endpoint: tuple[str, str] = ("", "")  # (merchant id, endpoint id)
    failing: bool = False  # its endpoint's last FAILING_AFTER attempts failed


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
        poll_interval: float = POLL_SECS,
        timeout: float = 5.0,
        max_concurrent: int = 16,
        max_per_merchant: int = MAX_PER_MERCHANT,
        clock: Callable[[], float] = time.time,
        scheme: WebhookScheme = STANDARD_SCHEME,
        secret_prefix: str = SECRET_PREFIX,
    ) -> None:
        self._transaction = transaction
        self._faults = faults
        self._scheme = scheme  # how deliveries are signed: the profile's webhooks.signing
        self._prefix = secret_prefix  # the profile's webhooks.secret_prefix
        self._reader = DueReader(faults)
        self._poll_interval = poll_interval
        self._timeout = timeout  # for a whole attempt: connect, send, status line
        self._clock = clock
        self._slots = threading.BoundedSemaphore(max_concurrent)
        self._per_merchant = max_per_merchant
        self._busy: Counter[str] = Counter()  # deliveries in flight per merchant
        self._failing_busy = 0  # deliveries to failing endpoints in flight
        self._in_flight: set[str] = set()
        self._secrets: dict[tuple[str, str], str] = {}  # fault webhook-signs-with-cached-secret
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._look_live = True  # the next round reads the endpoints that answer, too
        self._thread: threading.Thread | None = None
        self._workers: set[threading.Thread] = set()  # deliveries in flight, one thread each

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="webhook-dispatch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop claiming and wait for the deliveries in flight (each ends within its attempt's
        deadline; ``timeout`` is only a ceiling)."""
        self._stop.set()
        self._wake.set()
        deadline = time.monotonic() + timeout
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        with self._lock:
            workers = list(self._workers)
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))

    def wake(self) -> None:
        """Look for due deliveries now rather than at the next poll."""
        with self._lock:
            self._look_live = True
        self._wake.set()

    def _run(self) -> None:
        stop_listening = self._listen()
        try:
            while not self._stop.is_set():
                wait = self._round()
                if wait is None:
                    return
                if not self._wake.wait(wait):
                    with self._lock:
                        self._look_live = True  # a retry fell due, or the poll's time came
        finally:
            stop_listening()

    def _listen(self) -> Callable[[], None]:
        """Be woken by every transaction of the store that queues a delivery attempt."""
        try:
            with self._transaction() as conn:
                return webhook_queue.on_queued(conn, self.wake)
        except (sqlite3.Error, RuntimeError):  # the store is closing: polling will do
            return lambda: None

    def _round(self) -> float | None:
        """Send what may go now. Returns the seconds to wait for the next round, None once
        stopping. A round that cannot send to failing endpoints (those have their share in
        flight) and was not asked to look at the others reads nothing."""
        self._wake.clear()  # a wake from now on ends the wait after this round
        with self._lock:
            live, self._look_live = self._look_live, False
            failing = self._failing_busy < MAX_FAILING_IN_FLIGHT
        if not live and not failing:
            return self._poll_interval
        sent = 0
        try:
            claimed, next_due_us = self._claim(live=live, failing=failing)
            for due in claimed:
                if not self._take_merchant_turn(due):
                    continue  # its merchant has enough in flight: a later round sends it
                sent += 1
                self._slots.acquire()
                if self._stop.is_set():
                    self._slots.release()
                    self._end_merchant_turn(due)
                    return None
                worker = threading.Thread(
                    target=self._deliver_and_release,
                    args=(due,),
                    name="webhook-delivery",
                    daemon=True,
                )
                with self._lock:
                    self._workers.add(worker)
                worker.start()
        except Exception:
            if self._stop.is_set():  # the store is closing under us: the server stops
                return None
            log.exception("webhook dispatcher could not read pending deliveries")
            with self._lock:
                self._look_live = True
            return self._poll_interval
        if sent >= CLAIM_BATCH:  # a full batch: more may be due already
            with self._lock:
                self._look_live |= live
            return 0.0
        if next_due_us is None:
            return self._poll_interval
        return min(self._poll_interval, max(0.0, next_due_us / 1_000_000 - self._clock()))

    # -- one round, usable without the thread (tests) -----------------------------------------
    def run_once(self) -> int:
        """Send every due delivery in this thread (up to ``CLAIM_BATCH``); returns how many
        were attempted."""
        due, _ = self._claim()
        for delivery in due:
            self._deliver(delivery)
        return len(due)

    def _claim(
        self, *, live: bool = True, failing: bool = True
    ) -> tuple[list[DueDelivery], int | None]:
        """Up to ``CLAIM_BATCH`` due deliveries not in flight, in the order to send them (none
        to a failing endpoint unless ``failing``, none to the others unless ``live``), marked
        in flight; and when the next one not due yet falls due (microseconds)."""
        now_us = int(self._clock() * 1_000_000)
        limit = FAILING_CANDIDATES if failing else 0
        with self._transaction() as conn:
            found = self._reader.candidates(conn, now_us, live=live, failing=limit)
            with self._lock:
                ordered = [c for c in send_order(found) if c.id not in self._in_flight]
            chosen = ordered[:CLAIM_BATCH]
            sendable = self._reader.sendable(conn, chosen)
            next_due_us = self._reader.next_due_us(conn, now_us)
        claimed: list[DueDelivery] = []
        for c in chosen:
            if c.rowid not in sendable:
                continue
            generation, url, secret, payload = sendable[c.rowid]
            endpoint = (c.merchant_id, c.endpoint_id)
            with self._lock:
                if c.id in self._in_flight:
                    continue
                self._in_flight.add(c.id)
            signing = self._signing_secret(endpoint, secret)
            claimed.append(
                DueDelivery(c.id, generation, url, signing, payload, endpoint, c.failing)
            )
        return claimed, next_due_us

    def _signing_secret(self, endpoint: tuple[str, str], secret: str) -> str:
        if "webhook-signs-with-cached-secret" not in self._faults:
            return secret
        with self._lock:
            return self._secrets.setdefault(endpoint, secret)

    def _take_merchant_turn(self, delivery: DueDelivery) -> bool:
        """Count ``delivery`` as in flight for its merchant, unless the merchant is at its cap,
        or it goes to a failing endpoint and those have their share (then the claim is
        dropped)."""
        with self._lock:
            merchant = delivery.endpoint[0]
            if self._busy[merchant] >= self._per_merchant or (
                delivery.failing and self._failing_busy >= MAX_FAILING_IN_FLIGHT
            ):
                self._in_flight.discard(delivery.id)
                return False
            self._busy[merchant] += 1
            self._failing_busy += delivery.failing
            return True

    def _end_merchant_turn(self, delivery: DueDelivery) -> None:
        with self._lock:
            self._in_flight.discard(delivery.id)
            merchant = delivery.endpoint[0]
            # a delivery its merchant's cap held back may go now
            self._look_live |= not delivery.failing or self._busy[merchant] >= self._per_merchant
            self._busy[merchant] -= 1
            if self._busy[merchant] <= 0:
                del self._busy[merchant]
            self._failing_busy -= delivery.failing
        self._wake.set()

    def _deliver_and_release(self, delivery: DueDelivery) -> None:
        try:
            self._deliver(delivery)
        finally:
            self._slots.release()
            self._end_merchant_turn(delivery)
            with self._lock:
                self._workers.discard(threading.current_thread())

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
            **_faulty_sign(
                self._faults,
                delivery.secret,
                message_id,
                timestamp,
                body,
                self._scheme,
                self._prefix,
            ),
        }
        try:
            return post_for_status(delivery.url, body, headers, self._timeout)
        except Exception as exc:  # whatever stops the request, the attempt failed
            log.info("webhook delivery %s: no response (%s)", delivery.id, type(exc).__name__)
            return None

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
                _count_outcome(conn, delivery.endpoint, succeeded)
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
            _count_outcome(conn, delivery.endpoint, succeeded)


def _count_outcome(conn: sqlite3.Connection, endpoint: tuple[str, str], succeeded: bool) -> None:
    """The endpoint's failures in a row: one more, or none after a success."""
    if succeeded:
        conn.execute(
            "DELETE FROM webhook_endpoint_health WHERE merchant_id = ? AND endpoint_id = ?",
            endpoint,
        )
        return
    conn.execute(
        "INSERT INTO webhook_endpoint_health (merchant_id, endpoint_id, failures)"
        " VALUES (?, ?, 1) ON CONFLICT DO UPDATE SET failures = failures + 1",
        endpoint,
    )


def start_background(store: Store, config: ServerConfig) -> Callable[[], None]:
    """The framework's hook (``app.DOMAIN_MODULES``): start the sender, return its stop."""
    dispatcher = WebhookDispatcher(
        store.transaction,
        faults=config.faults,
        scheme=config.profile.webhooks.scheme,
        secret_prefix=config.profile.webhooks.secret_prefix,
    )
    dispatcher.start()
    return dispatcher.stop
