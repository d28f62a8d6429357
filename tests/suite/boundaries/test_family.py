"""Proof of the boundaries family (conformance/suite/boundaries/test_boundaries.py).

Against the unfaulted reference server every boundary case passes, whatever the seed; against
a reference server with one validation fault switched on (a pattern that lets "01" or a
trailing newline through, an upper bound off by one, a maximum length not enforced...), the
family reports a failure that names the requirement the fault breaks.
"""

from __future__ import annotations

import pytest

from conformance.core.results import Outcome, RunResult
from conformance.judge.boundary_requirements import RequirementMap
from tests.suite.proofs import family_failures, run_family

pytestmark = pytest.mark.slow

FAMILY = "boundaries"


def run(
    seed: int, *, fault: str | None = None, quick: bool = True, only: set[str] | None = None
) -> RunResult:
    return run_family(FAMILY, seed, fault=fault, quick=quick, only=only or ())


def failures(result: RunResult) -> dict[str, list[str]]:
    return family_failures(result, FAMILY)


@pytest.mark.parametrize(("seed", "quick"), [(7, False), (43, True)])
def test_the_reference_server_passes_every_boundary_case(seed: int, quick: bool) -> None:
    result = run(seed, quick=quick)
    assert failures(result) == {}
    mine = [c for c in result.checks if c.family == FAMILY]
    assert not [c for c in mine if c.outcome is Outcome.NOT_EXERCISED]
    covered = {rid for c in mine for rid in c.requirement_ids}
    assert {"LIMIT-002", "LIMIT-003", "LIMIT-005", "LIMIT-006", "LIMIT-008", "LIMIT-010"} <= covered
    assert {"SHAPE-034", "SHAPE-040", "SHAPE-041", "OPS-028", "OPS-036", "STATUS-016"} <= covered
    assert set(RequirementMap.load().error_shape) <= covered


def test_a_selection_sends_the_cases_of_the_constraints_that_judge_it_only() -> None:
    # what a replay line (run --only SHAPE-041) and the fault proofs below rely on
    result = run(43, only={"SHAPE-041"})
    assert {c.family for c in result.checks} == {FAMILY}  # the schema phases check it too
    mine = [c.check_id for c in result.checks if c.family == FAMILY]
    cases = [c for c in mine if " error shape " not in c]
    assert cases and all("uniqueItems" in c for c in cases), mine
    coverage = [(c.operation_id, c.constraints) for c in result.case_coverage]
    assert coverage == [("putWebhookEndpoint", 1)]
    passed = {r.requirement.id for r in result.requirements if r.outcome is Outcome.PASSED}
    assert passed >= {"SHAPE-041"}


@pytest.mark.parametrize(
    ("fault", "breaks"),
    [
        ("validation-amount-leading-zero", {"SHAPE-040", "STATUS-006"}),
        ("validation-pattern-trailing-newline", {"SHAPE-040", "STATUS-006"}),
        # issue 27: a trailing dot after the integer part ("10."), the nearest miss
        ("validation-decimal-amount-trailing-dot", {"SHAPE-040", "STATUS-006"}),
        ("validation-raw-amount-trailing-dot", {"STATUS-006"}),
        ("validation-interval-max-off-by-one", {"LIMIT-005", "STATUS-008"}),
        ("validation-url-max-length-ignored", {"LIMIT-003", "LIMIT-004", "STATUS-007"}),
        ("validation-unique-items-ignored", {"SHAPE-041", "STATUS-010"}),
        ("validation-integer-float-rejected", {"STATUS-016"}),
        ("payments-list-limit-max-unenforced", {"PAY-017"}),
        ("payments-expires-in-unbounded", {"PAY-012"}),
        ("error-body-text-plain", {"ERR-001", "ERR-005"}),
        ("validation-identifier-length-off-by-one", {"LIMIT-010"}),
        ("validation-bps-range-as-business-rule", {"STATUS-008", "SPLIT-006"}),
        ("validation-amount-unicode-digits", {"SHAPE-040", "OPS-028", "STATUS-006"}),
        ("validation-date-time-fromisoformat", {"SHAPE-045", "STATUS-022"}),
        ("payout-replace-rounds-decimals", {"PAYOUT-003"}),
        # issue 21: one fault per near-miss class no older fault exercised
        ("validation-null-as-absent", {"SHAPE-031", "STATUS-004"}),
        ("validation-number-coerced-to-string", {"SHAPE-031", "STATUS-004"}),
        ("validation-numeric-string-coerced", {"SHAPE-031", "STATUS-004"}),
        ("validation-object-stored-as-json-text", {"SHAPE-031", "STATUS-004"}),
        ("validation-object-field-accepts-array", {"SHAPE-031", "SHAPE-043", "STATUS-004"}),
    ],
)
def test_a_validation_fault_fails_the_requirement_it_breaks(fault: str, breaks: set[str]) -> None:
    found = failures(run(13, fault=fault, only=breaks))
    assert breaks <= set(found), f"{fault}: failed {sorted(found)}"
