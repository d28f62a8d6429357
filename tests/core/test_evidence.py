"""Evidence is built one way, whoever saw the exchange: what it keeps, what it masks, how it
repeats the request, and how a check result travels from a worker to the controller."""

from __future__ import annotations

import json
import shlex

import pytest
import schemathesis
from hypothesis import given
from hypothesis import strategies as st

from conformance.core.evidence import (
    BODY_LIMIT,
    DROPPED_HEADERS,
    MAX_HEADER_CHARS,
    MAX_HEADERS,
    cap_headers,
    check_from_dict,
    check_to_dict,
    curl_command,
    evidence_from_parts,
)
from conformance.core.profile import Profile, load_profile
from conformance.core.redaction import REDACTED
from conformance.core.results import CheckResult, Evidence, Outcome
from conformance.reporting.scrub import Scrubber
from conformance.suite.schema.evidence import evidence_from
from conformance.suite.schema.loading import signed_session
from conformance.suite.wire.client import SuiteClient
from tests.engine.hostile import Behaviour, canned, hostile_server

WEBHOOK_SECRET = "whsec_c2VjcmV0c2VjcmV0"


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


def schema_evidence(profile: Profile, base_url: str) -> Evidence:
    """Evidence of a GET as the schema phases build it (a ``requests`` session)."""
    response = signed_session(profile).get(base_url + "/v1/x", timeout=(5, 15))
    return evidence_from(schemathesis.Response.from_requests(response, verify=True), ())


def client_evidence(profile: Profile, base_url: str) -> Evidence:
    """Evidence of a GET as the suite's client builds it (httpx)."""
    with SuiteClient(base_url, profile) as client:
        client.get("/v1/x")
        evidence = client.last_exchange
    assert evidence is not None
    return evidence


# -- headers: bounded, lower case, secrets out ---------------------------------------------------
# 40 headers of 8 KB in every response, repeated in the evidence of every check, once made a
# 20 MB results.json.
def bloated(size: int) -> bytes:
    """A response with 40 headers of ``size`` characters after a signature header."""
    pads = {f"X_Pad_{i:02d}": "p" * size for i in range(40)}
    return canned("200 OK", b"{}", X_Signature="s" * 100, **pads)


def assert_bounded(headers: dict[str, str]) -> None:
    assert len(headers) == MAX_HEADERS + 1
    assert headers[DROPPED_HEADERS] == f"{43 - MAX_HEADERS} more headers"  # 3 + 40 sent
    assert all(len(value) < MAX_HEADER_CHARS + 40 for value in headers.values())
    assert sum(len(k) + len(v) for k, v in headers.items()) < MAX_HEADERS * (MAX_HEADER_CHARS + 80)
    assert headers["x-signature"] == REDACTED


def test_headers_beyond_the_cap_are_counted_and_long_values_cut() -> None:
    headers = {f"h{i}": "v" * (i * 10) for i in range(5)}
    assert cap_headers(headers, max_headers=3, max_chars=15) == {
        "h0": "",
        "h1": "v" * 10,
        "h2": "v" * 15 + "[... 5 more characters]",
        DROPPED_HEADERS: "2 more headers",
    }
    assert cap_headers({"a": "b"}) == {"a": "b"}


def test_suite_client_evidence_bounds_the_headers(profile: Profile) -> None:
    # httpx refuses more than 16 KiB of headers in all: 40 of 300 characters pass
    with hostile_server(Behaviour.CANNED, bloated(300)) as base_url:
        assert_bounded(client_evidence(profile, base_url).response_headers)


def test_schema_evidence_bounds_the_headers(profile: Profile) -> None:
    with hostile_server(Behaviour.CANNED, bloated(8192)) as base_url:
        assert_bounded(schema_evidence(profile, base_url).response_headers)


def test_header_names_are_lower_case_and_a_repeated_one_is_joined() -> None:
    evidence = evidence_from_parts(
        method="GET",
        url="http://h/v1/x",
        request_headers=[("X-Api-Key", "mk_1"), ("Accept", "a/b"), ("accept", "c/d")],
        request_body=None,
        status=200,
        response_headers={"Content-Type": "application/json", "X-Signature": "ab12"},
    )
    assert evidence.request_headers == {"x-api-key": "mk_1", "accept": "a/b, c/d"}
    assert evidence.response_headers == {
        "content-type": "application/json",
        "x-signature": REDACTED,
    }


def test_secrets_are_masked_in_every_header_value_and_the_url() -> None:
    evidence = evidence_from_parts(
        method="POST",
        url="http://user:pa55word@h/v1/x",
        request_headers=[("X-Note", "sk_test_secret_1"), ("Cookie", "session=1")],
        request_body=b"{}",
        status=200,
        response_headers=[("Location", "https://u:pa55word@h/"), ("X-Rotated", WEBHOOK_SECRET)],
        secrets=("sk_test_secret_1",),
    )
    shown = json.dumps(evidence.__dict__)
    assert "pa55word" not in shown and "sk_test_secret_1" not in shown
    assert "whsec_" not in shown and "session=1" not in shown
    assert evidence.url == f"http://user:{REDACTED}@h/v1/x"
    assert evidence.response_headers["x-rotated"] == REDACTED


