"""The concurrency burst of the idempotency family (IDEM-012, IDEM-013): a request of the burst
that got no answer at all is not judged; one whose reply is not HTTP still is."""

from __future__ import annotations

import httpx

from conformance.core.profile import load_profile
from conformance.suite.factories import RequestSpec
from conformance.suite.test_idempotency import send_together
from conformance.suite.wire.client import NoAnswerError, SuiteClient

PROFILE = load_profile()
SPEC = RequestSpec("listPayments", "GET", "/v1/payments")


def burst(error: Exception) -> list[httpx.Response | str | NoAnswerError]:
    def broken(request: httpx.Request) -> httpx.Response:
        raise error

    clients = [
        SuiteClient("http://127.0.0.1:9", PROFILE, transport=httpx.MockTransport(broken))
        for _ in range(3)
    ]
    try:
        return send_together(clients, SPEC, "key-1")
    finally:
        for client in clients:
            client.close()


def test_requests_of_the_burst_without_an_answer_are_not_judged() -> None:
    results = burst(httpx.ConnectError("connection refused"))
    assert all(isinstance(r, NoAnswerError) for r in results)


def test_a_reply_that_is_not_http_is_judged() -> None:
    results = burst(httpx.RemoteProtocolError("illegal status line"))
    assert all(isinstance(r, str) and "not valid HTTP" in r for r in results)
