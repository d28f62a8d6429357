"""The factories (conformance/suite/factories.py): the valid base request of every operation.

The boundaries, auth and idempotency families vary one part of these requests at a time, so
each must really be valid: the reference server answers every one with its success status.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conformance.core.contract import effective_contract, operations
from conformance.core.eip712 import Eip712Domain, TransferAuthorization, recover_signer
from conformance.core.profile import Profile, load_profile
from conformance.reference.server import ReferenceServer
from conformance.suite.factories import (
    ABSENT,
    Factories,
    RequestSpec,
    locate_operation,
    sign_payment,
)
from conformance.suite.tool_errors import PrerequisiteError
from conformance.suite.wire.client import SuiteClient


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


@pytest.fixture(scope="module")
def contract(profile: Profile) -> dict[str, Any]:
    return effective_contract(profile)


@pytest.fixture(scope="module")
def factories(profile: Profile, contract: dict[str, Any]) -> Iterator[Factories]:
    with (
        ReferenceServer(profile=profile) as server,
        SuiteClient(server.base_url, profile) as client,
    ):
        yield Factories(client, profile, contract)


@pytest.mark.parametrize("operation_id", [op.operation_id for op in operations()])
def test_every_operation_has_a_valid_request(factories: Factories, operation_id: str) -> None:
    spec = factories.request(operation_id)
    response = factories.send(spec)
    assert response.status_code == factories.profile.success_status(operation_id), response.text


def test_values_come_from_the_profile_fixtures(factories: Factories, profile: Profile) -> None:
    body = factories.request("createPayoutSchedule").body
    assert body["currency_id"] in profile.currencies
    assert body["target_chain_id"] in profile.currencies[body["currency_id"]].chains
    assert body["withdraw_address_id"] in profile.withdraw_addresses(profile.primary.merchant_id)
    split = factories.request("createPayment").body["splits"][0]
    assert split["merchant_id"] in profile.split_merchants
    assert split["merchant_id"] != profile.primary.merchant_id


def test_two_payment_requests_never_share_an_order_number(factories: Factories) -> None:
    first, second = (factories.request("createPayment").body for _ in range(2))
    assert first["merchant_order_no"] != second["merchant_order_no"]


def test_a_refused_variant_is_refused_by_the_operation_itself(factories: Factories) -> None:
    for operation_id in ("createPayment", "cancelPayment", "putWebhookEndpoint"):
        spec = factories.request(operation_id)
        response = factories.send(factories.refused_variant(spec))
        assert response.status_code in (404, 422), (operation_id, response.text)


def test_a_profile_without_test_helpers_marks_accept_underpaid_not_ready(
    factories: Factories, profile: Profile
) -> None:
    data = {**profile.data, "profile": {**profile.data["profile"], "test_helpers": False}}
    without = Factories(factories.client, Profile("x", "x", "0", data), factories.contract)
    spec = without.request("acceptUnderpaidPayment")
    assert not spec.ready and "test helpers" in spec.note
    with pytest.raises(PrerequisiteError, match="deposit"):
        without.underpaid_payment()


def test_underpaid_payment_is_underpaid_or_a_failed_prerequisite(
    factories: Factories, profile: Profile, contract: dict[str, Any]
) -> None:
    assert factories.underpaid_payment()["id"]
    with (
        ReferenceServer(profile=profile, faults=("deposit-underpaid-settles",)) as server,
        SuiteClient(server.base_url, profile) as client,
        pytest.raises(PrerequisiteError, match="short of its quote it is 'settled'"),
    ):
        Factories(client, profile, contract).underpaid_payment()


def test_endpoints_made_for_cases_hear_of_the_events_a_run_emits_least(
    factories: Factories, profile: Profile
) -> None:
    # each one hears of its events for the rest of the run, and its deliveries are retried
    assert factories.request("putWebhookEndpoint").body["event_types"] == [
        "payment.expired",
        "subscription.canceled",
    ]
    # a profile whose events no cause emits: the last two of its list
    section = profile.data["webhooks"]
    silent = {**section, "emits": {key: "" for key in section["emits"]}}
    data = {**profile.data, "webhooks": silent}
    without = Factories(factories.client, Profile("x", "x", "0", data), factories.contract)
    assert without.rare_event_types == ["x402.settled", "payout_schedule.updated"]


def test_the_runs_endpoint_hears_of_new_payments_only(factories: Factories) -> None:
    endpoint_id = factories.webhook_endpoint()
    listing = factories.client.get("/v1/webhook-endpoints").json()["endpoints"]
    mine = next(e for e in listing if e["id"] == endpoint_id)
    assert mine["event_types"] == ["payment.created"]


def test_the_x402_payload_recovers_to_its_wallet(factories: Factories) -> None:
    requirements = factories.x402_requirements("exact")
    entry = requirements["accepts"][0]
    payload = sign_payment("0x" + "11" * 32, entry, now=1_700_000_000)
    authorization = TransferAuthorization.from_payload(payload["authorization"])
    signer = recover_signer(
        Eip712Domain.from_extra(entry["extra"]), authorization, payload["signature"]
    )
    assert signer is not None and signer.lower() == payload["authorization"]["from"].lower()
    assert payload["authorization"]["value"] == entry["max_amount_required"]


def test_request_spec_paths_and_business_fields() -> None:
    spec = RequestSpec(
        "cancelPayment",
        "POST",
        "/v1/payments/{id}/cancel",
        path_params={"id": "a b/c"},
        business_fields=(("quotes",), ("splits", "[]", "merchant_id")),
    )
    assert spec.path == "/v1/payments/a%20b%2Fc/cancel"
    assert spec.body is ABSENT and not spec.has_body
    assert spec.governed_by_business_rule("body", ("quotes", "{}", "amount"))
    assert spec.governed_by_business_rule("body", ("splits", "[]", "merchant_id"))
    assert not spec.governed_by_business_rule("body", ("splits", "[]", "bps"))
    assert not spec.governed_by_business_rule("query", ("quotes",))


def test_locate_operation_reads_the_contract(contract: dict[str, Any]) -> None:
    assert locate_operation(contract, "retirePayoutSchedule") == (
        "DELETE",
        "/v1/payout-schedules/{id}",
    )
    with pytest.raises(KeyError):
        locate_operation(contract, "noSuchOperation")
