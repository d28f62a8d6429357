"""ReferenceServer: lifecycle, clean shutdown, and a database that survives restarts."""

from __future__ import annotations

import concurrent.futures
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import httpx
import pytest

from conformance.core.profile import Profile
from conformance.reference.server import ReferenceServer, ServerStartError
from tests.reference.domain_factories import put_endpoint
from tests.reference.factories import create_payment, create_payout, payment_body
from tests.reference.signed_client import SignedClient

# A ceiling for waits on a healthy machine's events: never reached unless something is broken,
# so the tests hold on a machine busy with other work.
CEILING_SECS = 120.0


# An exception that ends one of the server's threads fails the test.
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")


def new_threads_alive(before: set[threading.Thread]) -> list[threading.Thread]:
    """Threads not in ``before`` still running (``_current_frames``: Python 3.11 may report a
    running thread as not alive once a signal has interrupted a ``join`` on it)."""
    running = sys._current_frames()
    return [t for t in threading.enumerate() if t not in before and t.ident in running]


def test_start_answers_at_once_and_stop_leaves_no_thread(profile: Profile) -> None:
    before = set(threading.enumerate())
    server = ReferenceServer(profile=profile).start()
    try:
        assert server.base_url.startswith("http://127.0.0.1:")
        # start() returned: the server answers without a retry
        assert httpx.get(server.base_url + "/v1/payments").status_code == 401
    finally:
        server.stop()
    server.stop()  # idempotent
    assert new_threads_alive(before) == []
    with pytest.raises(RuntimeError):
        _ = server.base_url


class SilentReceiver:
    """A webhook receiver that reads each request and never answers: a delivery in flight."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self._held: list[socket.socket] = []
        self._closing = threading.Event()
        self.request_arrived = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="silent-receiver", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/hooks"

    def _serve(self) -> None:
        while not self._closing.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            self._held.append(conn)
            conn.settimeout(CEILING_SECS)
            if conn.recv(65536):
                self.request_arrived.set()

    def __enter__(self) -> SilentReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._thread.join(CEILING_SECS)
        for conn in self._held:
            conn.close()
        self._listener.close()


def test_stop_ends_every_thread_the_server_started_even_with_a_delivery_in_flight(
    profile: Profile,
) -> None:
    with SilentReceiver() as receiver:
        before = set(threading.enumerate())
        server = ReferenceServer(profile=profile).start()
        try:
            with SignedClient(server.base_url, profile.primary) as client:
                put_endpoint(client, receiver.url, ["payment.created"], "we_silent")
                create_payment(client)
            assert receiver.request_arrived.wait(CEILING_SECS), "no delivery was attempted"
        finally:
            server.stop()
        # stop() joined what it started: no grace period is needed here
        assert new_threads_alive(before) == []


class Interrupted(Exception):
    """What the test's signal handler raises (as Ctrl-C raises KeyboardInterrupt)."""


@pytest.fixture
def interrupt_on_sigusr1() -> Iterator[None]:
    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGUSR1, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGUSR1, previous)


def in_function(thread_id: int, name: str) -> bool:
    frame = sys._current_frames().get(thread_id)
    while frame is not None:
        if frame.f_code.co_name == name:
            return True
        frame = frame.f_back
    return False


def signal_main_thread_once_in(function: str) -> threading.Thread:
    """A thread that sends SIGUSR1 to the main thread once it runs ``function``."""
    main = threading.get_ident()

    def send() -> None:
        deadline = time.monotonic() + CEILING_SECS
        while not in_function(main, function) and time.monotonic() < deadline:
            time.sleep(0.01)
        signal.pthread_kill(main, signal.SIGUSR1)

    sender = threading.Thread(target=send, name="test-signal-sender")
    sender.start()
    return sender


def stalled_request(server: ReferenceServer) -> socket.socket:
    """A request whose body never comes: in flight until the server aborts it."""
    conn = socket.create_connection(("127.0.0.1", server.port))
    conn.sendall(
        b"POST /v1/payments HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: 100\r\n\r\n{"
    )
    return conn


@pytest.mark.usefixtures("interrupt_on_sigusr1")
def test_a_signal_during_serve_forever_does_not_close_the_store_under_uvicorn(
    profile: Profile,
) -> None:
    """Python 3.11 marks a thread finished when a signal interrupts ``Thread.join``: stop()
    then closed the socket and the database under a running uvicorn ("Invalid file
    descriptor: -1"). stop() must still wait for uvicorn, and uvicorn must still end."""
    before = set(threading.enumerate())
    server = ReferenceServer(profile=profile, shutdown_grace_secs=0.5).start()
    with stalled_request(server):
        try:
            with pytest.raises(Interrupted):
                sender = signal_main_thread_once_in("serve_forever")
                server.serve_forever()
            sender.join(CEILING_SECS)
        finally:
            server.stop()
        assert new_threads_alive(before) == []