def test_the_schema_phases_no_longer_leak_a_webhook_secret(profile: Profile) -> None:
    """A server answering its webhook secret in a header: the schema phases' evidence kept it
    (they masked secret JSON fields and ``whsec_`` in bodies, never in headers)."""
    answer = canned(
        "200 OK", json.dumps({"note": WEBHOOK_SECRET}).encode(), X_Webhook_Secret=WEBHOOK_SECRET
    )
    with hostile_server(Behaviour.CANNED, answer) as base_url:
        evidence = schema_evidence(profile, base_url)
    assert evidence.response_headers["x-webhook-secret"] == REDACTED
    assert json.loads(evidence.response_body or "") == {"note": REDACTED}
    assert "whsec_" not in json.dumps(evidence.__dict__)


# -- bodies: one limit -----------------------------------------------------------------------
def test_both_clients_show_a_response_alike_and_cut_its_body_at_the_one_limit(
    profile: Profile,
) -> None:
    body = b"[" + b"0," * BODY_LIMIT + b"0]"
    with hostile_server(Behaviour.CANNED, canned("200 OK", body, X_Rotated=WEBHOOK_SECRET)) as url:
        by_client = client_evidence(profile, url)
        by_schema = schema_evidence(profile, url)
    assert by_client.response_headers == by_schema.response_headers
    assert by_client.response_body == by_schema.response_body
    shown = by_client.response_body or ""
    assert shown.startswith("[0,0,")
    assert shown.endswith(f"\n[... {len(body) - BODY_LIMIT} more bytes not shown]")


def request_body_shown(raw: bytes | str | None) -> str | None:
    return evidence_from_parts(
        method="POST", url="http://h/", request_headers=(), request_body=raw, status=None
    ).request_body


def test_a_body_within_the_limit_is_whole_and_no_body_is_none() -> None:
    text = "é" * (BODY_LIMIT // 2)  # two bytes each: exactly the limit
    assert request_body_shown(text) == request_body_shown(text.encode()) == text
    assert request_body_shown(text + "!") == text + "\n[... 1 more bytes not shown]"
    assert request_body_shown(b"") is request_body_shown(None) is None


def test_the_transport_note_comes_before_the_response_body() -> None:
    evidence = evidence_from_parts(
        method="GET",
        url="http://h/",
        request_headers=(),
        request_body=None,
        status=200,
        response_body=b"[1,",
        response_note="[response cut]",
    )
    assert evidence.response_body == "[response cut]\n[1,"


# -- the curl command ------------------------------------------------------------------------
header_values = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=30)


@given(
    url_tail=st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=20),
    headers=st.dictionaries(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True), header_values),
    body=st.none() | st.text(max_size=60),
)
def test_the_curl_command_reads_back_through_shlex(
    url_tail: str, headers: dict[str, str], body: str | None
) -> None:
    url = "http://h/v1/" + url_tail
    words = ["curl", "-X", "POST", url]
    for name, value in headers.items():
        if name not in {"host", "content-length", "accept-encoding", "connection"}:
            words += ["-H", f"{name}: {value}"]
    if body is not None:
        words += ["--data-binary", body]
    assert shlex.split(curl_command("POST", url, headers, body)) == words


def test_the_curl_command_leaves_out_what_curl_sets_itself() -> None:
    headers = {"host": "h", "content-length": "2", "x-api-key": "mk 'quoted'"}
    assert curl_command("POST", "http://h/v1/x", headers, "{}") == (
        "curl -X POST http://h/v1/x -H 'x-api-key: mk '\"'\"'quoted'\"'\"'' --data-binary '{}'"
    )


def test_a_report_rebuilds_a_missing_curl_command_the_same_way() -> None:
    evidence = evidence_from_parts(
        method="POST",
        url="http://h/v1/x",
        request_headers={"x-api-key": "mk_1"},
        request_body=b'{"a": 1}',
        status=201,
    )
    without = Evidence(**{**evidence.__dict__, "curl": ""})
    assert Scrubber(()).evidence_curl(without) == evidence.curl


# -- the round trip of a check result ---------------------------------------------------------
CHECK = CheckResult(
    check_id="test_auth.py::test_missing_signature",
    family="auth",
    requirement_ids=("AUTH-002", "AUTH-006"),
    outcome=Outcome.FAILED,
    message="expected 401, got 200",
    operation_id="createPayment",
    duration_s=0.25,
    evidence=evidence_from_parts(
        method="POST",
        url="http://h/v1/payments",
        request_headers={"x-api-key": "mk_1", "x-signature": "ab12"},
        request_body=b'{"amount": "1.00"}',
        status=200,
        response_headers={"content-type": "application/json"},
        response_body=b'{"id": "pay_1"}',
    ),
)


def test_a_check_result_survives_the_trip_as_json() -> None:
    as_dict = check_to_dict(CHECK)
    assert json.loads(json.dumps(as_dict)) == as_dict  # nothing xdist could not carry
    assert check_from_dict(as_dict) == CHECK
    bare = CheckResult("c", "schema", (), Outcome.NOT_EXERCISED, reason_not_exercised="no case")
    assert check_from_dict(json.loads(json.dumps(check_to_dict(bare)))) == bare


def test_a_check_of_results_json_reads_back_without_its_report_only_keys() -> None:
    stored = check_to_dict(CHECK)
    stored["evidence"] = {**stored["evidence"], "truncated": {"response_body": 70_000}}
    assert check_from_dict(stored) == CHECK
