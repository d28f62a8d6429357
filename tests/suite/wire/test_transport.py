"""Bounded exchanges: a server that trickles or floods cannot stall or bloat the suite.

Both clients are tested against real loopback sockets (``tests.engine.hostile``): httpx through
``SuiteClient`` and ``requests`` through the schema family's signed session. Limits are small
here so that the tests are quick; without them every trickling request would never end.
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterator

import pytest
import requests
import schemathesis

from conformance.core.profile import Profile, load_profile
from conformance.suite.schema.evidence import evidence_from
from conformance.suite.schema.loading import signed_session
from conformance.suite.wire.client import SuiteClient, SuiteTransportError
from conformance.suite.wire.transport import (
    Deadline,
    Limits,
    RequestsDeadlineExceeded,
    body_cut_at,
    cut_marker,
    describe_size,
    request_body_cut_at,
)
from tests.engine.hostile import Behaviour, canned, hostile_server

TIGHT = Limits(max_body_bytes=1000, deadline_s=1.0)
# Far more than the deadline, far less than "forever": a trickle never ends by itself.
BOUND_S = 20.0
TRICKLES = [Behaviour.TRICKLE_HEADERS, Behaviour.TRICKLE_BODY]


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


@pytest.fixture
def huge_server() -> Iterator[str]:
    with hostile_server(Behaviour.HUGE) as base_url:
        yield base_url


# -- the pieces ------------------------------------------------------------------------------
def test_a_deadline_clamps_timeouts_to_the_time_left() -> None:
    deadline = Deadline(0.5)
    assert deadline.clamp(10.0) <= 0.5
    assert deadline.binding
    assert deadline.clamp(0.01) == 0.01
    assert not deadline.binding
    assert deadline.clamp(None) <= 0.5


def test_sizes_and_the_cut_marker_read_well() -> None:
    assert describe_size(8 * 1024 * 1024) == "8 MiB"
    assert describe_size(64 * 1024) == "64 KiB"
    assert describe_size(1000) == "1000 bytes"
    assert cut_marker(8 * 1024 * 1024) == (
        "[response cut at 8 MiB: the server sent more; its start follows]"
    )


# -- httpx: SuiteClient ----------------------------------------------------------------------
@pytest.mark.parametrize("behaviour", TRICKLES)
def test_a_trickling_server_ends_at_the_deadline(profile: Profile, behaviour: Behaviour) -> None:
    started = time.monotonic()
    with hostile_server(behaviour) as base_url, SuiteClient(base_url, profile, limits=TIGHT) as c:
        with pytest.raises(SuiteTransportError, match="no complete response within 1 s"):
            c.get("/v1/slow")
        assert c.stats.consecutive_timeouts == 1  # a timeout: three in a row and it gives up
        assert c.get("/v1/payments").json() == {"payments": []}  # a fresh connection
    assert time.monotonic() - started < BOUND_S


def test_a_huge_body_is_cut_at_the_cap_and_marked(profile: Profile, huge_server: str) -> None:
    with SuiteClient(huge_server, profile, limits=TIGHT) as client:
        response = client.get("/v1/huge")
        assert len(response.content) == 1000
        assert body_cut_at(response) == 1000
        assert response.headers["content-length"] == "62849027"  # as the server sent it
        with pytest.raises(ValueError):
            response.json()  # a cut body is not JSON: no check passes on it by accident
        evidence = client.last_exchange
        assert evidence is not None and evidence.response_body is not None
        assert evidence.response_body.startswith(cut_marker(1000) + "\n[0,0,0,")
        # the rest was not read: the next request does not see it
        assert client.get("/v1/payments").json() == {"payments": []}


def test_a_body_within_the_cap_is_whole_and_unmarked(profile: Profile) -> None:
    with (
        hostile_server(Behaviour.CANNED, canned("200 OK", b'{"ok": true}')) as base_url,
        SuiteClient(base_url, profile, limits=TIGHT) as client,
    ):
        response = client.get("/v1/x")
        assert response.json() == {"ok": True}
        assert body_cut_at(response) is None
        assert client.last_exchange is not None
        assert client.last_exchange.response_body == '{"ok": true}'


def test_the_cap_counts_decoded_bytes_and_headers_stay_as_sent(profile: Profile) -> None:
    bomb = gzip.compress(b"x" * 5_000_000)
    answer = canned("200 OK", bomb, "text/plain", Content_Encoding="gzip")
    with (
        hostile_server(Behaviour.CANNED, answer) as base_url,
        SuiteClient(base_url, profile, limits=TIGHT) as client,
    ):
        response = client.get("/v1/x")
        assert response.content == b"x" * 1000
        assert body_cut_at(response) == 1000
        assert response.headers["content-encoding"] == "gzip"


# -- requests: the schema family's session ---------------------------------------------------
@pytest.mark.parametrize("behaviour", TRICKLES)
def test_the_schema_session_ends_a_trickle_at_the_deadline(
    profile: Profile, behaviour: Behaviour
) -> None:
    session = signed_session(profile, limits=TIGHT)
    started = time.monotonic()
    with hostile_server(behaviour) as base_url:
        with pytest.raises(RequestsDeadlineExceeded, match="no complete response within 1 s"):
            session.get(base_url + "/v1/slow", timeout=(5, 15), stream=True)
        assert session.get(base_url + "/v1/payments", timeout=(5, 15)).json() == {"payments": []}
    assert time.monotonic() - started < BOUND_S
    # what the schema runner catches and reports as "no response"
    assert issubclass(RequestsDeadlineExceeded, requests.Timeout)


def test_the_schema_session_cuts_a_huge_body_and_evidence_says_so(
    profile: Profile, huge_server: str
) -> None:
    session = signed_session(profile, limits=TIGHT)
    response = session.get(huge_server + "/v1/huge", timeout=(5, 15), stream=True)
    assert len(response.content) == 1000
    assert request_body_cut_at(response.request) == 1000
    evidence = evidence_from(schemathesis.Response.from_requests(response, verify=True), ())
    assert evidence.response_body is not None
    assert evidence.response_body.startswith(cut_marker(1000) + "\n[0,0,0,")
    follow_up = session.get(huge_server + "/v1/payments", timeout=(5, 15))
    assert follow_up.json() == {"payments": []}
    assert request_body_cut_at(follow_up.request) is None
