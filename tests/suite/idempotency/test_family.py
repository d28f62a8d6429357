"""Proof of the idempotency family (conformance/suite/test_idempotency.py).

Against the unfaulted reference server every idempotency check passes, whatever the seed;
against a reference server with one idempotency fault switched on, the family reports a
failure that names the requirement the fault breaks.
"""

from __future__ import annotations

import pytest

from conformance.core.contract import operations
from conformance.core.results import RunResult
from tests.suite.proofs import family_failures, family_passed, run_family

pytestmark = pytest.mark.slow

FAMILY = "idempotency"


def run(
    seed: int, *, fault: str | None = None, quick: bool = True, only: set[str] | None = None
) -> RunResult:
    return run_family(FAMILY, seed, fault=fault, quick=quick, only=only or ())


def failures(result: RunResult) -> dict[str, list[str]]:
    return family_failures(result, FAMILY)


@pytest.mark.parametrize(("seed", "quick"), [(5, False), (31, True)])
def test_the_reference_server_passes_every_idempotency_check(seed: int, quick: bool) -> None:
    result = run(seed, quick=quick)
    assert failures(result) == {}
    keyed = {op.operation_id for op in operations() if op.accepts_idempotency_key}
    checked = {c.operation_id for c in result.checks if c.family == FAMILY}
    assert keyed <= checked
    passed = family_passed(result, FAMILY)
    expected = {f"IDEM-{n:03d}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 18)}
    assert expected | {"LIMIT-001"} <= passed


@pytest.mark.parametrize(
    ("fault", "breaks"),
    [
        ("idem-replay-reexecutes", {"IDEM-007", "IDEM-009"}),
        ("idem-replay-missing-header", {"IDEM-008"}),
        ("idem-reuse-replays-first", {"IDEM-010", "IDEM-011"}),
        ("idem-errors-stored", {"IDEM-014"}),
        ("idem-key-128-rejected", {"IDEM-004"}),
        ("idem-key-not-required", {"IDEM-001", "IDEM-005"}),
        ("idem-scope-global", {"IDEM-015"}),
        ("error-body-text-plain", {"ERR-001", "ERR-005"}),
        ("replay-header-on-first-response", {"IDEM-008"}),
    ],
)
def test_an_idempotency_fault_fails_the_requirement_it_breaks(fault: str, breaks: set[str]) -> None:
    found = failures(run(23, fault=fault, only=breaks))
    assert breaks <= set(found), f"{fault}: failed {sorted(found)}"
