"""HAR entries of the suite's exchanges: secrets masked, everything else as on the wire."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import httpx
import pytest

from conformance.core.profile import load_profile
from conformance.suite import wiretap
from conformance.suite.client import SuiteClient, SuiteTransportError
from conformance.suite.har import PartRecorder, har_entry
from conformance.suite.schema.loading import signed_session
from conformance.suite.transport import Limits
from conformance.suite.wiretap import WireExchange
from tests.engine.hostile import Behaviour, canned, hostile_server

SECRET = "sk_test_the_api_secret"


def _exchange(**changes: object) -> WireExchange:
    fields: dict[str, object] = {
        "started": 1_800_000_000.25,
        "method": "POST",
        "url": "http://127.0.0.1:8080/v1/webhooks?limit=2&x=",
        "request_headers": (
            ("Content-Type", "application/json"),
            ("X-Api-Key", "ak_test_alpha"),
            ("X-Signature", "ab" * 32),
            ("X-Debug", f"secret is {SECRET}"),
        ),
        "request_body": b'{"url": "https://example.test/hook", "amount": 1.50}',
        "status": 201,
        "reason": "Created",
        "response_headers": (("content-type", "application/json"), ("set-cookie", "a=1")),
        "response_body": b'{"id": "wh_1", "secret": "whsec_c2VjcmV0", "n": 1e2}',
        "wait_s": 0.012,
        "receive_s": 0.001,
    }
    fields.update(changes)
    return WireExchange(**fields)  # type: ignore[arg-type]


def test_an_entry_masks_secrets_and_keeps_every_other_byte() -> None:
    entry = har_entry(_exchange(), secrets=[SECRET])
    request, response = entry["request"], entry["response"]
    headers = {h["name"]: h["value"] for h in request["headers"]}
    assert headers["X-Signature"] == "[redacted]"  # present, value masked
    assert headers["X-Debug"] == "secret is [redacted]"
    assert headers["X-Api-Key"] == "ak_test_alpha"
    assert request["postData"] == {
        "mimeType": "application/json",
        "text": '{"url": "https://example.test/hook", "amount": 1.50}',
        "params": [],
    }
    assert request["queryString"] == [{"name": "limit", "value": "2"}, {"name": "x", "value": ""}]
    assert response["content"]["text"] == '{"id": "wh_1", "secret": "[redacted]", "n": 1e2}'
    assert response["content"]["size"] == len(_exchange().response_body)
    assert (response["status"], response["statusText"]) == (201, "Created")
    assert entry["startedDateTime"] == "2027-01-15T08:00:00.250000Z"
    assert entry["timings"] == {"send": 0, "wait": 12.0, "receive": 1.0}
    assert entry["time"] == 13.0
    text = json.dumps(entry)
    assert SECRET not in text and "whsec_" not in text and "ab" * 32 not in text


def test_url_passwords_and_webhook_secrets_in_urls_are_masked() -> None:
    entry = har_entry(_exchange(url="http://user:hunter2@127.0.0.1/v1/x?k=whsec_abc"))
    # brackets in the authority would read as an IPv6 host: the mask is percent-encoded there
    assert entry["request"]["url"] == "http://user:%5Bredacted%5D@127.0.0.1/v1/x?k=[redacted]"
    assert entry["request"]["queryString"] == [{"name": "k", "value": "[redacted]"}]


def test_a_body_that_is_not_utf8_is_base64_masked_too() -> None:
    body = b"\xff\xfe" + SECRET.encode() + b"\x00"
    entry = har_entry(_exchange(response_body=body), secrets=[SECRET])
    content = entry["response"]["content"]
    assert content["encoding"] == "base64"
    assert base64.b64decode(content["text"]) == b"\xff\xfe[redacted]\x00"


def test_no_response_is_status_zero_with_the_reason() -> None:
    entry = har_entry(
        _exchange(status=None, reason="", response_headers=(), response_body=b"", error="boom")
    )
    assert entry["response"]["status"] == 0
    assert entry["response"]["_error"] == "boom"
    assert entry["comment"] == "no response: boom"


def test_both_http_stacks_are_recorded_and_a_cut_body_says_so(tmp_path: Path) -> None:
    profile = load_profile()
    body = b'{"data": "' + b"x" * 5000 + b'"}'
    recorder = PartRecorder(tmp_path, "test").start()
    try:
        with hostile_server(Behaviour.CANNED, canned("200 OK", body)) as url:
            with SuiteClient(url, profile, transport=None) as client:
                client.get("/v1/payments")
            session = signed_session(profile, limits=Limits(max_body_bytes=1024))
            session.get(url + "/v1/payouts", timeout=10)
            session.close()
    finally:
        recorder.stop()
    assert not wiretap.listening()
    entries = [json.loads(line) for line in recorder.path.read_text().splitlines()]
    assert [e["request"]["url"] for e in entries] == [url + "/v1/payments", url + "/v1/payouts"]
    for entry in entries:
        headers = {h["name"].lower(): h["value"] for h in entry["request"]["headers"]}
        assert headers["x-signature"] == "[redacted]"
    whole, cut = entries[0]["response"]["content"], entries[1]["response"]["content"]
    assert whole["text"].encode() == body and "comment" not in whole
    assert len(cut["text"]) == 1024 and cut["comment"].startswith("response body cut at 1 KiB")
    assert "cut at 1 KiB" in entries[1]["comment"]


def test_an_exchange_without_response_is_recorded(tmp_path: Path) -> None:
    recorder = PartRecorder(tmp_path, "test").start()
    try:
        with (
            hostile_server(Behaviour.CLOSE) as url,
            SuiteClient(url, load_profile()) as client,
            pytest.raises(SuiteTransportError),
        ):
            client.get("/v1/payments")
    finally:
        recorder.stop()
    (entry,) = [json.loads(line) for line in recorder.path.read_text().splitlines()]
    assert entry["response"]["status"] == 0
    assert "RemoteProtocolError" in entry["response"]["_error"]


def test_the_validator_reads_a_recorded_entry(tmp_path: Path) -> None:
    from conformance.validator.readers import iter_exchanges

    recorder = PartRecorder(tmp_path, "test", lambda: [SECRET])
    recorder(_exchange())
    recorder(_exchange(status=None, response_headers=(), response_body=b"", error="timeout"))
    recorder.stop()
    from conformance.engine.recording import merge_parts

    merge_parts(tmp_path, tmp_path / "f.har")
    first, second = iter_exchanges(tmp_path / "f.har")
    assert first.method == "POST" and first.status == 201
    assert first.header("x-signature") == "[redacted]"
    assert first.request_body == _exchange().request_body
    assert first.response_body == b'{"id": "wh_1", "secret": "[redacted]", "n": 1e2}'
    assert first.started_at == "2027-01-15T08:00:00.250000Z"
    assert second.status is None
    assert isinstance(httpx.URL(first.url).path, str) and first.path == "/v1/webhooks"
