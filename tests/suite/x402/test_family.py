"""Proof of the x402 family (conformance/suite/x402/).

Against the unfaulted reference server every x402 check passes, whatever the seed, in default
and quick mode; against a reference server with one x402 fault switched on, the family fails
the requirements the fault names. The effective contract carries the profile's payment_payload
shape, so that the schema and boundaries families expect 400 for a malformed payload too.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from conformance.core.contract import effective_contract, load_document
from conformance.core.profile import load_profile
from conformance.core.results import RunResult
from conformance.reference.faults import catalogue
from tests.suite.proofs import family_failures, family_passed, run_family

FAMILY = "x402"
X402_IDS = {
    *(f"X402-{n:03d}" for n in range(1, 31)),
    "X402-PAYLOAD-001",
    "OPS-030",
    "OPS-033",
    "OPS-034",
    "SHAPE-024",
}
# The faults of the family's area: x402.yaml and the x402 entries of domain.yaml.
FAULTS = sorted(
    (f.name, frozenset(f.breaks))
    for f in catalogue()
    if f.name.startswith("x402-") and f.source in ("x402.yaml", "domain.yaml")
)


def run(
    seed: int, *, fault: str | None = None, quick: bool = True, only: set[str] | None = None
) -> RunResult:
    return run_family(FAMILY, seed, fault=fault, quick=quick, only=only or ())


# ------------------------------------------------------------------------ the contract
def test_the_effective_contract_requires_every_payload_field_with_its_format() -> None:
    profile = load_profile()
    shape = profile.x402_payload
    assert shape is not None
    schemas = effective_contract(profile)["components"]["schemas"]
    payload, authorization = schemas["X402PaymentPayload"], schemas["X402Authorization"]
    assert payload["required"] == ["signature", "authorization"]
    assert payload["properties"]["signature"]["pattern"] == shape.signature_pattern
    assert set(authorization["required"]) == {
        "from",
        "to",
        "value",
        "valid_after",
        "valid_before",
        "nonce",
    }
    fields = authorization["properties"]
    assert fields["from"]["pattern"] == fields["to"]["pattern"] == shape.address_pattern
    assert fields["value"]["pattern"] == shape.value_pattern
    assert fields["valid_after"]["format"] == fields["valid_before"]["format"] == "int64"
    assert fields["nonce"]["pattern"] == shape.nonce_pattern
    # the specification's layer is left as the specification states it
    spec = load_document()["components"]["schemas"]["X402PaymentPayload"]
    assert "required" not in spec and "x-unspecified" in spec


def test_a_profile_without_the_payload_shape_keeps_the_specification_layer() -> None:
    profile = load_profile()
    data = copy.deepcopy(profile.data)
    del data["x402"]["payment_payload"]
    open_profile = replace(profile, data=data)
    assert open_profile.x402_payload is None
    schemas = effective_contract(open_profile)["components"]["schemas"]
    assert "required" not in schemas["X402PaymentPayload"]


# ------------------------------------------------------------------------ the family
@pytest.mark.slow
@pytest.mark.parametrize(("seed", "quick"), [(5, False), (31, True)])
def test_the_reference_server_passes_every_x402_check(seed: int, quick: bool) -> None:
    result = run(seed, quick=quick)
    assert family_failures(result, FAMILY) == {}
    passed = family_passed(result, FAMILY)
    assert passed >= X402_IDS


def test_the_family_has_faults_of_its_own() -> None:
    own = [f for f in catalogue() if f.source == "x402.yaml"]
    assert len(own) >= 5
    assert {f.name for f in own} <= {name for name, _ in FAULTS}


@pytest.mark.slow
@pytest.mark.parametrize(("fault", "breaks"), FAULTS, ids=[name for name, _ in FAULTS])
def test_an_x402_fault_fails_a_requirement_it_names(fault: str, breaks: frozenset[str]) -> None:
    found = family_failures(run(23, fault=fault, only=set(breaks)), FAMILY)
    assert breaks & set(found), f"{fault}: failed {sorted(found)}, names {sorted(breaks)}"
