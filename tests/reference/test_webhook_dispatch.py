"""The webhook sender: Standard Webhooks signing, and the dispatcher against a real receiver."""

from __future__ import annotations

import base64
import json
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime

import pytest

from conformance.reference import events, webhook_dispatch, webhook_queue, webhooks
from conformance.reference.store import Store
from conformance.reference.timestamps import iso
from conformance.reference.webhook_dispatch import WebhookDispatcher, sign, verify
from tests.reference.webhook_receiver import HostileReceiver, WebhookReceiver

# The published example of the Standard Webhooks specification.
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TIMESTAMP = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_signing_matches_the_standard_webhooks_example() -> None:
    assert sign(SPEC_SECRET, SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY) == SPEC_SIGNATURE


def spec_headers(
    signature: str = SPEC_SIGNATURE, timestamp: int = SPEC_TIMESTAMP
) -> dict[str, str]:
    return {
        "webhook-id": SPEC_ID,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature,
    }


def test_verify_accepts_the_example_and_any_matching_signature_of_a_list() -> None:
    assert verify(SPEC_SECRET, spec_headers(), SPEC_BODY, now=SPEC_TIMESTAMP)
    listed = f"v1,bm90LWl0 {SPEC_SIGNATURE}"
    assert verify(SPEC_SECRET, spec_headers(listed), SPEC_BODY, now=SPEC_TIMESTAMP + 10)


@pytest.mark.parametrize(
    ("headers", "body", "now"),
    [
        (spec_headers(), b'{"test": 2432232315}', SPEC_TIMESTAMP),
        (spec_headers("v2," + SPEC_SIGNATURE[3:]), SPEC_BODY, SPEC_TIMESTAMP),
        (spec_headers(), SPEC_BODY, SPEC_TIMESTAMP + 301),
        (spec_headers(timestamp=SPEC_TIMESTAMP + 1), SPEC_BODY, SPEC_TIMESTAMP),
        ({"webhook-id": SPEC_ID}, SPEC_BODY, SPEC_TIMESTAMP),
    ],
    ids=["body-changed", "wrong-version", "too-old", "timestamp-changed", "headers-missing"],
)
def test_verify_refuses_anything_else(headers: dict[str, str], body: bytes, now: int) -> None:
    assert not verify(SPEC_SECRET, headers, body, now=now)


def test_the_key_is_the_decoded_secret_and_bad_secrets_are_refused() -> None:
    assert webhook_dispatch.secret_key(SPEC_SECRET) == base64.b64decode(SPEC_SECRET[6:])
    for bad in ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_not base64!"):
        with pytest.raises(ValueError):
            webhook_dispatch.secret_key(bad)


def test_new_secrets_are_whsec_and_32_random_bytes() -> None:
    secrets = {webhooks.new_secret() for _ in range(50)}
    assert len(secrets) == 50
    for secret in secrets:
        assert secret.startswith("whsec_")
        assert len(base64.b64decode(secret[6:], validate=True)) == 32


# ------------------------------------------------------------------ the dispatcher thread
NOW = datetime.now(UTC).replace(microsecond=0)  # deliveries are due from their event time


@pytest.fixture
def store() -> Iterator[Store]:
    opened = Store(None)
    opened.apply_schema(events.SCHEMA + webhooks.SCHEMA + webhook_dispatch.SCHEMA)
    yield opened
    opened.close()


def add_endpoint(conn: sqlite3.Connection, url: str, event_types: list[str]) -> str:
    secret = webhooks.new_secret()
    conn.execute(
        "INSERT INTO webhook_endpoints (merchant_id, id, url, event_types, active, secret,"
        " created_at, created_us, updated_at) VALUES ('m_alpha', 'ep', ?, ?, 1, ?, '', 0, '')",
        (url, json.dumps(event_types), secret),
    )
    return secret