def test_a_second_ctrl_c_during_stop_aborts_in_flight_requests_and_still_cleans_up(
    profile: Profile,
) -> None:
    """The first Ctrl-C started stop(), which waits for a request in flight; a second one
    aborts that request, stop() finishes its work, then the KeyboardInterrupt goes on."""

    def ctrl_c(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    before = set(threading.enumerate())
    server = ReferenceServer(profile=profile, shutdown_grace_secs=CEILING_SECS).start()
    database = server.store.path
    previous = signal.signal(signal.SIGUSR1, ctrl_c)
    try:
        with stalled_request(server):
            with pytest.raises(KeyboardInterrupt):
                sender = signal_main_thread_once_in("_shutdown")
                server.stop()
            sender.join(CEILING_SECS)
            # the stalled client is still there: the server aborted it
            assert new_threads_alive(before) == []
            assert not database.exists()
    finally:
        signal.signal(signal.SIGUSR1, previous)
        server.stop()


def test_temporary_database_is_removed_on_stop(profile: Profile) -> None:
    with ReferenceServer(profile=profile) as server:
        path = server.store.path
        assert path.exists()
    assert not path.exists()


def test_unknown_fault_is_rejected_before_binding(profile: Profile) -> None:
    with pytest.raises(ValueError, match="unknown fault no-such-fault"):
        ReferenceServer(profile=profile, faults=("no-such-fault",))


def test_a_port_in_use_is_a_clear_error(profile: Profile) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        with pytest.raises(ServerStartError, match=r"cannot listen on 127\.0\.0\.1"):
            ReferenceServer(profile=profile, port=port).start()


def test_restart_with_a_database_file_loses_nothing(profile: Profile, tmp_path: Path) -> None:
    db = tmp_path / "reference.sqlite3"
    key = uuid.uuid4().hex
    body = payment_body()
    nonce = uuid.uuid4().hex
    with (
        ReferenceServer(profile=profile, db_path=db) as server,
        SignedClient(server.base_url, profile.primary) as client,
    ):
        first = client.post("/v1/payments", body, idempotency_key=key)
        assert first.status_code == 201
        schedule = create_payout(client)
        client.post(f"/v1/payout-schedules/{schedule['id']}/pause")
        assert client.get("/v1/payments", nonce=nonce).status_code == 200
        listed = client.get("/v1/payments?limit=100").content
    with (
        ReferenceServer(profile=profile, db_path=db) as server,
        SignedClient(server.base_url, profile.primary) as client,
    ):
        assert client.get("/v1/payments?limit=100").content == listed
        replay = client.post("/v1/payments", body, idempotency_key=key)
        assert replay.content == first.content
        assert replay.headers["Idempotent-Replayed"] == "true"
        assert client.get("/v1/payments", nonce=nonce).status_code == 401
        again = client.post(f"/v1/payout-schedules/{schedule['id']}/pause")
        assert again.json()["status"] == "paused"
        assert create_payment(client)["id"] != first.json()["id"]
    assert db.exists()


@pytest.mark.parametrize("kind", ["directory", "not-sqlite"])
def test_an_unusable_database_is_a_clear_error(profile: Profile, tmp_path: Path, kind: str) -> None:
    db = tmp_path / "data"
    if kind == "directory":
        db.mkdir()
    else:
        db.write_bytes(b"this is not a database file, just some text" * 100)
    with pytest.raises(ServerStartError, match="cannot open the database"):
        ReferenceServer(profile=profile, db_path=db).start()


def test_a_latency_delays_every_answer_without_holding_a_thread(profile: Profile) -> None:
    with ReferenceServer(profile=profile, latency_ms=300) as server:
        url = server.base_url + "/v1/payments"
        started = time.perf_counter()
        with httpx.Client() as client:
            client.get(url)  # unauthenticated: 401, after the latency all the same
        assert time.perf_counter() - started >= 0.3
        # twenty requests at once take about one latency, not twenty: the wait is a sleep
        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            started = time.perf_counter()
            list(pool.map(lambda _: httpx.get(url), range(20)))
        assert time.perf_counter() - started < 20 * 0.3


@pytest.mark.parametrize("latency", [-1, 10_001])
def test_a_latency_out_of_range_is_refused(profile: Profile, latency: int) -> None:
    with pytest.raises(ValueError, match="latency must be 0 to 10000 ms"):
        ReferenceServer(profile=profile, latency_ms=latency)
