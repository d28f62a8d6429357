"""Neither HTTP stack of the suite follows a redirect: the 3xx is the answer its caller gets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.suite.schema.loading import signed_session
from conformance.suite.wire.client import SuiteClient
from tests.engine.redirecting import Seen, counting_server, redirecting_server


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


@pytest.fixture
def servers() -> Iterator[tuple[str, Seen]]:
    """A server redirecting every request but preflight's probes to another host, and what
    that host received."""
    with counting_server() as (other, seen), redirecting_server(other) as hostile:
        yield hostile, seen


def test_the_suite_client_gets_the_redirect_itself(
    servers: tuple[str, Seen], profile: Profile
) -> None:
    hostile, seen = servers
    with SuiteClient(hostile, profile) as client:
        response = client.post("/v1/payments", json={"user_id": "u"})
    assert response.status_code == 307
    assert seen.requests == []


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "DELETE"])
def test_the_schema_session_follows_no_redirect_even_when_asked_to(
    servers: tuple[str, Seen], profile: Profile, method: str
) -> None:
    hostile, seen = servers
    with signed_session(profile) as session:
        response = session.request(
            method, hostile + "/v1/subscriptions", json={}, allow_redirects=True, timeout=5
        )
    assert response.status_code == 307  # before: 200 from the other host
    assert response.headers["Location"].endswith("/v1/subscriptions")
    assert seen.requests == []
