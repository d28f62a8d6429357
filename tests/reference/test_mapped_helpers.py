"""``serve --profile P`` with test helpers mapped to other endpoints, or absent: the reference
server serves a mapped helper at its method, path and body shape with its status, and does not
serve an absent one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.reference.server import ReferenceServer
from tests.profiles import fragment
from tests.reference.factories import create_payment, error_code
from tests.reference.signed_client import SignedClient

MAPPED = (
    'extends = "default"\n[profile]\nname = "sandbox"\n[test_helpers]\nexpire = false\n'
    + fragment("sandbox_deposit")
)
DEFAULT_DEPOSIT = "/v1/test-helpers/payments/{}/deposit"


@pytest.fixture(scope="module")
def mapped(tmp_path_factory: pytest.TempPathFactory) -> Profile:
    path = tmp_path_factory.mktemp("mapped") / "sandbox.toml"
    path.write_text(MAPPED, encoding="utf-8")
    return load_profile(path)


@pytest.fixture(scope="module")
def client(mapped: Profile) -> Iterator[SignedClient]:
    with (
        ReferenceServer(profile=mapped) as server,
        SignedClient(server.base_url, mapped.primary) as signed,
    ):
        yield signed


def _funds(payment_id: str, units: str) -> dict[str, str]:
    return {"asset": "usdc", "network": "base", "units": units, "ref": "tx-0x" + "ab" * 32}


def test_a_mapped_deposit_is_served_at_its_path_with_its_body_and_status(
    client: SignedClient,
) -> None:
    payment = create_payment(client)  # quotes 25 usdc
    path = f"/v1/sandbox/payments/{payment['id']}/funds"
    short = client.put(path, _funds(payment["id"], "10000000"))
    assert short.status_code == 202, short.text
    assert short.json()["status"] == "underpaid"
    full = client.put(path, _funds(payment["id"], "15000000"))
    assert (full.status_code, full.json()["status"]) == (202, "settled")


def test_a_body_not_of_the_mapped_shape_is_a_validation_error(client: SignedClient) -> None:
    payment = create_payment(client)
    path = f"/v1/sandbox/payments/{payment['id']}/funds"
    response = client.put(path, {"currency_id": "usdc", "chain_id": "base", "amount": "1"})
    assert (response.status_code, error_code(response)) == (400, "validation_error")


def test_the_default_paths_and_an_absent_helper_are_not_served(client: SignedClient) -> None:
    payment = create_payment(client)
    deposit = client.post(
        DEFAULT_DEPOSIT.format(payment["id"]),
        {"currency_id": "usdc", "chain_id": "base", "amount": "1"},
    )
    assert (deposit.status_code, error_code(deposit)) == (404, "not_found")
    expire = client.post(f"/v1/test-helpers/payments/{payment['id']}/expire")
    assert (expire.status_code, error_code(expire)) == (404, "not_found")
