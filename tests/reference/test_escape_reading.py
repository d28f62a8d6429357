"""How the reference server reads a "%" not followed by two hex digits (profile 3,
``status.malformed_percent_escape``): refused with 400 ``validation_error`` (the default reading),
or read literally as most HTTP stacks do, the literal value then judged like any other. An
escape of bytes that are not UTF-8 is refused either way."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace

import pytest

from conformance.core.profile import Profile
from conformance.reference.config import ServerConfig
from conformance.reference.server import ReferenceServer
from conformance.reference.validation import RequestInvalid, operation_validators
from tests.reference.factories import error_code, payment_body
from tests.reference.signed_client import SignedClient

STATEMENT = "/v1/statements?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&currency_id="


@pytest.fixture(scope="module")
def literal(profile: Profile) -> Iterator[SignedClient]:
    with (
        ReferenceServer(profile=profile, escape_reading="literal") as server,
        SignedClient(server.base_url, profile.primary) as client,
    ):
        yield client


def test_a_literal_reading_filters_by_the_text_as_sent(literal: SignedClient) -> None:
    order = f"order-{uuid.uuid4().hex[:8]}%zz"
    created = literal.post("/v1/payments", payment_body(merchant_order_no=order))
    assert created.status_code == 201, created.text
    literal.post("/v1/payments", payment_body())  # another payment, which the filter leaves out

    listed = literal.get(f"/v1/payments?merchant_order_no={order}")

    assert listed.status_code == 200, listed.text
    assert [p["id"] for p in listed.json()["payments"]] == [created.json()["id"]]
    well_formed = literal.get(f"/v1/payments?merchant_order_no={order.replace('%', '%25')}")
    assert well_formed.json()["payments"] == listed.json()["payments"]


def test_a_literal_reading_judges_the_literal_value(literal: SignedClient) -> None:
    unknown_currency = literal.get(STATEMENT + "usdc%zz")
    assert (unknown_currency.status_code, error_code(unknown_currency)) == (
        422,
        "unknown_currency",
    )
    unknown_id = literal.post("/v1/payments/pay_missing%zz/cancel")
    assert (unknown_id.status_code, error_code(unknown_id)) == (404, "not_found")
    assert literal.get("/v1/payments?limit=2%zz").status_code == 400  # no integer, read or not


def test_a_put_reads_its_path_id_literally(literal: SignedClient) -> None:
    body = {"url": "https://example.test/hook", "event_types": ["payment.created"]}
    response = literal.put("/v1/webhook-endpoints/we_literal%zz", body)
    assert response.status_code == 200, response.text
    assert response.json()["id"] == "we_literal%zz"


@pytest.mark.parametrize("bad", ["%FF%FE", "%C3"])
def test_escapes_that_are_not_utf8_are_refused_in_either_reading(
    literal: SignedClient, bad: str
) -> None:
    response = literal.get(f"/v1/payments?merchant_order_no=order{bad}")
    assert (response.status_code, error_code(response)) == (400, "validation_error")


def test_the_default_reading_refuses(alpha: SignedClient) -> None:
    response = alpha.get(STATEMENT + "usdc%zz")
    assert (response.status_code, error_code(response)) == (400, "validation_error")


def test_the_validator_reads_a_malformed_escape_as_text_when_told() -> None:
    validator = operation_validators()["listPayments"]
    assert validator.query(b"merchant_order_no=a%zz", literal=True) == {"merchant_order_no": "a%zz"}
    with pytest.raises(RequestInvalid):
        validator.query(b"merchant_order_no=a%zz")
    assert validator.path({"id": "a%"}, {"id": "a%"}, literal=True) == {"id": "a%"}


def pinned(profile: Profile, reading: str) -> Profile:
    status = {**profile.data["status"], "malformed_percent_escape": reading}
    return replace(profile, data={**profile.data, "status": status})


def test_a_reading_the_profile_pins_otherwise_is_refused(profile: Profile) -> None:
    refuse = pinned(profile, "refuse")
    with pytest.raises(ValueError, match=r"pins status\.malformed_percent_escape = 'refuse'"):
        ServerConfig(refuse, escape_reading="literal")
    assert not ServerConfig(refuse).literal_escapes
    assert ServerConfig(pinned(profile, "literal")).literal_escapes
    assert not ServerConfig(profile).literal_escapes  # "either": the server refuses
    with pytest.raises(ValueError, match="one of refuse, literal"):
        ServerConfig(profile, escape_reading="lenient")
