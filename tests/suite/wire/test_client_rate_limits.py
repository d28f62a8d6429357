"""Both HTTP stacks wait out a rate limit and send the same request again, re-signed.

SuiteClient (httpx) is driven through a mock transport, the schemathesis ``requests`` session
through a small server on 127.0.0.1. A fake clock stands in for the waits, so that a resend's
timestamp moves on as far as the wait said.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import httpx
import pytest

from conformance.core.profile import Profile, load_profile
from conformance.core.results import RateLimitCounts
from conformance.core.signing import (
    API_KEY_HEADER,
    AUTH_HEADERS,
    NONCE_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    verify,
)
from conformance.suite.schema.loading import signed_session
from conformance.suite.schema.resending import RateLimitedRequest
from conformance.suite.wire import tap as wiretap
from conformance.suite.wire.client import (
    IDEMPOTENCY_HEADER,
    ClientStats,
    RateLimitedError,
    SuiteClient,
)
from conformance.suite.wire.ratelimit import RATE_LIMITED, RateLimiting

START = 1_800_000_000.0


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


class FakeClock:
    """``time.time`` that only the waits move on."""

    def __init__(self) -> None:
        self.now = START
        self.slept: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(time, "time", fake.time)
    return fake


class Server:
    """Answers the first ``limited`` requests with ``limit`` (a status and headers), then 200."""

    def __init__(self, limited: int = 1, status: int = 429, **headers: str) -> None:
        self.limited = limited
        self.status = status
        self.headers = {k.replace("_", "-"): v for k, v in headers.items()}
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if len(self.requests) <= self.limited:
            return httpx.Response(self.status, headers=self.headers, json={"code": "slow_down"})
        return httpx.Response(200, json={"ok": True})


def _client(
    profile: Profile, server: Server, clock: FakeClock, stats: ClientStats | None = None
) -> SuiteClient:
    stats = stats or ClientStats()
    stats.rate_limiting.sleep = clock.sleep
    return SuiteClient(
        "http://server.test", profile, stats=stats, transport=httpx.MockTransport(server)
    )


def _signed_right(profile: Profile, request: httpx.Request) -> bool:
    return verify(
        profile.primary.api_secret,
        profile.string_to_sign,
        {name: request.headers[name] for name in AUTH_HEADERS},
        request.method,
        request.url.raw_path.decode(),
        request.content,
    )


# -- SuiteClient -----------------------------------------------------------------------------
def test_a_429_is_waited_out_and_the_same_request_sent_again_re_signed(
    profile: Profile, clock: FakeClock
) -> None:
    server = Server(limited=2, Retry_After="7")
    client = _client(profile, server, clock)
    response = client.post("/v1/payments", json={"amount": "1.00"}, idempotency_key="key-1")
    assert response.status_code == 200
    assert clock.slept == [7.0, 7.0]
    first, second, third = server.requests
    for resent in (second, third):
        assert (resent.method, resent.url, resent.content) == (
            first.method,
            first.url,
            first.content,
        )
        assert resent.headers[IDEMPOTENCY_HEADER] == "key-1"
        assert _signed_right(profile, resent)
    assert len({r.headers[NONCE_HEADER] for r in server.requests}) == 3  # a fresh nonce each
    assert [int(r.headers[TIMESTAMP_HEADER]) for r in server.requests] == [
        int(START),
        int(START) + 7,
        int(START) + 14,
    ]
    counts = client.stats.rate_limiting.counts
    assert counts == RateLimitCounts(received_429=2, waited_s=14.0)
    assert client.stats.requests_sent == 3


def test_a_503_with_retry_after_is_waited_out_a_503_without_it_is_the_answer(
    profile: Profile, clock: FakeClock
) -> None:
    client = _client(profile, Server(status=503, Retry_After="1"), clock)
    assert client.get("/v1/payments").status_code == 200
    assert client.stats.rate_limiting.counts.received_503 == 1
    plain = _client(profile, Server(status=503), clock)
    assert plain.get("/v1/payments").status_code == 503


def test_without_retry_after_the_wait_is_backoff(profile: Profile, clock: FakeClock) -> None:
    client = _client(profile, Server(limited=3), clock)
    assert client.get("/v1/payments").status_code == 200
    assert len(clock.slept) == 3
    assert all(0 <= s <= c for s, c in zip(clock.slept, (0.5, 1.0, 2.0), strict=True))


def test_observers_and_evidence_see_only_the_answer_after_the_wait(
    profile: Profile, clock: FakeClock
) -> None:
    client = _client(profile, Server(Retry_After="1"), clock)
    seen: list[int | None] = []
    client.observers.append(lambda _, r: seen.append(None if r is None else r.status_code))
    client.get("/v1/payments")
    assert seen == [200]
    evidence = client.last_exchange
    assert evidence is not None and evidence.status == 200


def test_the_recording_keeps_every_real_exchange_the_429_included(
    profile: Profile, clock: FakeClock
) -> None:
    tapped: list[wiretap.WireExchange] = []
    wiretap.subscribe(tapped.append)
    try:
        _client(profile, Server(Retry_After="1"), clock).get("/v1/payments")
    finally:
        wiretap.unsubscribe(tapped.append)
    assert [e.status for e in tapped] == [429, 200]


# -- requests built on purpose to test authentication ---------------------------------------
def test_an_explicit_nonce_is_kept_so_a_replay_stays_a_replay(
    profile: Profile, clock: FakeClock
) -> None:
    server = Server(Retry_After="3")
    _client(profile, server, clock).get("/v1/payments", nonce="n-replayed")
    assert [r.headers[NONCE_HEADER] for r in server.requests] == ["n-replayed"] * 2
    assert all(_signed_right(profile, r) for r in server.requests)


def test_an_explicit_timestamp_keeps_its_offset_from_now(
    profile: Profile, clock: FakeClock
) -> None:
    server = Server(Retry_After="5")
    stale = int(START) - 600  # ten minutes old: outside the clock window, on purpose
    _client(profile, server, clock).get("/v1/payments", timestamp=stale)
    assert [int(r.headers[TIMESTAMP_HEADER]) for r in server.requests] == [stale, stale + 5]


def test_headers_removed_or_set_on_purpose_stay_so(profile: Profile, clock: FakeClock) -> None:
    server = Server(Retry_After="1")
    _client(profile, server, clock).get(
        "/v1/payments", auth={SIGNATURE_HEADER: None, API_KEY_HEADER: "ak_unknown"}
    )
    for request in server.requests:
        assert SIGNATURE_HEADER not in request.headers
        assert request.headers[API_KEY_HEADER] == "ak_unknown"
    assert server.requests[0].headers[NONCE_HEADER] != server.requests[1].headers[NONCE_HEADER]


def test_an_unsigned_request_stays_unsigned(profile: Profile, clock: FakeClock) -> None:
    server = Server(Retry_After="1")
    _client(profile, server, clock).get("/v1/payments", sign=False)
    assert len(server.requests) == 2
    assert all(NONCE_HEADER not in r.headers for r in server.requests)


# -- giving up -------------------------------------------------------------------------------
def test_a_request_that_cannot_get_through_is_not_exercised_not_failed(
    profile: Profile, clock: FakeClock
) -> None:
    server = Server(limited=100, Retry_After="3600")
    client = _client(profile, server, clock)
    with pytest.raises(RateLimitedError, match=f"{RATE_LIMITED} \\(429, Retry-After '3600'"):
        client.get("/v1/payments")
    assert clock.slept == [] and len(server.requests) == 1
    assert client.stats.rate_limiting.counts.given_up == 1


def test_no_wait_goes_past_the_run_budget(profile: Profile, clock: FakeClock) -> None:
    stats = ClientStats(deadline=START + 10, budget_s=10)
    client = _client(profile, Server(limited=100, Retry_After="4"), clock, stats)
    with pytest.raises(RateLimitedError, match="would go past the run's time budget"):
        client.get("/v1/payments")
    assert clock.slept == [4.0, 4.0]  # at 8 s a third wait would end past 10 s


def test_the_send_limiter_wait_counts_too(profile: Profile, clock: FakeClock) -> None:
    from conformance.suite.wire.ratelimit import SendLimiter

    stats = ClientStats(rate_limiting=RateLimiting(limiter=SendLimiter(4.0)))
    client = _client(profile, Server(limited=0), clock, stats)
    for _ in range(5):
        client.get("/v1/payments")
    assert stats.rate_limiting.counts.limiter_waited_s == pytest.approx(1.0)
    assert clock.now == pytest.approx(START + 1.0)


# -- the schemathesis session ---------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    script: ClassVar[list[tuple[int, dict[str, str]]]] = []
    seen: ClassVar[list[tuple[str, str, dict[str, str], bytes]]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        type(self).seen.append((self.command, self.path, dict(self.headers), body))
        status, headers = type(self).script.pop(0) if type(self).script else (200, {})
        payload = json.dumps({"code": "slow_down"} if status != 200 else {"ok": True}).encode()
        self.send_response(status)
        for name, value in {**headers, "Content-Type": "application/json"}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[tuple[str, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {"script": [], "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def _session_stats(slept: list[float], clock: Callable[[float], None] | None = None) -> ClientStats:
    stats = ClientStats()
    stats.rate_limiting.sleep = clock or slept.append
    return stats


def test_the_session_resends_re_signed_with_the_same_body_and_key(
    profile: Profile, local_server: tuple[str, type[_Handler]]
) -> None:
    url, handler = local_server
    handler.script = [(429, {"Retry-After": "2"})]
    slept: list[float] = []
    stats = _session_stats(slept)
    session = signed_session(profile, stats=stats)
    body = b'{"amount":"1.00"}'
    tapped: list[wiretap.WireExchange] = []
    wiretap.subscribe(tapped.append)
    try:
        response = session.post(
            url + "/v1/payments",
            data=body,
            headers={IDEMPOTENCY_HEADER: "key-2", "Content-Type": "application/json"},
        )
    finally:
        wiretap.unsubscribe(tapped.append)
    assert response.status_code == 200
    assert [e.status for e in tapped] == [429, 200]  # the recording keeps the 429
    assert slept == [2.0]
    first, second = handler.seen
    assert first[:2] == second[:2] and first[3] == second[3] == body
    assert first[2][IDEMPOTENCY_HEADER] == second[2][IDEMPOTENCY_HEADER] == "key-2"
    assert first[2][NONCE_HEADER] != second[2][NONCE_HEADER]
    for method, path, headers, sent in handler.seen:
        secret, template = profile.primary.api_secret, profile.string_to_sign
        assert verify(secret, template, headers, method, path, sent)
    assert stats.rate_limiting.counts == RateLimitCounts(received_429=1, waited_s=2.0)
    assert stats.requests_sent == 1  # the resend (the schema phases count their cases)


def test_the_session_gives_up_with_a_rate_limited_request_error(
    profile: Profile, local_server: tuple[str, type[_Handler]]
) -> None:
    url, handler = local_server
    handler.script = [(429, {"Retry-After": "3600"})]
    slept: list[float] = []
    stats = _session_stats(slept)
    with pytest.raises(RateLimitedRequest, match=RATE_LIMITED):
        signed_session(profile, stats=stats).get(url + "/v1/payments")
    assert slept == [] and stats.rate_limiting.counts.given_up == 1
