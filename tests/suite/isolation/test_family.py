"""Proof of the isolation family (conformance/suite/isolation/).

Against the unfaulted reference server every isolation check passes, whatever the seed, and
every requirement of the family is exercised; against a reference server with one isolation
fault switched on, the quick run fails the requirements that fault names.
"""

from __future__ import annotations

import pytest

from conformance.core.results import Outcome, RunResult
from conformance.reference.faults import catalogue
from tests.suite.proofs import family_failures, run_family

pytestmark = pytest.mark.slow

FAMILY = "isolation"
EXERCISED = {f"TEN-{n:03d}" for n in range(1, 9)} | {"FIX-001", "FIX-002", "HELP-009"}
FAULTS = sorted(
    (fault.name, set(fault.breaks)) for fault in catalogue() if fault.category == "isolation"
)


def run(
    seed: int, *, fault: str | None = None, quick: bool = True, only: set[str] | None = None
) -> RunResult:
    return run_family(FAMILY, seed, fault=fault, quick=quick, only=only or ())


def failures(result: RunResult) -> dict[str, list[str]]:
    return family_failures(result, FAMILY)


@pytest.mark.parametrize(("seed", "quick"), [(7, False), (41, True)])
def test_the_reference_server_passes_every_isolation_check(seed: int, quick: bool) -> None:
    result = run(seed, quick=quick)
    assert failures(result) == {}
    passed = {
        rid
        for check in result.checks
        if check.family == FAMILY and check.outcome is Outcome.PASSED
        for rid in check.requirement_ids
    }
    assert passed >= EXERCISED


def test_the_catalogue_has_the_isolation_faults_this_family_catches() -> None:
    names = {name for name, _ in FAULTS}
    assert len(names) >= 14
    assert {
        "isolation-payment-cross-merchant",
        "isolation-list-all-merchants",
        "isolation-payout-cross-merchant",
        "isolation-order-no-global",
    } <= names


@pytest.mark.parametrize(("fault", "breaks"), FAULTS, ids=[name for name, _ in FAULTS])
def test_an_isolation_fault_fails_the_requirements_it_breaks(fault: str, breaks: set[str]) -> None:
    found = failures(run(19, fault=fault, only=breaks))
    assert breaks <= set(found), f"{fault}: failed {sorted(found)}"
