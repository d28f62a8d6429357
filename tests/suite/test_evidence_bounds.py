"""Evidence keeps a bounded number of headers of bounded length, and says what it left out.

40 headers of 8 KB in every response, repeated in the evidence of every check, once made a 20 MB
``results.json``.
"""

from __future__ import annotations

import pytest
import schemathesis

from conformance.core.profile import Profile, load_profile
from conformance.core.redaction import REDACTED
from conformance.suite.evidence_bounds import (
    DROPPED_HEADERS,
    MAX_HEADER_CHARS,
    MAX_HEADERS,
    cap_headers,
)
from conformance.suite.schema.evidence import evidence_from
from conformance.suite.schema.loading import signed_session
from conformance.suite.wire.client import SuiteClient
from tests.engine.hostile import Behaviour, canned, hostile_server


def bloated(size: int) -> bytes:
    """A response with 40 headers of ``size`` characters after a signature header."""
    pads = {f"X_Pad_{i:02d}": "p" * size for i in range(40)}
    return canned("200 OK", b"{}", X_Signature="s" * 100, **pads)


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


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
    with (
        hostile_server(Behaviour.CANNED, bloated(300)) as base_url,
        SuiteClient(base_url, profile) as client,
    ):
        client.get("/v1/x")
        evidence = client.last_exchange
    assert evidence is not None
    assert_bounded(evidence.response_headers)


def test_schema_evidence_bounds_the_headers(profile: Profile) -> None:
    session = signed_session(profile)
    with hostile_server(Behaviour.CANNED, bloated(8192)) as base_url:
        response = session.get(base_url + "/v1/x", timeout=(5, 15))
    evidence = evidence_from(schemathesis.Response.from_requests(response, verify=True), ())
    assert_bounded({k.lower(): v for k, v in evidence.response_headers.items()})
