"""HAR entries of the suite's exchanges: secrets masked, everything else as on the wire."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from conformance.core.profile import load_profile
from conformance.core.signing import Signer
from conformance.suite.schema.loading import signed_session
from conformance.suite.wire import tap as wiretap
from conformance.suite.wire.client import SuiteClient, SuiteTransportError
from conformance.suite.wire.har import PartRecorder, RecordLimits, har_entry, signature_verdict
from conformance.suite.wire.tap import WireExchange
from conformance.suite.wire.transport import Limits
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


def _signed(**changes: object) -> WireExchange:
    """An exchange signed with the default profile's first credential, as the suite signs it,
    then ``changes`` made to it."""
    credential = load_profile().credentials[0]
    signer = Signer(credential.api_key, credential.api_secret)
    body = b'{"a": 1}'
    auth = signer.headers("POST", "/v1/payments?x=1", body, host="127.0.0.1:8080")
    signed = _exchange(
        url="http://127.0.0.1:8080/v1/payments?x=1",
        request_headers=(("Host", "127.0.0.1:8080"), *auth.items()),
        request_body=body,
    )
    return replace(signed, **changes)  # type: ignore[arg-type]


def _recorded_signature(exchange: WireExchange, profile_name: str | None = "default") -> str:
    profile = load_profile(profile_name) if profile_name else None
    entry = har_entry(exchange, signature=signature_verdict(lambda: profile)(exchange))
    (value,) = (h["value"] for h in entry["request"]["headers"] if h["name"] == "X-Signature")
    return value


def test_a_signature_is_masked_with_whether_it_verifies() -> None:
    # validate judges the signature rules by the mark: the suite sends wrong ones on purpose
    assert _recorded_signature(_signed()) == "[redacted: verifies]"
    assert _recorded_signature(_signed(request_body=b'{"a": 2}')) == "[redacted: does not verify]"
    moved = _signed(url="http://127.0.0.1:8080/v1/payments?x=2")
    assert _recorded_signature(moved) == "[redacted: does not verify]"


def test_a_signature_the_recorder_cannot_check_is_masked_plainly() -> None:
    signed = _signed()
    # no profile yet, a key the profile does not hold, an auth header sent twice
    assert _recorded_signature(signed, None) == "[redacted]"
    other_key = tuple(
        (n, "ak_someone_else" if n == "X-Api-Key" else v) for n, v in signed.request_headers
    )
    assert _recorded_signature(_signed(request_headers=other_key)) == "[redacted]"
    twice = (*signed.request_headers, ("X-Nonce", "n" * 32))
    assert _recorded_signature(_signed(request_headers=twice)) == "[redacted]"
    # an empty signature is a missing header's case, whose answer may differ from a bad one's
    empty = tuple((n, "" if n == "X-Signature" else v) for n, v in signed.request_headers)
    assert _recorded_signature(_signed(request_headers=empty)) == "[redacted]"


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
    from conformance.engine.har_file import merge_parts

    merge_parts(tmp_path, tmp_path / "f.har")
    first, second = iter_exchanges(tmp_path / "f.har")
    assert first.method == "POST" and first.status == 201
    assert first.header("x-signature") == "[redacted]"
    assert first.request_body == _exchange().request_body
    assert first.response_body == b'{"id": "wh_1", "secret": "[redacted]", "n": 1e2}'
    assert first.started_at == "2027-01-15T08:00:00.250000Z"
    assert second.status is None
    assert isinstance(httpx.URL(first.url).path, str) and first.path == "/v1/webhooks"


# -- the recording's bounds (issue 17, point 4) ------------------------------------------------
SMALL = RecordLimits(body_bytes=1024, bodies_bytes=8 * 1024, file_bytes=12 * 1024)


def test_a_body_over_the_cap_is_recorded_cut_and_the_cut_is_marked() -> None:
    body = b'{"data": "' + b"x" * 5000 + b'"}'
    entry = har_entry(_exchange(request_body=body, response_body=body), limits=SMALL)
    request, content = entry["request"]["postData"], entry["response"]["content"]
    for part in (request, content):
        assert part["text"] == body[:1024].decode()
        assert part["_truncated"] is True
        assert part["comment"].endswith("body of 5,012 bytes recorded cut at 1 KiB")
    assert entry["request"]["bodySize"] == content["size"] == 5012  # the sizes sent
    assert entry["_truncated"] is True
    assert "response body of 5,012 bytes recorded cut at 1 KiB" in entry["comment"]
    whole = har_entry(_exchange(), limits=SMALL)
    assert "_truncated" not in whole and "comment" not in whole


def test_nul_bytes_are_recorded_as_base64_not_six_bytes_each() -> None:
    bomb = b"\0" * (8 * 1024 * 1024)  # what a gzip bomb decodes to
    entry = har_entry(_exchange(response_body=bomb))
    content = entry["response"]["content"]
    assert content["encoding"] == "base64" and content["_truncated"] is True
    assert base64.b64decode(content["text"]) == b"\0" * (2 * 1024 * 1024)
    # 8 MiB as JSON text was 48 MiB ("\u0000" each): now the cap, base64
    assert len(json.dumps(entry)) < 2.8e6
    text = har_entry(_exchange(response_body=b'{"a": "tab\tnew\nline \xc3\xa9"}'))
    assert "encoding" not in text["response"]["content"]  # UTF-8 text stays text


def test_a_secret_the_cut_falls_in_is_masked_whole() -> None:
    body = b"x" * 1020 + SECRET.encode() + b" tail"
    entry = har_entry(_exchange(response_body=body), secrets=[SECRET], limits=SMALL)
    text = entry["response"]["content"]["text"]
    assert len(text) == 1024 and text.endswith("x[red")
    assert SECRET[:4] not in text
    # a character cut in two is left out: the body stays text
    accented = har_entry(_exchange(response_body=b"x" * 1023 + "é".encode()), limits=SMALL)
    assert accented["response"]["content"]["text"] == "x" * 1023


def test_once_the_budgets_are_spent_bodies_then_entries_are_left_out_and_counted(
    tmp_path: Path,
) -> None:
    from conformance.engine.har_file import merge_parts

    recorder = PartRecorder(tmp_path, "test", limits=SMALL)
    body = b'{"data": "' + b"x" * 3000 + b'"}'
    for _ in range(40):
        recorder(_exchange(request_body=body, response_body=body))
    recorder.stop()
    assert recorder.recorded + recorder.skipped == 40
    assert recorder.without_bodies > 0 and recorder.skipped > 0
    assert recorder.path.stat().st_size <= SMALL.file_bytes

    merged = merge_parts(tmp_path, tmp_path / "f.har", SMALL)
    har = json.loads((tmp_path / "f.har").read_text(encoding="utf-8"))
    entries = har["log"]["entries"]
    assert merged.entries == len(entries) == recorder.recorded
    assert merged.truncated == len(entries)  # every body here is over the 1 KiB cap
    assert (merged.without_bodies, merged.skipped) == (recorder.without_bodies, recorder.skipped)
    bare = [e for e in entries if "text" not in e["response"]["content"]]
    assert len(bare) == recorder.without_bodies
    assert "the recording's 8 KiB for bodies was spent" in bare[0]["response"]["content"]["comment"]
    assert har["log"]["comment"].startswith("recorded by run --record, bounded: ")
    assert f"{recorder.skipped} exchanges not recorded (the file reached its cap of 12 KiB)" in (
        merged.describe()
    )
    assert merged.describe().startswith(f"recording: {tmp_path / 'f.har'} ({len(entries)} entries")


def test_the_validator_reads_cut_and_bodiless_entries(tmp_path: Path) -> None:
    from conformance.engine.har_file import merge_parts
    from conformance.validator.readers import iter_exchanges

    recorder = PartRecorder(tmp_path, "test", limits=SMALL)
    for body in (b"\0" * 3000, b'{"data": "' + b"x" * 3000 + b'"}') * 4:
        recorder(_exchange(response_body=body))
    recorder.stop()
    merge_parts(tmp_path, tmp_path / "f.har", SMALL)
    exchanges = list(iter_exchanges(tmp_path / "f.har"))
    assert len(exchanges) == recorder.recorded
    assert exchanges[0].response_body == b"\0" * 1024
    assert all(e.truncated for e in exchanges)
