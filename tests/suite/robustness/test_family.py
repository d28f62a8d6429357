"""Proof of the robustness family (conformance/suite/robustness/).

Against the unfaulted reference server no robustness check fails, whatever the seed, and every
operation is met; against a reference server with one robustness fault switched on (the new
ones of faults/robustness.yaml and those of faults/core.yaml in its area), the family fails the
requirement ids the fault names.
"""

from __future__ import annotations

import pytest

from conformance.core.contract import operations
from conformance.core.results import Outcome, RunResult
from conformance.reference.faults import catalogue
from tests.suite.proofs import family_failures, run_family

pytestmark = pytest.mark.slow

FAMILY = "robustness"
FAULTS = (
    "robust-huge-body-500",
    "robust-malformed-json-500",
    "robust-non-ascii-id-500",
    "validation-ignores-content-type",
    "auth-after-routing",
    *(f.name for f in catalogue() if f.source == "robustness.yaml"),
)


def run(
    seed: int, *, fault: str | None = None, quick: bool = True, only: set[str] | None = None
) -> RunResult:
    return run_family(FAMILY, seed, fault=fault, quick=quick, only=only or ())


@pytest.mark.parametrize(("seed", "quick"), [(5, False), (31, True)])
def test_the_reference_server_passes_every_robustness_check(seed: int, quick: bool) -> None:
    result = run(seed, quick=quick)
    assert family_failures(result, FAMILY) == {}
    mine = [c for c in result.checks if c.family == FAMILY]
    passed = {rid for c in mine if c.outcome is Outcome.PASSED for rid in c.requirement_ids}
    assert {
        "SHAPE-030",
        "SHAPE-031",
        "STATUS-003",
        "STATUS-004",
        "STATUS-011",
        "STATUS-013",
        "STATUS-018",
        "STATUS-019",
        "STATUS-020",
        "STATUS-021",
        "VER-001",
        "ERR-005",
        "ERR-006",
    } <= passed
    if not quick:
        assert {op.operation_id for op in operations()} <= {c.operation_id for c in mine}


def test_the_new_faults_are_at_least_five() -> None:
    assert len(FAULTS) >= 10


@pytest.mark.parametrize("fault", FAULTS)
def test_a_robustness_fault_fails_the_ids_it_names(fault: str) -> None:
    breaks = {f.name: set(f.breaks) for f in catalogue()}[fault]
    found = family_failures(run(23, fault=fault, only=breaks), FAMILY)
    assert breaks <= set(found), f"{fault}: failed {sorted(found)}"
