"""The reference server honours the profile's choices of what the specification leaves open:
the replay header (or none), the validation status and code, the idempotency errors, and the
answer to a body that is not application/json."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.reference.server import ReferenceServer
from tests.reference.factories import error_code, payment_body
from tests.reference.signed_client import NO_KEY, SignedClient

DEFAULT = load_profile()


def choosing(**sections: dict[str, Any]) -> Profile:
    """The default profile with some keys of some sections changed."""
    data = {**DEFAULT.data, **{k: {**DEFAULT.data[k], **v} for k, v in sections.items()}}
    return replace(DEFAULT, data=data)


@pytest.fixture
def client(request: pytest.FixtureRequest) -> Iterator[SignedClient]:
    profile: Profile = request.param
    with (
        ReferenceServer(profile=profile) as server,
        SignedClient(server.base_url, profile.primary) as signed,
    ):
        yield signed


def replayed(client: SignedClient) -> tuple[dict[str, str], dict[str, str]]:
    """The headers of a create and of its replay."""
    key, body = uuid.uuid4().hex, payment_body()
    first = client.post("/v1/payments", body, idempotency_key=key)
    again = client.post("/v1/payments", body, idempotency_key=key)
    assert first.status_code == again.status_code == 201
    assert again.content == first.content
    return dict(first.headers), dict(again.headers)


@pytest.mark.parametrize(
    "client", [choosing(idempotency={"replay_header": "X-Replayed"})], indirect=True
)
def test_a_replay_carries_the_profiles_replay_header(client: SignedClient) -> None:
    first, again = replayed(client)
    assert again.get("x-replayed") == "true"
    assert "x-replayed" not in first and "idempotent-replayed" not in again


@pytest.mark.parametrize("client", [choosing(idempotency={"replay_header": ""})], indirect=True)
def test_without_a_replay_header_a_replay_carries_none(client: SignedClient) -> None:
    _, again = replayed(client)
    assert "idempotent-replayed" not in again


MOVED = choosing(
    status={
        "validation": {"status": 422, "code": "invalid_request"},
        "unsupported_media_type": [{"status": 415, "code": "unsupported_media_type"}],
    },
    idempotency={
        "missing": {"status": 428, "code": "key_required"},
        "reused": {"status": 409, "code": "key_conflict"},
    },
)


@pytest.mark.parametrize("client", [MOVED], indirect=True)
def test_errors_take_the_profiles_statuses_and_codes(client: SignedClient) -> None:
    malformed = client.post("/v1/payments", {**payment_body(), "quotes": 1})
    assert (malformed.status_code, error_code(malformed)) == (422, "invalid_request")
    missing = client.post("/v1/payments", payment_body(), idempotency_key=NO_KEY)
    assert (missing.status_code, error_code(missing)) == (428, "key_required")
    key = uuid.uuid4().hex
    assert client.post("/v1/payments", payment_body(), idempotency_key=key).status_code == 201
    reused = client.post("/v1/payments", payment_body(), idempotency_key=key)
    assert (reused.status_code, error_code(reused)) == (409, "key_conflict")
    text = client.post("/v1/payments", payment_body(), content_type="text/plain")
    assert (text.status_code, error_code(text)) == (415, "unsupported_media_type")
