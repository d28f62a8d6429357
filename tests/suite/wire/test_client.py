"""SuiteClient: signing, Idempotency-Key, counting, redacted evidence and transport errors."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from conformance.core.profile import Profile, load_profile
from conformance.core.redaction import REDACTED
from conformance.core.signing import AUTH_HEADERS, verify
from conformance.reference.server import ReferenceServer
from conformance.suite.wire.client import (
    IDEMPOTENCY_HEADER,
    TIMEOUTS_BEFORE_GIVING_UP,
    ClientStats,
    SuiteClient,
    SuiteTransportError,
)
from tests.engine.hostile import Behaviour, closed_port, hostile_server


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


class Recorder:
    """A mock transport that keeps every request and answers with a canned response."""

    def __init__(self, status: int = 200, body: object | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.status = status
        self.body = body if body is not None else {"ok": True}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(self.status, json=self.body)


def mock_client(
    profile: Profile, recorder: Recorder, stats: ClientStats | None = None
) -> SuiteClient:
    return SuiteClient(
        "http://server.test/api", profile, stats=stats, transport=httpx.MockTransport(recorder)
    )


# -- signing ---------------------------------------------------------------------------------
def test_signature_covers_method_path_query_and_body(profile: Profile) -> None:
    recorder = Recorder()
    with mock_client(profile, recorder) as client:
        client.post("/v1/payments", json={"memo": "café"}, params={"a": "1 2"})
    sent = recorder.requests[0]
    target = sent.url.raw_path.decode()
    assert target.startswith("/api/v1/payments?a=1")
    headers = {h: sent.headers[h] for h in AUTH_HEADERS}
    secret = profile.primary.api_secret
    assert verify(secret, profile.string_to_sign, headers, "POST", target, sent.content)
    assert not verify(secret, profile.string_to_sign, headers, "POST", "/api/v1/x", sent.content)


def test_signed_requests_are_accepted_by_the_reference_server(profile: Profile) -> None:
    with ReferenceServer(profile=profile) as server, SuiteClient(server.base_url, profile) as c:
        listed = c.get("/v1/payments", params={"limit": 1})
        created = c.post(
            "/v1/payments",
            json={"quotes": {"usdc": {"amount": "1.5"}}, "merchant_order_no": "client-test-1"},
            operation_id="createPayment",
        )
        unsigned = c.get("/v1/payments", sign=False)
    assert listed.status_code == 200, listed.text
    assert created.status_code == 201, created.text
    assert unsigned.status_code == 401


def test_json_is_sent_compact_and_content_byte_for_byte(profile: Profile) -> None:
    recorder = Recorder()
    with mock_client(profile, recorder) as client:
        client.post("/v1/payments", json={"a": [1, 2]})
        client.post("/v1/payments", content=b"{not json")
    assert recorder.requests[0].content == b'{"a":[1,2]}'
    assert recorder.requests[1].content == b"{not json"
    assert recorder.requests[1].headers["content-type"] == "application/json"


def test_unsigned_and_overridden_auth_headers(profile: Profile) -> None:
    recorder = Recorder()
    with mock_client(profile, recorder) as client:
        client.get("/v1/payments", sign=False)
        client.get("/v1/payments", auth={"X-Nonce": None, "X-Api-Key": "mk_unknown"})
        client.get("/v1/payments", timestamp=1_700_000_000, nonce="n" * 20)
    unsigned, overridden, pinned = recorder.requests
    assert not any(h in unsigned.headers for h in AUTH_HEADERS)
    assert "x-nonce" not in overridden.headers
    assert overridden.headers["x-api-key"] == "mk_unknown"
    assert "x-signature" in overridden.headers
    assert pinned.headers["x-timestamp"] == "1700000000"
    assert pinned.headers["x-nonce"] == "n" * 20


# -- Idempotency-Key -------------------------------------------------------------------------
def test_idempotency_key_is_automatic_where_the_profile_requires_one(profile: Profile) -> None:
    recorder = Recorder()
    with mock_client(profile, recorder) as client:
        client.post("/v1/payments", json={}, operation_id="createPayment")
        client.post("/v1/payments", json={}, operation_id="createPayment")
        client.get("/v1/payments")
        client.post("/v1/x402/settle", json={}, operation_id="settleX402Payment")
        client.delete("/v1/payout-schedules/ps_1", idempotency_key=None)
        client.put("/v1/split-template", json={"shares": []}, idempotency_key="k" * 128)
    keys = [r.headers.get(IDEMPOTENCY_HEADER) for r in recorder.requests]
    assert keys[0] and keys[1] and keys[0] != keys[1]
    assert keys[2:5] == [None, None, None]
    assert keys[5] == "k" * 128


# -- counting and evidence -------------------------------------------------------------------
def test_requests_are_counted_per_client_and_per_session(profile: Profile) -> None:
    stats = ClientStats()
    recorder = Recorder()
    with (
        mock_client(profile, recorder, stats=stats) as a,
        mock_client(profile, recorder, stats=stats) as b,
    ):
        a.get("/v1/payments")
        a.get("/v1/payments")
        b.get("/v1/payments")
    assert (a.requests_sent, b.requests_sent, stats.requests_sent) == (2, 1, 3)
    assert stats.last_client is b


def test_last_exchange_is_redacted_evidence_with_a_curl_command(profile: Profile) -> None:
    recorder = Recorder(body={"id": "we_1", "secret": "whsec_c2VjcmV0c2VjcmV0"})
    secret = profile.primary.api_secret
    with mock_client(profile, recorder) as client:
        assert client.last_exchange is None
        client.post("/v1/webhook-endpoints/we_1/rotate-secret", json={"note": f"leak {secret}"})
        evidence = client.last_exchange
    assert evidence is not None
    assert evidence.method == "POST"
    assert evidence.status == 200
    assert evidence.request_headers["x-signature"] == REDACTED
    assert json.loads(evidence.response_body or "")["secret"] == REDACTED
    everything = json.dumps(evidence.__dict__)
    assert secret not in everything
    assert "whsec_c2Vj" not in everything
    assert recorder.requests[0].headers["x-signature"] not in everything
    assert evidence.curl.startswith("curl -X POST http://server.test/api/v1/webhook-endpoints/")
    assert "X-Signature: [redacted]" in evidence.curl.replace("x-signature", "X-Signature")


# -- transport errors ------------------------------------------------------------------------
def test_a_closed_port_is_a_clear_transport_error(profile: Profile) -> None:
    with SuiteClient(f"http://127.0.0.1:{closed_port()}", profile) as client:
        with pytest.raises(SuiteTransportError, match="could not connect"):
            client.get("/v1/payments")
        evidence = client.last_exchange
    assert evidence is not None and evidence.status is None


@pytest.mark.parametrize(
    ("behaviour", "expected"),
    [
        (Behaviour.GARBAGE, "not valid HTTP"),
        (Behaviour.CLOSE, "closed the connection without a response"),
    ],
)
def test_broken_servers_are_clear_transport_errors(
    profile: Profile, behaviour: Behaviour, expected: str
) -> None:
    with (
        hostile_server(behaviour) as base_url,
        SuiteClient(base_url, profile) as client,
        pytest.raises(SuiteTransportError, match=expected),
    ):
        client.get("/v1/payments")


@pytest.fixture
def silent_server() -> Iterator[str]:
    with hostile_server(Behaviour.SILENT) as base_url:
        yield base_url


def test_a_silent_server_times_out_then_is_given_up_on(
    profile: Profile, silent_server: str
) -> None:
    with SuiteClient(silent_server, profile, read_timeout_s=0.2) as client:
        for _ in range(TIMEOUTS_BEFORE_GIVING_UP):
            with pytest.raises(SuiteTransportError, match="sent no response in time"):
                client.get("/v1/payments")
        with pytest.raises(SuiteTransportError, match="not sent: the server stopped answering"):
            client.get("/v1/payments")
    assert client.requests_sent == TIMEOUTS_BEFORE_GIVING_UP
