"""One side of one constraint's cases (refused, refused with a status, accepted...): the
problems its cases found, the first failing exchange, and the one result it is reported as."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from conformance.core.results import Evidence, Outcome
from conformance.suite.wire.check_properties import CheckRecorder
from conformance.suite.wire.client import SuiteClient


@dataclass
class Side:
    """The problems found on one side of one constraint, and the first failing exchange."""

    problems: list[str] = field(default_factory=list)
    cases: int = 0
    evidence: Evidence | None = None
    unexercised: list[str] = field(default_factory=list)  # cases whose request could not be made

    def add(
        self,
        problems: list[str],
        case: str,
        client: SuiteClient,
        exchange: Evidence | None = None,
    ) -> None:
        """One case sent; ``case`` names it in the messages (its label and value);
        ``exchange``: the case's own exchange when others were sent since (the client's last,
        if not given)."""
        self.cases += 1
        if problems:
            self.problems += [f"{case}: {p}" for p in problems]
            if self.evidence is None:
                self.evidence = exchange if exchange is not None else client.last_exchange

    def record(
        self,
        recorder: CheckRecorder,
        ids: Sequence[str],
        name: str,
        operation_id: str,
        what: str,
    ) -> None:
        """One result ``boundaries {name} {what}`` (nothing when no id judges it or nothing
        was tried)."""
        if not ids or not (self.cases or self.unexercised):
            return
        skipped = (
            f" ({len(self.unexercised)} not exercised: {self.unexercised[0]})"
            if self.unexercised
            else ""
        )
        if self.problems:
            outcome = Outcome.FAILED
            message = (
                f"{name}: {len(self.problems)} of {self.cases} cases not {what}: "
                + "; ".join(self.problems[:8])
            )
        elif self.cases:
            outcome, message = Outcome.PASSED, f"{name}: {self.cases} cases {what}{skipped}"
        else:
            outcome, message = Outcome.NOT_EXERCISED, f"{name}: no case could be sent{skipped}"
        recorder.record(
            f"boundaries {name} {what}", tuple(ids), outcome, message, operation_id, self.evidence
        )
