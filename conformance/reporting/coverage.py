"""Coverage by operation: what a run exercised of each operation (the HTML and markdown reports).

For each operation of the catalogue: its requirements by outcome, and the status codes the
server answered to the run's requests of that operation, with how many times each (the run
counts every answer of either HTTP stack; ``validate`` counts those of the recording). What was
not exercised, and why, is listed per requirement in the reports' "Not exercised" part; each row
links there.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.core.results import Outcome
from conformance.reporting.view import RequirementView, RunView


@dataclass(frozen=True)
class OperationCoverage:
    operation_id: str
    passed: int
    failed: int
    not_exercised: tuple[str, ...]  # requirement ids
    statuses: tuple[tuple[int, int], ...]  # (status, answers) the server answered, by status

    @property
    def total(self) -> int:
        return self.passed + self.failed + len(self.not_exercised)

    @property
    def statuses_text(self) -> str:
        """``201 ×14, 400 ×3``, or ``none`` when no answer was seen."""
        return ", ".join(f"{status} ×{answers:,}" for status, answers in self.statuses) or "none"


def by_operation(view: RunView) -> list[OperationCoverage]:
    operations: dict[str, list[RequirementView]] = {}
    for requirement in view.requirements:
        for operation_id in requirement.operations:
            operations.setdefault(operation_id, []).append(requirement)
    rows = []
    for operation_id, requirements in operations.items():
        answered = view.statuses_seen.get(operation_id, {})
        rows.append(
            OperationCoverage(
                operation_id,
                passed=sum(r.outcome is Outcome.PASSED for r in requirements),
                failed=sum(r.outcome is Outcome.FAILED for r in requirements),
                not_exercised=tuple(
                    r.id for r in requirements if r.outcome is Outcome.NOT_EXERCISED
                ),
                statuses=tuple(sorted(answered.items())),
            )
        )
    return rows
