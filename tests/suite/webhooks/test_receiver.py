"""The suite's webhook receiver: it records every request and answers per path."""

from __future__ import annotations

import socket
import threading

import httpx
import pytest

from conformance.suite.webhooks.receiver import (
    OTHER_PATHS,
    TRACKED_PATHS,
    ReceiverLimits,
    ReceiverOptionError,
    WebhookReceiver,
    bind_address,
    check_public_url,
    parse_bind,
)


def test_it_records_every_request_with_its_body_headers_and_answer() -> None:
    with WebhookReceiver() as receiver:
        receiver.answer("/failing", 500)
        ok = httpx.post(receiver.url("/ok?x=1"), content=b'{"a":1}', headers={"Webhook-Id": "m1"})
        failing = httpx.post(receiver.url("/failing"), content=b"{}")
        got = receiver.snapshot()
    assert (ok.status_code, failing.status_code) == (200, 500)
    assert [(r.method, r.path, r.answered) for r in got] == [
        ("POST", "/ok", 200),
        ("POST", "/failing", 500),
    ]
    assert got[0].body == b'{"a":1}'
    assert got[0].header("webhook-id") == "m1"
    assert got[0].at <= got[1].at


def test_a_path_can_be_told_to_answer_differently_later() -> None:
    with WebhookReceiver() as receiver:
        receiver.answer("/p", 500)
        first = httpx.post(receiver.url("/p"), content=b"{}").status_code
        receiver.answer("/p", 204)
        second = httpx.post(receiver.url("/p"), content=b"{}").status_code
    assert (first, second) == (500, 204)


def test_wait_for_returns_when_the_predicate_holds_or_the_time_is_up() -> None:
    with WebhookReceiver() as receiver:
        later = threading.Timer(0.1, lambda: httpx.post(receiver.url("/x"), content=b"{}"))
        later.start()
        held, got = receiver.wait_for(lambda got: len(got) >= 1, timeout=5.0)
        assert held and len(got) == 1
        # a predicate may read the receiver itself
        held, _ = receiver.wait_for(lambda _: len(receiver.snapshot()) >= 2, timeout=0.2)
        assert not held


def test_it_listens_on_loopback_by_default_and_names_the_public_url() -> None:
    with WebhookReceiver() as receiver:
        assert receiver.public_url.startswith("http://127.0.0.1:")
        assert receiver.public_host == "127.0.0.1"
    with WebhookReceiver(public_url="https://hooks.example.test/base") as remote:
        assert remote.url("/a") == "https://hooks.example.test/base/a"


def test_bind_addresses() -> None:
    assert parse_bind("127.0.0.1:8088") == ("127.0.0.1", 8088)
    assert parse_bind("[::1]:9000") == ("::1", 9000)
    for bad in ("8088", "host:", "host:port", ":80", "h:70000"):
        with pytest.raises(ReceiverOptionError, match="HOST:PORT"):
            parse_bind(bad)
    assert bind_address(None, None) == ("127.0.0.1", 0)
    assert bind_address("http://tunnel.example.test:8443/x", None) == ("127.0.0.1", 8443)
    assert bind_address("https://tunnel.example.test", "0.0.0.0:9000") == ("0.0.0.0", 9000)
    with pytest.raises(ReceiverOptionError, match="--webhook-bind"):
        bind_address("https://tunnel.example.test", None)


def test_public_urls_are_http_or_https_without_a_trailing_slash() -> None:
    assert check_public_url("https://h.example.test/x/") == "https://h.example.test/x"
    with pytest.raises(ReceiverOptionError):
        check_public_url("ftp://h.example.test")


def test_a_busy_port_is_an_os_error() -> None:
    with WebhookReceiver() as first:
        port = int(first.public_url.rsplit(":", 1)[1])
        with pytest.raises(OSError):
            WebhookReceiver("127.0.0.1", port)


# -- bounds: what a flooding server gets kept (issue 17, point 3) -------------------------------
SMALL = ReceiverLimits(
    body_bytes=64 * 1024, per_path=10, per_path_bytes=200 * 1024, total=25, total_bytes=400 * 1024
)


def flood(receiver: WebhookReceiver, paths: list[str], bodies: int, size: int) -> list[int]:
    """A hostile server: ``bodies`` POSTs of ``size`` bytes over ``paths``, from 4 threads."""
    answers: list[int] = []

    def send(start: int) -> None:
        with httpx.Client() as client:
            for n in range(start, bodies, 4):
                path = paths[n % len(paths)]
                answers.append(client.post(receiver.url(path), content=b"x" * size).status_code)

    threads = [threading.Thread(target=send, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_a_flood_is_kept_within_the_bounds_and_the_rest_dropped_and_counted_per_path() -> None:
    with WebhookReceiver(limits=SMALL) as receiver:
        receiver.answer("/b", 500)
        answers = flood(receiver, ["/a", "/b", "/c"], bodies=300, size=30 * 1024)
        kept = receiver.snapshot()
        counts = receiver.counts()
    assert sorted(set(answers)) == [200, 500]  # every request answered as its path says
    kept_bytes = sum(len(r.body) for r in kept)
    assert len(kept) <= SMALL.total and kept_bytes <= SMALL.total_bytes
    for path in ("/a", "/b", "/c"):
        at_path = [r for r in kept if r.path == path]
        assert 0 < len(at_path) <= SMALL.per_path
        assert sum(len(r.body) for r in at_path) <= SMALL.per_path_bytes
    assert counts.kept == len(kept) and counts.kept_bytes >= kept_bytes
    assert counts.kept + counts.dropped == 300
    by_path = {d.path: d for d in counts.drops}
    assert set(by_path) == {"/a", "/b", "/c"}
    for path, drops in by_path.items():
        assert drops.deliveries == 100 - sum(1 for r in kept if r.path == path)
        assert drops.bytes >= drops.deliveries * 30 * 1024 and drops.refused == 0
    assert counts.describe().startswith(f"webhook receiver: kept {len(kept)} requests (")
    assert f"; dropped {counts.dropped} over its bounds" in counts.describe()


def test_a_body_over_the_cap_is_refused_with_413_without_being_read() -> None:
    with WebhookReceiver(limits=SMALL) as receiver:
        host, port = receiver.public_url.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as conn:
            # a gigabyte announced, none sent: the answer must not wait for it
            conn.sendall(b"POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\n")
            answer = conn.recv(4096)
        small = httpx.post(receiver.url("/small"), content=b"{}")
        counts = receiver.counts()
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert small.status_code == 200 and [r.path for r in receiver.snapshot()] == ["/small"]
    (drops,) = counts.drops
    assert (drops.path, drops.deliveries, drops.refused) == ("/big", 1, 1)
    assert drops.bytes >= 1073741824
    assert receiver.dropped_at("/big") == drops and receiver.dropped_at("/small") is None


def test_drops_past_the_tracked_paths_are_summed_under_other_paths() -> None:
    limits = ReceiverLimits(per_path=0)  # keep nothing: every request is a drop
    with WebhookReceiver(limits=limits) as receiver, httpx.Client() as client:
        for n in range(TRACKED_PATHS + 3):
            client.post(receiver.url(f"/p{n}"), content=b"{}")
        counts = receiver.counts()
    assert len(counts.drops) == TRACKED_PATHS + 1
    assert counts.drops[-1].path == OTHER_PATHS and counts.drops[-1].deliveries == 3
    assert receiver.dropped_at("/p70") == counts.drops[-1]
    assert "and 60 more paths" in counts.describe()
