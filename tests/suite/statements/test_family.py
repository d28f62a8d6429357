"""Proof of the statements family (conformance/suite/statements/).

Against the unfaulted reference server every statement and ledger check passes, whatever the
seed; against a reference server with one ledger or statement fault switched on, the family
reports a failure naming the requirements the fault breaks.
"""

from __future__ import annotations

import pytest

from conformance.core.results import RunResult
from conformance.reference.faults import find_fault
from tests.suite.proofs import family_failures, family_passed, run_family

pytestmark = pytest.mark.slow

FAMILY = "statements"
EXERCISED = {
    *(f"STMT-{n:03d}" for n in range(1, 18)),
    "HELP-003",
    "HELP-004",
    "OPS-007",
    "IDEM-009",
}
FAULTS = [
    "ledger-running-balance-ignores-debits",
    "ledger-split-income-not-credited",
    "statement-opening-ignores-history",
    "statement-closing-from-page",
    "statement-window-includes-to",
    "statement-count-page-only",
    "statement-next-cursor-on-last-page",
    "statement-page-skips-boundary-line",
    "statement-page-repeats-boundary-line",
    "statement-debit-sign-positive",
    "statement-reconciles-page-only",
    "statement-amounts-trimmed",
    "statement-lines-newest-first",
    "statement-default-limit-50",
    "statement-limit-max-unchecked",
    "statement-from-equal-to-accepted",
    "statement-unknown-currency-empty",
    "ledger-platform-fee-deducted",
    "helper-deposit-ignores-key",
]


def run(
    seed: int, *, fault: str | None = None, quick: bool = True, only: set[str] | None = None
) -> RunResult:
    return run_family(FAMILY, seed, fault=fault, quick=quick, only=only or ())


@pytest.mark.parametrize(("seed", "quick"), [(5, False), (31, True)])
def test_the_reference_server_passes_every_statement_check(seed: int, quick: bool) -> None:
    result = run(seed, quick=quick)
    assert family_failures(result, FAMILY) == {}
    passed = family_passed(result, FAMILY)
    assert sorted(EXERCISED - passed) == []


@pytest.mark.parametrize("fault", FAULTS)
def test_a_ledger_fault_fails_the_requirements_it_breaks(fault: str) -> None:
    known = find_fault(fault)
    assert known is not None, f"{fault} is not in the catalogue"
    found = family_failures(run(23, fault=fault, only=set(known.breaks)), FAMILY)
    assert set(known.breaks) <= set(found), f"{fault}: failed {sorted(found)}"
