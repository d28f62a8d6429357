"""The suite's webhook receiver leaves no thread behind when it stops."""

from __future__ import annotations

import threading

import httpx

from conformance.suite.webhooks.receiver import WebhookReceiver


def test_stop_ends_the_receivers_server_thread() -> None:
    for _ in range(3):
        before = set(threading.enumerate())
        with WebhookReceiver() as receiver:
            assert httpx.post(receiver.url("/hooks"), content=b"{}").status_code == 200
        started = [t for t in threading.enumerate() if t not in before]
        assert [t for t in started if t.name == "webhook-receiver" and t.is_alive()] == []
