"""Proof of the responses family (conformance/suite/responses/).

Against the unfaulted reference server every operation reaches success and its body matches
the schema, whatever the seed; against a reference server with one fault of
faults/responses.yaml switched on, the family fails the requirement ids the fault names.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.core.contract import operations
from conformance.core.results import Outcome, RunResult
from conformance.engine import session
from conformance.reference.faults import catalogue
from conformance.suite.plugin.collection import SUITE_DIR
from tests.suite.proofs import family_failures, run_family

pytestmark = pytest.mark.slow

FAMILY = "responses"
FAULTS = tuple(f.name for f in catalogue() if f.source == "responses.yaml")


@pytest.fixture(autouse=True)
def family_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Collect the family's package alone: its ids are checked by the schema family too, so
    selecting them with --only would run the schema phases as well."""
    original = session.pytest_args

    def args(*given: object) -> list[str]:
        found = original(*given)  # type: ignore[arg-type]
        return [str(SUITE_DIR / FAMILY), *found[1:]]

    monkeypatch.setattr(session, "pytest_args", args)
    yield


def run(
    seed: int, *, fault: str | None = None, quick: bool = True, only: set[str] | None = None
) -> RunResult:
    return run_family(FAMILY, seed, fault=fault, quick=quick, only=only or ())


@pytest.mark.parametrize(("seed", "quick"), [(5, False), (31, True)])
def test_every_success_response_matches_its_schema(seed: int, quick: bool) -> None:
    result = run(seed, quick=quick)
    assert family_failures(result, FAMILY) == {}
    mine = [c for c in result.checks if c.family == FAMILY]
    assert {op.operation_id for op in operations()} == {c.operation_id for c in mine}
    passed = {rid for c in mine if c.outcome is Outcome.PASSED for rid in c.requirement_ids}
    expected = {"OPS-012", "OPS-019", "OPS-033", "OPS-034", "SHAPE-006", "SHAPE-024", "SHAPE-025"}
    assert expected | {"STATUS-001", "STATUS-002", "OPS-008"} <= passed


@pytest.mark.parametrize("fault", FAULTS)
def test_a_response_fault_fails_the_ids_it_names(fault: str) -> None:
    breaks = {f.name: set(f.breaks) for f in catalogue()}[fault]
    found = family_failures(run(23, fault=fault, only=breaks), FAMILY)
    assert breaks <= set(found), f"{fault}: failed {sorted(found)}"
