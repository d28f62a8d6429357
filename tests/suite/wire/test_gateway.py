"""Gateway headers (``run -H "Name: value"``): strictly parsed, sent on every request of both
HTTP stacks (authentication refusals included) and masked as secrets everywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
import requests

from conformance.core.profile import Profile, load_profile
from conformance.core.redaction import REDACTED, is_secret_header, redact_headers, redact_text
from conformance.core.run_inputs import HeaderError, parse_header, parse_headers
from conformance.suite.schema.loading import signed_session
from conformance.suite.wire import gateway
from conformance.suite.wire.client import SuiteClient
from conformance.suite.wire.gateway import HEADERS_ENV
from conformance.suite.wire.har import PartRecorder

KEY = "gw-7f3a9c1e5b2d4068"
HEADER = ("X-Gateway-Key", KEY)


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


# -- parsing ---------------------------------------------------------------------------------
def test_a_header_is_a_token_a_colon_and_a_value() -> None:
    assert parse_header("X-Gateway-Key: abc def") == ("X-Gateway-Key", "abc def")
    assert parse_header("x-tenant:42") == ("x-tenant", "42")
    assert parse_header("X-Token:  a:b:c  ") == ("X-Token", "a:b:c")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("X-Gateway-Key", "expected 'Name: value', found no colon"),
        ("X Gateway: v", "is not a header name"),
        ("X-Gateway-Key : v", "is not a header name"),
        (": v", "is not a header name"),
        ("X-Key: a\r\nX-Injected: 1", "holds a line break, a control character or a non-ASCII"),
        ("X-Key: a\nb", "holds a line break, a control character or a non-ASCII"),
        ("X-Key: a\x00b", "holds a line break, a control character or a non-ASCII"),
        ("X-Key: clé", "holds a line break, a control character or a non-ASCII"),
        ("X-Key:   ", "the value is empty"),
        ("X-Api-Key: mk_other", "the API or HTTP itself uses this header"),
        ("x-signature: s", "the API or HTTP itself uses this header"),
        ("Idempotency-Key: k", "the API or HTTP itself uses this header"),
        ("Content-Type: text/plain", "the API or HTTP itself uses this header"),
        ("Content-Length: 3", "the API or HTTP itself uses this header"),
        ("Host: example.com", "the API or HTTP itself uses this header"),
    ],
)
def test_what_is_not_a_sendable_header_is_refused(text: str, message: str) -> None:
    with pytest.raises(HeaderError, match=message):
        parse_header(text)


def test_a_refusal_never_shows_the_value() -> None:
    for text in (f"X-Gateway-Key {KEY}", f"X-Key: {KEY}\r\n", f"Host: {KEY}"):
        with pytest.raises(HeaderError) as raised:
            parse_header(text)
        assert KEY not in str(raised.value)


def test_a_name_given_twice_is_refused() -> None:
    with pytest.raises(HeaderError, match="-H x-key: given twice"):
        parse_headers(["X-Key: a", "x-key: b"])


def test_headers_travel_to_test_processes_through_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    headers = (HEADER, ("X-Tenant", "t 1"))
    monkeypatch.setenv(HEADERS_ENV, "before")
    with gateway.in_env(headers):
        import os

        assert gateway.from_env(os.environ[HEADERS_ENV]) == headers
    assert os.environ[HEADERS_ENV] == "before"
    assert gateway.from_env(None) == ()


# -- sent on every request -------------------------------------------------------------------
class Recorder:
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(401, json={"code": "unauthorized", "echo": KEY})


@pytest.fixture
def active() -> Iterator[None]:
    with gateway.using([HEADER]):
        yield


def test_the_suite_client_sends_it_even_when_a_check_removes_the_api_s_auth(
    profile: Profile, active: None
) -> None:
    recorder = Recorder()
    transport = httpx.MockTransport(recorder)
    with SuiteClient("http://server.test", profile, transport=transport) as client:
        client.get("/v1/payments")
        client.get("/v1/payments", sign=False)
        client.get("/v1/payments", auth={"X-Api-Key": None, "X-Signature": None})
        client.post("/v1/payments", json={}, headers={"X-Other": "1"})
    assert [r.headers.get("x-gateway-key") for r in recorder.requests] == [KEY] * 4
    assert "x-api-key" not in recorder.requests[2].headers


def test_no_header_is_added_outside_a_run_that_gives_one(profile: Profile) -> None:
    recorder = Recorder()
    transport = httpx.MockTransport(recorder)
    with SuiteClient("http://server.test", profile, transport=transport) as client:
        client.get("/v1/payments")
    assert "x-gateway-key" not in recorder.requests[0].headers


def test_the_schemathesis_session_sends_it(profile: Profile, active: None) -> None:
    sent: list[requests.PreparedRequest] = []

    class Capture(requests.adapters.BaseAdapter):
        def send(
            self, request: requests.PreparedRequest, *args: object, **kwargs: object
        ) -> requests.Response:  # type: ignore[override]
            sent.append(request)
            response = requests.Response()
            response.status_code = 200
            return response

        def close(self) -> None:
            pass

    with signed_session(profile) as session:
        session.mount("http://", Capture())
        session.get("http://server.test/v1/payments")
    assert sent[0].headers["X-Gateway-Key"] == KEY
    assert "X-Signature" in sent[0].headers


# -- masked as a secret ----------------------------------------------------------------------
def test_the_value_is_masked_in_evidence_and_its_curl_command(
    profile: Profile, active: None
) -> None:
    transport = httpx.MockTransport(Recorder())
    with SuiteClient("http://server.test", profile, transport=transport) as client:
        client.get("/v1/payments")
        evidence = client.last_exchange
    assert evidence is not None
    assert evidence.request_headers["x-gateway-key"] == REDACTED
    assert KEY not in json.dumps(evidence.__dict__)  # the echo in the body too
    assert "x-gateway-key: [redacted]" in evidence.curl


def test_the_value_is_a_secret_only_while_the_run_gives_it() -> None:
    with gateway.using([HEADER]):
        assert is_secret_header("x-GATEWAY-key")
        assert redact_headers({"X-Gateway-Key": KEY}) == {"X-Gateway-Key": REDACTED}
        assert redact_text(f"echo {KEY}") == f"echo {REDACTED}"
    assert not is_secret_header("X-Gateway-Key")
    assert redact_text(f"echo {KEY}") == f"echo {KEY}"


def test_the_value_is_masked_in_recorded_traffic(
    profile: Profile, active: None, tmp_path: object
) -> None:
    from pathlib import Path

    directory = Path(str(tmp_path))
    recorder = PartRecorder(directory, "test", lambda: ()).start()
    try:
        transport = httpx.MockTransport(Recorder())
        with SuiteClient("http://server.test", profile, transport=transport) as client:
            client.get("/v1/payments")
    finally:
        recorder.stop()
    recorded = "".join(p.read_text(encoding="utf-8") for p in directory.iterdir())
    assert "X-Gateway-Key" in recorded or "x-gateway-key" in recorded
    assert KEY not in recorded
