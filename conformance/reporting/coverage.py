"""Coverage by operation: what a run exercised of each operation (the HTML and markdown reports).

For each operation of the catalogue: its requirements by outcome, and the status codes its
requirements state (``coverage_gate`` holds the suite to stating every documented one), with
those of the exercised requirements apart. What was not exercised, and why, is listed per
requirement in the reports' "Not exercised" part; each row links there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conformance.core.results import Outcome
from conformance.reporting.view import RequirementView, RunView

_STATUS = re.compile(r"\b[1-5][0-9]{2}\b")


@dataclass(frozen=True)
class OperationCoverage:
    operation_id: str
    passed: int
    failed: int
    not_exercised: tuple[str, ...]  # requirement ids
    statuses: tuple[str, ...]  # stated by the operation's requirements of this run
    statuses_exercised: tuple[str, ...]  # stated by those that passed or failed

    @property
    def total(self) -> int:
        return self.passed + self.failed + len(self.not_exercised)


def by_operation(view: RunView) -> list[OperationCoverage]:
    operations: dict[str, list[RequirementView]] = {}
    for requirement in view.requirements:
        for operation_id in requirement.operations:
            operations.setdefault(operation_id, []).append(requirement)
    rows = []
    for operation_id, requirements in operations.items():
        exercised = [r for r in requirements if r.outcome is not Outcome.NOT_EXERCISED]
        rows.append(
            OperationCoverage(
                operation_id,
                passed=sum(r.outcome is Outcome.PASSED for r in requirements),
                failed=sum(r.outcome is Outcome.FAILED for r in requirements),
                not_exercised=tuple(
                    r.id for r in requirements if r.outcome is Outcome.NOT_EXERCISED
                ),
                statuses=_statuses(requirements),
                statuses_exercised=_statuses(exercised),
            )
        )
    return rows


def _statuses(requirements: list[RequirementView]) -> tuple[str, ...]:
    return tuple(sorted({s for r in requirements for s in _STATUS.findall(r.text)}))
