"""Constraint-case coverage: which (operation, constraint, near-miss class) triples had a case.

The boundaries family derives, from the effective contract, every constraint a request can
break and every near-miss class that applies to it (``conformance.suite.boundaries.classes``).
Each test of the family logs the triples that apply to its operation and the ones it really
sent a case for (``CaseLog``); the engine merges the logs of all tests into one
``OperationCaseCoverage`` per operation, which the reports show, and the coverage gate names
every triple without a case ("createPayoutSchedule body.min_send_amount: no trailing-dot case").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, order=True)
class CaseKey:
    """One (operation, constraint, near-miss class) triple.

    ``field`` is where the value sits (``body.min_send_amount``, ``query.cursor``, ``path.id``),
    ``kind`` the constraint's keyword (``pattern``, ``type``, ``required``, ``encoding``...),
    ``near_miss`` the class id (``trailing-dot``, ``null``, ``missing``...).
    """

    operation_id: str
    field: str
    kind: str
    near_miss: str

    @property
    def constraint(self) -> str:
        return f"{self.operation_id} {self.field} {self.kind}"

    def gap(self) -> str:
        """How the coverage gate names the triple when no case was sent for it."""
        return f"{self.operation_id} {self.field}: no {self.near_miss} case ({self.kind})"

    def to_list(self) -> list[str]:
        return [self.operation_id, self.field, self.kind, self.near_miss]

    @classmethod
    def from_list(cls, value: Any) -> CaseKey | None:
        """The key a log entry names, or None for anything that is not four strings."""
        if isinstance(value, (list, tuple)) and len(value) == 4:
            parts = [part for part in value if isinstance(part, str)]
            return cls(*parts) if len(parts) == 4 else None
        return None


@dataclass
class CaseLog:
    """What one test applied and sent; merged over tests with ``merge``."""

    applicable: set[CaseKey] = field(default_factory=set)
    sent: set[CaseKey] = field(default_factory=set)
    cases: dict[str, int] = field(default_factory=dict)  # cases sent, per operation

    def expect(self, keys: Iterable[CaseKey]) -> None:
        self.applicable.update(keys)

    def record(self, key: CaseKey) -> None:
        """A refused-side case of ``key``'s class was sent."""
        self.sent.add(key)
        self.count(key.operation_id)

    def count(self, operation_id: str) -> None:
        """A case was sent (an accepted-side one counts here alone)."""
        self.cases[operation_id] = self.cases.get(operation_id, 0) + 1

    def merge(self, other: CaseLog) -> None:
        self.applicable |= other.applicable
        self.sent |= other.sent
        for operation_id, count in other.cases.items():
            self.cases[operation_id] = self.cases.get(operation_id, 0) + count

    def to_dict(self) -> dict[str, Any]:
        return {
            "applicable": [k.to_list() for k in sorted(self.applicable)],
            "sent": [k.to_list() for k in sorted(self.sent)],
            "cases": dict(sorted(self.cases.items())),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseLog:
        """A log from a test's report; malformed entries are left out."""
        log = cls()
        for name, target in (("applicable", log.applicable), ("sent", log.sent)):
            entries = data.get(name)
            for entry in entries if isinstance(entries, list) else []:
                key = CaseKey.from_list(entry)
                if key is not None:
                    target.add(key)
        cases = data.get("cases")
        if isinstance(cases, Mapping):
            for operation_id, count in cases.items():
                if isinstance(operation_id, str) and type(count) is int and count >= 0:
                    log.cases[operation_id] = count
        return log

    def by_operation(self) -> tuple[OperationCaseCoverage, ...]:
        """One summary per operation with an applicable triple, in operation-id order."""
        operations = sorted({k.operation_id for k in self.applicable})
        found = []
        for operation_id in operations:
            mine = {k for k in self.applicable if k.operation_id == operation_id}
            sent = mine & self.sent
            found.append(
                OperationCaseCoverage(
                    operation_id=operation_id,
                    constraints=len({k.constraint for k in mine}),
                    triples=len(mine),
                    covered=len(sent),
                    cases=self.cases.get(operation_id, 0),
                    missing=tuple(k.gap() for k in sorted(mine - sent)),
                )
            )
        return tuple(found)


@dataclass(frozen=True)
class OperationCaseCoverage:
    """Constraint-case coverage of one operation in one run."""

    operation_id: str
    constraints: int  # constraints of its request the family derives
    triples: int  # (constraint, near-miss class) pairs that apply
    covered: int  # of those, pairs with at least one case sent
    cases: int  # cases sent in all
    missing: tuple[str, ...] = ()  # the gate's name of each pair without a case

    def to_dict(self) -> dict[str, Any]:
        return {
            "operation_id": self.operation_id,
            "constraints": self.constraints,
            "triples": self.triples,
            "covered": self.covered,
            "cases": self.cases,
            "missing": list(self.missing),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OperationCaseCoverage:
        return cls(
            operation_id=str(data["operation_id"]),
            constraints=int(data["constraints"]),
            triples=int(data["triples"]),
            covered=int(data["covered"]),
            cases=int(data["cases"]),
            missing=tuple(str(m) for m in data.get("missing", ())),
        )


def logged(log: CaseLog) -> CaseLog | None:
    """``log``, or None when nothing was logged in it (a run without the boundaries family)."""
    return log if log.applicable or log.sent else None


def coverage_line(coverage: Iterable[OperationCaseCoverage], *, sampled: bool = False) -> str:
    """The totals as the console and summary.md say them: "constraint cases: 1,234 cases over
    612 of 612 (constraint, class) pairs in 20 operations"; ``sampled`` (a --quick run) says
    that the classes were sampled, so pairs without a case are expected."""
    rows = list(coverage)
    cases = sum(r.cases for r in rows)
    covered = sum(r.covered for r in rows)
    pairs = sum(r.triples for r in rows)
    line = (
        f"constraint cases: {cases:,} case{'' if cases == 1 else 's'} over {covered:,} of "
        f"{pairs:,} (constraint, class) pairs in {len(rows):,} "
        f"operation{'' if len(rows) == 1 else 's'}"
    )
    return line + (" (--quick samples the classes)" if sampled else "")
