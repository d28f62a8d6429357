"""What the check-family proofs read from a run."""

from __future__ import annotations

from conformance.core.results import Outcome, RunResult


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
