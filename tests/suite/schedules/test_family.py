"""Proof of the schedules family (conformance/suite/schedules/).

Against the unfaulted reference server every check of the family passes, whatever the seed,
and every requirement of the family is exercised; against a reference server with one fault
of its area switched on (a transition that should be refused, a field a replace keeps, a
scaling with the wrong decimals, a split rule not enforced...), the quick run reports a
failure naming the requirement the fault breaks.
"""

from __future__ import annotations

import pytest

from conformance.core.results import RunResult
from tests.suite.proofs import family_failures, family_passed, run_family

pytestmark = pytest.mark.slow

FAMILY = "schedules"
EXERCISED = {
    "OPS-002",
    "OPS-003",
    "OPS-004",
    "OPS-021",
    "SHAPE-021",
    "FIX-005",
    "FIX-006",
    *(f"SUB-{n:03d}" for n in range(1, 6)),
    *(f"SUB-STATE-{n:03d}" for n in range(1, 4)),
    *(f"PAYOUT-{n:03d}" for n in range(1, 13)),
    *(f"PAYOUT-STATE-{n:03d}" for n in range(1, 13)),
    *(f"SPLIT-{n:03d}" for n in range(1, 9)),
}


def run(
    seed: int, *, fault: str | None = None, quick: bool = True, only: set[str] | None = None
) -> RunResult:
    return run_family(FAMILY, seed, fault=fault, quick=quick, only=only or ())


def failures(result: RunResult) -> dict[str, list[str]]:
    return family_failures(result, FAMILY)


@pytest.mark.parametrize(("seed", "quick"), [(3, False), (17, True)])
def test_the_reference_server_passes_every_schedules_check(seed: int, quick: bool) -> None:
    result = run(seed, quick=quick)
    assert failures(result) == {}
    passed = family_passed(result, FAMILY)
    assert passed >= EXERCISED


@pytest.mark.parametrize(
    ("fault", "breaks"),
    [
        # the catalogue's earlier faults of this area
        ("state-cancel-canceled-subscription-200", {"SUB-STATE-003"}),
        ("state-pause-retired-allowed", {"PAYOUT-STATE-009"}),
        ("state-put-does-not-resume", {"PAYOUT-STATE-005"}),
        ("state-enabled-while-paused", {"PAYOUT-011"}),
        ("state-retire-twice-allowed", {"PAYOUT-STATE-012"}),
        ("payout-min-send-raw-wrong-decimals", {"PAYOUT-002"}),
        ("payout-first-run-at-past-accepted", {"PAYOUT-005"}),
        ("payout-foreign-withdraw-address-accepted", {"PAYOUT-008"}),
        ("subscription-next-bill-at-now", {"SUB-004"}),
        ("split-sum-over-10000-accepted", {"SPLIT-004"}),
        ("split-self-allowed", {"SPLIT-002"}),
        ("shape-cancel-subscription-has-authorize-url", {"SHAPE-021"}),
        ("validation-bps-range-as-business-rule", {"SPLIT-006", "STATUS-008"}),
        # faults/schedules.yaml
        ("payout-replace-keeps-interval", {"PAYOUT-010"}),
        ("payout-pause-paused-bumps-updated-at", {"PAYOUT-STATE-008"}),
        ("payout-retire-leaves-enabled", {"PAYOUT-011"}),
        ("payout-min-send-raw-truncates-fraction", {"PAYOUT-002"}),
        ("payout-retired-at-set-on-pause", {"PAYOUT-012"}),
        ("payout-replace-skips-withdraw-address-check", {"PAYOUT-008"}),
        ("payout-next-run-at-ignores-first-run-at", {"PAYOUT-004", "PAYOUT-010"}),
        ("subscription-undeployed-chain-accepted", {"SUB-001"}),
        ("split-repeated-merchant-accepted", {"SPLIT-003"}),
        ("split-template-empty-keeps-shares", {"SPLIT-008"}),
    ],
)
def test_a_schedules_fault_fails_the_requirement_it_breaks(fault: str, breaks: set[str]) -> None:
    found = failures(run(29, fault=fault, only=breaks))
    assert breaks <= set(found), f"{fault}: failed {sorted(found)}"