def delivery_rows(store: Store) -> list[tuple[str, str, int]]:
    with store.transaction() as conn:
        rows = conn.execute(
            "SELECT id, status, attempts FROM webhook_deliveries ORDER BY created_us"
        ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def wait_for_status(store: Store, status: str, timeout: float = 10.0) -> tuple[str, str, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = delivery_rows(store)
        if rows and rows[0][1] == status:
            return rows[0]
        time.sleep(0.02)
    raise AssertionError(f"delivery never became {status}: {delivery_rows(store)}")


def test_emit_creates_deliveries_only_for_subscribed_endpoints(store: Store) -> None:
    with store.transaction() as conn:
        add_endpoint(conn, "https://example.com/hooks", ["payment.created"])
        created = events.emit(conn, "m_alpha", "payment.created", {"id": "pay_1"}, NOW)
        ignored = events.emit(conn, "m_alpha", "payment.canceled", {"id": "pay_1"}, NOW)
        other = events.emit(conn, "m_beta", "payment.created", {"id": "pay_2"}, NOW)
    assert len(created) == 1 and ignored == [] and other == []
    assert delivery_rows(store) == [(created[0], "pending", 0)]


def test_a_delivery_arrives_signed_with_the_endpoint_secret(store: Store) -> None:
    with WebhookReceiver() as receiver:
        with store.transaction() as conn:
            secret = add_endpoint(conn, receiver.url, ["payment.created"])
            (delivery_id,) = events.emit(conn, "m_alpha", "payment.created", {"id": "p"}, NOW)
        dispatcher = WebhookDispatcher(store.transaction)
        dispatcher.start()
        try:
            (received,) = receiver.wait_for(lambda got: len(got) == 1)
            assert wait_for_status(store, "succeeded") == (delivery_id, "succeeded", 1)
        finally:
            dispatcher.stop()
    assert received.headers["webhook-id"] == delivery_id
    assert received.headers["content-type"] == "application/json"
    assert abs(int(received.headers["webhook-timestamp"]) - time.time()) < 30
    assert verify(secret, received.headers, received.body)
    body = json.loads(received.body)
    assert body["type"] == "payment.created" and body["data"] == {"id": "p"}
    assert body["timestamp"] == iso(NOW) and body["id"].startswith("evt_")


def test_failed_attempts_are_retried_until_one_succeeds(store: Store) -> None:
    with WebhookReceiver(statuses=[500, 503]) as receiver:
        with store.transaction() as conn:
            add_endpoint(conn, receiver.url, ["payment.created"])
            events.emit(conn, "m_alpha", "payment.created", {}, NOW)
        dispatcher = WebhookDispatcher(store.transaction)
        dispatcher.start()
        try:
            _, _, attempts = wait_for_status(store, "succeeded")
        finally:
            dispatcher.stop()
        ids = {r.headers["webhook-id"] for r in receiver.received}
    assert attempts == 3 and len(receiver.received) == 3 and len(ids) == 1


def test_a_delivery_fails_once_its_attempts_are_spent(store: Store) -> None:
    with WebhookReceiver(statuses=[500] * 10) as receiver:
        with store.transaction() as conn:
            add_endpoint(conn, receiver.url, ["payment.created"])
            events.emit(conn, "m_alpha", "payment.created", {}, NOW)
        dispatcher = WebhookDispatcher(store.transaction)
        dispatcher.start()
        try:
            _, _, attempts = wait_for_status(store, "failed")
        finally:
            dispatcher.stop()
    assert attempts == events.ATTEMPTS_PER_SEND == len(receiver.received)


def test_an_unreachable_url_fails_without_hanging(store: Store) -> None:
    with WebhookReceiver() as receiver:
        closed_url = receiver.url
    with store.transaction() as conn:
        add_endpoint(conn, closed_url, ["payment.created"])
        events.emit(conn, "m_alpha", "payment.created", {}, NOW)
    dispatcher = WebhookDispatcher(store.transaction, timeout=1.0)
    dispatcher.start()
    try:
        _, _, attempts = wait_for_status(store, "failed")
    finally:
        dispatcher.stop()
    assert attempts == events.ATTEMPTS_PER_SEND


def test_run_once_sends_only_what_is_due(store: Store) -> None:
    with WebhookReceiver() as receiver:
        with store.transaction() as conn:
            add_endpoint(conn, receiver.url, ["payment.created"])
            events.emit(conn, "m_alpha", "payment.created", {}, NOW)
        dispatcher = WebhookDispatcher(store.transaction)
        assert dispatcher.run_once() == 1
        assert dispatcher.run_once() == 0
        assert len(receiver.received) == 1
    assert delivery_rows(store)[0][1:] == ("succeeded", 1)


def test_the_signature_faults_sign_something_receivers_reject(store: Store) -> None:
    for fault in ("webhook-signature-over-body-only", "webhook-signature-key-not-decoded"):
        with WebhookReceiver() as receiver:
            with store.transaction() as conn:
                conn.execute("DELETE FROM webhook_endpoints")
                secret = add_endpoint(conn, receiver.url, ["payment.created"])
                events.emit(conn, "m_alpha", "payment.created", {}, NOW)
            WebhookDispatcher(store.transaction, faults=frozenset({fault})).run_once()
            (received,) = receiver.received
        assert not verify(secret, received.headers, received.body), fault


def test_stop_returns_promptly(store: Store) -> None:
    dispatcher = WebhookDispatcher(store.transaction)
    dispatcher.start()
    started = time.monotonic()
    dispatcher.stop()
    assert time.monotonic() - started < 1.0


# ------------------------------------------------------------------ hostile receivers (issue 8)
def add_merchant_endpoint(conn: sqlite3.Connection, merchant: str, endpoint: str, url: str) -> None:
    conn.execute(
        "INSERT INTO webhook_endpoints (merchant_id, id, url, event_types, active, secret,"
        " created_at, created_us, updated_at) VALUES (?, ?, ?, '[\"payment.created\"]', 1, ?,"
        " '', 0, '')",
        (merchant, endpoint, url, webhooks.new_secret()),
    )


def attempt_rows(store: Store) -> list[tuple[str, int, int | None]]:
    with store.transaction() as conn:
        rows = conn.execute(
            "SELECT status, attempts, last_response_status FROM webhook_deliveries"
        ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def test_a_huge_answer_is_not_read_beyond_its_status_line(store: Store) -> None:
    huge = 64 * 1024 * 1024
    with HostileReceiver("huge", huge_bytes=huge) as receiver:
        with store.transaction() as conn:
            add_endpoint(conn, receiver.url(), ["payment.created"])
            events.emit(conn, "m_alpha", "payment.created", {}, NOW)
        assert WebhookDispatcher(store.transaction).run_once() == 1
        # The dispatcher hung up after the status line: the receiver's sends fail soon after,
        # once the little the kernel buffers is full. Reading the body would take all 64 MiB.
        receiver.wait_for(lambda r: r.ended == 1)
    assert attempt_rows(store) == [("succeeded", 1, 200)]
    assert receiver.sent < 8 * 1024 * 1024, receiver.sent


def test_a_trickled_status_line_fails_the_attempt_at_its_deadline(store: Store) -> None:
    # One byte every 0.1 s: no single read waits long, so only a deadline for the whole attempt
    # (connect, send, status line) ends it.
    with HostileReceiver("trickle", interval=0.1) as receiver:
        with store.transaction() as conn:
            add_endpoint(conn, receiver.url(), ["payment.created"])
            events.emit(conn, "m_alpha", "payment.created", {}, NOW)
        dispatcher = WebhookDispatcher(store.transaction, timeout=0.5)
        attempt = threading.Thread(target=dispatcher.run_once, daemon=True)
        attempt.start()
        attempt.join(timeout=30)  # 60 times the deadline: only a missing deadline gets here
        assert not attempt.is_alive(), "the attempt outlived its deadline"
        receiver.wait_for(lambda r: r.ended == 1)
    assert attempt_rows(store) == [("pending", 1, None)]  # a failed attempt, retried later


def test_one_merchants_trickling_receivers_do_not_starve_another_merchant(store: Store) -> None:
    # Merchant A has more trickling endpoints than the dispatcher has slots (16) and than one
    # claim reads (32), all due before merchant B's single delivery to a healthy receiver.
    with HostileReceiver("trickle", interval=1.0) as trickle, WebhookReceiver() as healthy:
        with store.transaction() as conn:
            for n in range(40):
                add_merchant_endpoint(conn, "m_alpha", f"ep_{n}", trickle.url(f"/a/{n}"))
                events.emit(conn, "m_alpha", "payment.created", {"n": n}, NOW)
            add_merchant_endpoint(conn, "m_beta", "ep_b", healthy.url)
        dispatcher = WebhookDispatcher(store.transaction, timeout=120.0)
        dispatcher.start()
        try:
            trickle.wait_for(lambda r: r.connections >= 1)
            with store.transaction() as conn:
                events.emit(conn, "m_beta", "payment.created", {"merchant": "beta"}, NOW)
            (received,) = healthy.wait_for(lambda got: len(got) == 1, timeout=20.0)
            assert json.loads(received.body)["data"] == {"merchant": "beta"}
            assert trickle.max_open <= webhook_dispatch.MAX_PER_MERCHANT
        finally:
            trickle.__exit__(None, None, None)  # ends A's attempts, so stop() need not wait
            dispatcher.stop()


# ------------------------------------------------------ the backlog of earlier runs (issue 16)
def failures_in_a_row(store: Store) -> dict[str, int]:
    with store.transaction() as conn:
        rows = conn.execute("SELECT endpoint_id, failures FROM webhook_endpoint_health").fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def test_dead_endpoints_of_earlier_runs_do_not_delay_a_live_one(store: Store) -> None:
    # A long-lived server: earlier runs left 40 endpoints whose receivers never answer, each of
    # whose deliveries failed every try. A new run registers a live endpoint; its event goes to
    # all 41. Before the fix the live delivery waited behind five rounds of timed-out attempts
    # (8 per merchant at once): 15.1 s with a 3 s deadline; now it goes first (4 ms).
    dead = 40
    with HostileReceiver("trickle", interval=1.0) as silent, WebhookReceiver() as live:
        with store.transaction() as conn:
            for n in range(dead):
                add_merchant_endpoint(conn, "m_alpha", f"ep_dead_{n:02}", silent.url(f"/{n}"))
            events.emit(conn, "m_alpha", "payment.created", {"run": 1}, NOW)
        earlier = WebhookDispatcher(store.transaction, timeout=0.05)
        earlier.start()
        try:
            deadline = time.monotonic() + 60
            while any(status != "failed" for status, _, _ in attempt_rows(store)):
                assert time.monotonic() < deadline, attempt_rows(store)
                time.sleep(0.05)
        finally:
            earlier.stop()
        assert set(failures_in_a_row(store).values()) == {events.ATTEMPTS_PER_SEND}
        silent.wait_for(lambda r: r.ended == r.connections)
        silent.forget_max_open()

        with store.transaction() as conn:
            add_merchant_endpoint(conn, "m_alpha", "ep_live", live.url)
            emitted = events.emit(conn, "m_alpha", "payment.created", {"run": 2}, NOW)
        assert len(emitted) == dead + 1
        dispatcher = WebhookDispatcher(store.transaction, timeout=3.0)
        started = time.monotonic()
        dispatcher.start()
        try:
            (received,) = live.wait_for(lambda got: len(got) == 1, timeout=30.0)
            waited = time.monotonic() - started
            assert json.loads(received.body)["data"] == {"run": 2}
            assert waited < 1.5, f"the live delivery waited {waited:.1f} s"
            # the dead endpoints are still tried, a few at a time
            silent.wait_for(lambda r: r.connections >= dead + 2)
            assert silent.max_open <= webhook_dispatch.MAX_FAILING_IN_FLIGHT
        finally:
            silent.__exit__(None, None, None)  # ends the attempts, so stop() need not wait
            dispatcher.stop()


def test_an_endpoint_that_answers_again_is_no_longer_failing(store: Store) -> None:
    with WebhookReceiver(statuses=[500] * 3) as receiver:
        with store.transaction() as conn:
            add_endpoint(conn, receiver.url, ["payment.created"])
            events.emit(conn, "m_alpha", "payment.created", {}, NOW)
        dispatcher = WebhookDispatcher(store.transaction)
        for _ in range(events.ATTEMPTS_PER_SEND):
            with store.transaction() as conn:  # every retry due now
                conn.execute("UPDATE webhook_deliveries SET next_attempt_us = 0")
            dispatcher.run_once()
        assert failures_in_a_row(store) == {"ep": webhook_queue.FAILING_AFTER}
        with store.transaction() as conn:
            events.emit(conn, "m_alpha", "payment.created", {}, NOW)
        assert dispatcher.run_once() == 1  # a failing endpoint's delivery is still sent
        assert failures_in_a_row(store) == {}
    assert [status for status, _, _ in attempt_rows(store)].count("succeeded") == 1


# ------------------------------------------------------------------ names and redirects (issue 17)
@pytest.fixture
def slow_resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """``getaddrinfo`` that takes 10 s (or until the event is set) for names under ``.slow.test``,
    then answers 127.0.0.1; other names resolve as usual."""
    real = socket.getaddrinfo
    release = threading.Event()

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if isinstance(host, str) and host.endswith(".slow.test"):
            release.wait(10.0)
            host = "127.0.0.1"
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield release
    release.set()  # the lookups the test left behind end now


def test_a_slow_name_lookup_fails_the_attempt_at_its_deadline(
    store: Store, slow_resolver: threading.Event
) -> None:
    with WebhookReceiver() as receiver:
        url = receiver.url.replace("127.0.0.1", "hooks.slow.test")
        with store.transaction() as conn:
            add_endpoint(conn, url, ["payment.created"])
            events.emit(conn, "m_alpha", "payment.created", {}, NOW)
        started = time.monotonic()
        assert WebhookDispatcher(store.transaction, timeout=0.5).run_once() == 1
        assert time.monotonic() - started < 3.0  # the lookup alone takes 10 s
        assert receiver.received == []
    assert attempt_rows(store) == [("pending", 1, None)]  # a failed attempt, retried later


def test_the_lookup_counts_against_the_same_deadline_as_the_rest(
    slow_resolver: threading.Event,
) -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        webhook_dispatch.post_for_status("http://hooks.slow.test:9/h", b"{}", {}, timeout=0.3)
    assert time.monotonic() - started < 2.0


def test_a_name_is_looked_up_and_each_of_its_addresses_tried(store: Store) -> None:
    # localhost may be ::1 first: the receiver listens on 127.0.0.1 only
    with WebhookReceiver() as receiver:
        with store.transaction() as conn:
            add_endpoint(conn, receiver.url.replace("127.0.0.1", "localhost"), ["payment.created"])
            events.emit(conn, "m_alpha", "payment.created", {}, NOW)
        assert WebhookDispatcher(store.transaction).run_once() == 1
        (received,) = receiver.received
    assert received.headers["host"].startswith("localhost:")
    assert attempt_rows(store) == [("succeeded", 1, 200)]


def test_a_redirect_is_a_failed_attempt_and_is_never_followed(store: Store) -> None:
    with WebhookReceiver() as elsewhere, WebhookReceiver([307, 308, 302], elsewhere.url) as hop:
        with store.transaction() as conn:
            add_endpoint(conn, hop.url, ["payment.created"])
            events.emit(conn, "m_alpha", "payment.created", {}, NOW)
        dispatcher = WebhookDispatcher(store.transaction)
        for status in (307, 308):
            assert dispatcher.run_once() == 1
            assert attempt_rows(store) == [("pending", len(hop.received), status)]
            with store.transaction() as conn:  # the retry due now
                conn.execute("UPDATE webhook_deliveries SET next_attempt_us = 0")
        assert dispatcher.run_once() == 1
        assert elsewhere.received == []  # nothing went where the Location pointed
    assert attempt_rows(store) == [("failed", events.ATTEMPTS_PER_SEND, 302)]


# ------------------------------------------- a backlog that costs no more than it holds (issue 28)
@contextmanager
def fresh_store() -> Iterator[Store]:
    opened = Store(None)
    opened.apply_schema(events.SCHEMA + webhooks.SCHEMA + webhook_dispatch.SCHEMA)
    try:
        yield opened
    finally:
        opened.close()


def dead_backlog(store: Store, deliveries: int, *, due_in: float = 0.0) -> None:
    """``deliveries`` to 10 failing endpoints whose receiver is gone, due ``due_in`` s from now."""
    with WebhookReceiver() as gone:
        closed_url = gone.url
    with store.transaction() as conn:
        for n in range(10):
            add_merchant_endpoint(conn, "m_alpha", f"ep_dead_{n}", closed_url)
            conn.execute(
                "INSERT INTO webhook_endpoint_health VALUES ('m_alpha', ?, ?)",
                (f"ep_dead_{n}", webhook_queue.FAILING_AFTER + n),
            )
        for _ in range(deliveries // 10):
            events.emit(conn, "m_alpha", "payment.created", {}, NOW)
        due_us = int((time.time() + due_in) * 1_000_000)
        conn.execute("UPDATE webhook_deliveries SET next_attempt_us = ?", (due_us,))


def steps_per_attempt(backlog: int) -> float:
    """The SQLite virtual-machine instructions (in hundreds) that one round of the dispatcher
    runs on a store holding ``backlog`` deliveries to failing endpoints, per attempt it makes."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0  # go on

    with fresh_store() as store:
        dead_backlog(store, backlog)
        dispatcher = WebhookDispatcher(store.transaction, timeout=1.0)
        with store.transaction() as conn:
            conn.set_progress_handler(count, 100)
        attempted = dispatcher.run_once()
    assert attempted > 0
    return steps / attempted


def test_each_attempt_costs_the_database_the_same_whatever_the_backlog() -> None:
    # Each claim used to read and sort every due delivery, and the dispatcher claims again after
    # every attempt: an attempt from a backlog of 2,000 cost 16 times one from a backlog of 100
    # (a long-lived server drained 1,200 in 47 s, 25 s of CPU, the store's lock held by the sort).
    small, large = steps_per_attempt(100), steps_per_attempt(2000)
    assert large < 1.5 * small, (small, large)


def counting_reads(
    store: Store,
) -> tuple[Callable[[], AbstractContextManager[sqlite3.Connection]], list[float]]:
    """The store's transactions, each one's start noted."""
    started: list[float] = []

    @contextmanager
    def transaction() -> Iterator[sqlite3.Connection]:
        started.append(time.monotonic())
        with store.transaction() as conn:
            yield conn

    return transaction, started


def test_an_idle_dispatcher_does_not_read_the_table_in_a_loop(store: Store) -> None:
    # 300 deliveries to failing endpoints, none due for a minute: nothing to do. The dispatcher
    # read the table every 0.1 s (15 times in 1.5 s); now it sleeps until a delivery falls due
    # or is queued, and polls once a second for anything else.
    dead_backlog(store, 300, due_in=60.0)
    transaction, reads = counting_reads(store)
    dispatcher = WebhookDispatcher(transaction)
    dispatcher.start()
    try:
        time.sleep(1.5)
    finally:
        dispatcher.stop()
    assert len(reads) <= 4, f"{len(reads)} transactions in 1.5 s"


def test_a_sleeping_dispatcher_wakes_for_a_queued_delivery_and_for_its_retry(
    store: Store,
) -> None:
    # It polls only once a minute here: queuing the delivery wakes it, and it sleeps only until
    # the retry falls due.
    with WebhookReceiver(statuses=[500]) as receiver:
        with store.transaction() as conn:
            add_endpoint(conn, receiver.url, ["payment.created"])
        dispatcher = WebhookDispatcher(store.transaction, poll_interval=60.0)
        dispatcher.start()
        try:
            time.sleep(0.2)  # its first look found nothing: asleep
            with store.transaction() as conn:
                events.emit(conn, "m_alpha", "payment.created", {}, NOW)
            receiver.wait_for(lambda got: len(got) == 2, timeout=10.0)
            assert wait_for_status(store, "succeeded")[1:] == ("succeeded", 2)
        finally:
            dispatcher.stop()
