"""The suite's webhook receiver: it records every request and answers per path."""

from __future__ import annotations

import threading

import httpx
import pytest

from conformance.suite.webhooks.receiver import (
    ReceiverOptionError,
    WebhookReceiver,
    bind_address,
    check_public_url,
    is_loopback,
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


def test_public_urls_and_loopback_hosts() -> None:
    assert check_public_url("https://h.example.test/x/") == "https://h.example.test/x"
    with pytest.raises(ReceiverOptionError):
        check_public_url("ftp://h.example.test")
    assert all(is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", "a.localhost"))
    assert not any(is_loopback(h) for h in ("10.0.0.1", "localhost.example.test", "example"))


def test_a_busy_port_is_an_os_error() -> None:
    with WebhookReceiver() as first:
        port = int(first.public_url.rsplit(":", 1)[1])
        with pytest.raises(OSError):
            WebhookReceiver("127.0.0.1", port)
