"""Proof of the payments family (conformance/suite/payments/).

Against the unfaulted reference server every payments check passes, whatever the seed, in
quick and default mode; against a reference server with one payments fault switched on (the
family's own faults and the older ones in its area), the family reports a failure naming the
requirement the fault breaks.
"""

from __future__ import annotations

import pytest

from conformance.core.results import Outcome, RunResult
from conformance.reference.faults import catalogue
from tests.suite.proofs import family_failures, run_family

pytestmark = pytest.mark.slow

FAMILY = "payments"
OLDER_FAULTS = (
    "state-cancel-canceled-payment-200",
    "state-accept-underpaid-pending",
    "payment-expires-at-ignores-expires-in",
    "payments-list-oldest-first",
    "payments-cursor-foreign-accepted",
    "payment-empty-quotes-accepted",
    "payment-duplicate-order-accepted",
    "payment-accepted-raw-is-quoted",
    "deposit-underpaid-settles",
    "payments-list-limit-max-unenforced",
    "payments-expires-in-unbounded",
)
FAULTS = {
    fault.name: set(fault.breaks)
    for fault in catalogue()
    if fault.source == "payments.yaml" or fault.name in OLDER_FAULTS
}
EXPECTED_PASSED = {
    *(f"PAY-{n:03d}" for n in range(1, 21)),
    *(f"PAY-STATE-{n:03d}" for n in range(1, 10)),
    *(f"HELP-{n:03d}" for n in (1, 2, 5, 6, 7, 8, 9)),
    "FIX-003",
    "FIX-004",
    "OPS-001",
    "OPS-019",
    "SHAPE-025",
    "IDEM-009",
}


def run(
    seed: int,
    *,
    fault: str | None = None,
    quick: bool = True,
    profile: str = "default",
    only: set[str] | None = None,
) -> RunResult:
    return run_family(FAMILY, seed, fault=fault, quick=quick, profile=profile, only=only or ())


@pytest.mark.parametrize(("seed", "quick"), [(3, False), (17, True)])
def test_the_reference_server_passes_every_payments_check(
    seed: int, quick: bool, short_lived: str
) -> None:
    # a full run waits for a payment to expire: one of the short-lived profile takes seconds
    result = run(seed, quick=quick, profile="default" if quick else short_lived)
    assert family_failures(result, FAMILY) == {}
    passed = {
        rid
        for check in result.checks
        if check.family == FAMILY and check.outcome is Outcome.PASSED
        for rid in check.requirement_ids
    }
    assert not EXPECTED_PASSED - passed
    expiry = [c for c in result.checks if c.requirement_ids == ("PAY-STATE-010",)]
    assert expiry and all(c.outcome is not Outcome.FAILED for c in expiry)
    if quick:
        assert all("--quick" in (c.message or "") for c in expiry)
    else:  # however fast the family's run was, the expiry was waited for
        assert all(c.outcome is Outcome.PASSED for c in expiry)


def test_the_family_has_its_own_faults() -> None:
    own = [name for name in FAULTS if name not in OLDER_FAULTS]
    assert len(own) >= 5


@pytest.mark.parametrize(("fault", "breaks"), sorted(FAULTS.items()))
def test_a_payments_fault_fails_the_requirement_it_breaks(fault: str, breaks: set[str]) -> None:
    found = family_failures(run(29, fault=fault, only=breaks), FAMILY)
    assert breaks <= set(found), f"{fault}: failed {sorted(found)}"
