"""Proof of the auth family (conformance/suite/test_auth.py).

Against the unfaulted reference server every auth check passes, whatever the seed; against a
reference server with one authentication fault switched on, the family reports a failure that
names the requirement the fault breaks.
"""

from __future__ import annotations

import pytest

from conformance.core.contract import operations
from conformance.core.results import Outcome, RunResult
from tests.suite.proofs import family_failures, run_family

pytestmark = pytest.mark.slow

FAMILY = "auth"


def run(
    seed: int, *, fault: str | None = None, quick: bool = True, only: set[str] | None = None
) -> RunResult:
    return run_family(FAMILY, seed, fault=fault, quick=quick, only=only or ())


def failures(result: RunResult) -> dict[str, list[str]]:
    return family_failures(result, FAMILY)


@pytest.mark.parametrize(("seed", "quick"), [(3, False), (29, True)])
def test_the_reference_server_passes_every_auth_check(seed: int, quick: bool) -> None:
    result = run(seed, quick=quick)
    assert failures(result) == {}
    checked = {c.operation_id for c in result.checks if c.family == FAMILY}
    assert checked == {op.operation_id for op in operations()}
    passed = {r.requirement.id for r in result.requirements if r.outcome is Outcome.PASSED}
    assert {f"AUTH-{n:03d}" for n in range(1, 21)} <= passed


@pytest.mark.parametrize(
    ("fault", "breaks"),
    [
        ("auth-accepts-stale-timestamp", {"AUTH-010", "AUTH-011"}),
        ("auth-nonce-not-checked", {"AUTH-016"}),
        ("auth-signature-ignores-body", {"AUTH-014"}),
        ("auth-signature-ignores-query", {"AUTH-015"}),
        ("auth-nonce-recorded-before-signature", {"AUTH-017"}),
        ("auth-bad-signature-403", {"AUTH-013"}),
        ("auth-nonce-optional", {"AUTH-004", "AUTH-006"}),
        ("error-body-text-plain", {"ERR-001", "ERR-005"}),
        ("error-body-without-message", {"ERR-004", "ERR-005"}),
    ],
)
def test_an_auth_fault_fails_the_requirement_it_breaks(fault: str, breaks: set[str]) -> None:
    found = failures(run(17, fault=fault, only=breaks))
    assert breaks <= set(found), f"{fault}: failed {sorted(found)}"
