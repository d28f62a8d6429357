"""The coverage gate over the real suite: every requirement of the catalogue, and every
operation, documented status code and required field of the effective contract, has a check;
and a default run sends a case for every (operation, constraint, near-miss class) triple."""

from __future__ import annotations

import pytest

from conformance.core.case_coverage import CaseKey
from conformance.core.catalogue import load_catalogue
from conformance.core.contract import effective_contract, operations
from conformance.core.coverage_gate import case_gaps, documented, gaps
from conformance.core.profile import load_profile
from conformance.core.results import RunResult
from conformance.engine.inventory import requirement_checks
from conformance.engine.options import RunOptions
from conformance.engine.runner import run_suite
from conformance.suite.boundaries.classes import applicable_keys
from conformance.suite.selection import SKIPPED_HEADERS

# The constraints of the default profile's effective contract, the (kind, near-miss class)
# pairs that apply to at least one of them, and the (operation, constraint, class) triples.
CONSTRAINTS = 263
CLASSES = 48
TRIPLES = 822


def test_every_requirement_operation_status_and_required_field_has_a_check() -> None:
    catalogue = load_catalogue()
    contract = effective_contract(load_profile())
    checks = requirement_checks()
    found = gaps(catalogue, contract, checks)
    assert not found, "no check for:\n" + "\n".join(f"- {gap}" for gap in found)
    # what the gate held the suite to
    operations = documented(contract)
    assert len(checks) == len(catalogue.requirements) == 338
    assert len(operations) == 20
    assert sum(len(o.statuses) for o in operations) == 102
    assert sum(len(o.required) for o in operations) == 304


# ------------------------------------------------------------------ constraint cases
# The boundaries family alone, every constraint of every operation.
BOUNDARIES = ("boundaries",)


def applicable_everywhere() -> list[CaseKey]:
    contract = effective_contract(load_profile())
    return [
        key
        for op in operations(contract)
        for key in applicable_keys(contract, op.operation_id, skip_headers=SKIPPED_HEADERS)
    ]


def sent_in(result: RunResult, applicable: list[CaseKey]) -> list[CaseKey]:
    """The applicable triples the run's per-operation coverage does not name as missing."""
    reached = {o.operation_id for o in result.case_coverage}
    missing = {m for o in result.case_coverage for m in o.missing}
    return [k for k in applicable if k.operation_id in reached and k.gap() not in missing]


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "quick"), [(7, False), (11, True)])
def test_a_run_sends_a_case_for_every_constraint_and_near_miss_class(
    seed: int, quick: bool
) -> None:
    applicable = applicable_everywhere()
    result = run_suite(RunOptions(seed=seed, families=BOUNDARIES, quick=quick))
    found = case_gaps(applicable, sent_in(result, applicable), sampled=quick)
    assert not found, "no case for:\n" + "\n".join(f"- {gap}" for gap in found)
    assert sum(o.triples for o in result.case_coverage) == len(applicable)
    # what the gate held the suite to
    assert len({k.constraint for k in applicable}) == CONSTRAINTS
    assert len({(k.kind, k.near_miss) for k in applicable}) == CLASSES
    assert len(applicable) == TRIPLES
