"""What the check-family proofs read from a run."""

from __future__ import annotations

from typing import Any

from conformance.core.results import Outcome, RunResult
from conformance.engine.options import RunOptions
from conformance.engine.runner import run_suite


def run_family(
    family: str,
    seed: int,
    *,
    fault: str | None = None,
    quick: bool = True,
    only: tuple[str, ...] | set[str] | frozenset[str] = (),
    **options: Any,
) -> RunResult:
    """A run of ``family``'s tests alone against the embedded reference server (with ``fault``
    switched on); with ``only``, of those that check these requirement ids."""
    return run_suite(
        RunOptions(
            seed=seed,
            only=tuple(sorted(only)),
            families=(family,),
            embedded_fault=fault,
            quick=quick,
            **options,
        )
    )


def family_failures(result: RunResult, family: str) -> dict[str, list[str]]:
    """Requirement id -> messages of the family's failed checks naming it."""
    found: dict[str, list[str]] = {}
    for check in result.checks:
        if check.family == family and check.outcome is Outcome.FAILED:
            for requirement_id in check.requirement_ids:
                found.setdefault(requirement_id, []).append(check.message)
    return found


def family_passed(result: RunResult, family: str) -> set[str]:
    """Requirement ids named by the family's passed checks."""
    return {
        requirement_id
        for check in result.checks
        if check.family == family and check.outcome is Outcome.PASSED
        for requirement_id in check.requirement_ids
    }
