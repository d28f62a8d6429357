"""ReferenceServer: lifecycle, clean shutdown, and a database that survives restarts."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

from conformance.core.profile import Profile
from conformance.reference.server import ReferenceServer, ServerStartError
from tests.reference.factories import create_payment, create_payout, payment_body
from tests.reference.signed_client import SignedClient


def test_start_answers_at_once_and_stop_leaves_no_thread(profile: Profile) -> None:
    before = set(threading.enumerate())
    ReferenceServer(profile=profile).start().stop()  # warm imports and compiled validators
    started = time.perf_counter()
    server = ReferenceServer(profile=profile).start()
    elapsed = time.perf_counter() - started
    try:
        assert server.base_url.startswith("http://127.0.0.1:")
        assert httpx.get(server.base_url + "/v1/payments").status_code == 401
    finally:
        server.stop()
    server.stop()  # idempotent
    assert elapsed < 0.2
    time.sleep(0.05)
    leaked = [t for t in set(threading.enumerate()) - before if t.is_alive()]
    assert leaked == []
    with pytest.raises(RuntimeError):
        _ = server.base_url


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
