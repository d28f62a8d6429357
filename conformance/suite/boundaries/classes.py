"""The near-miss classes: which classes of values beside a constraint a default run must send.

``near_miss_classes.yaml``, beside this module, lists per constraint kind the classes that
apply and the exceptions (with their reason). ``applicable`` gives the classes of one
constraint; ``class_of`` the class a generated case belongs to; ``applicable_keys`` every
(operation, constraint, class) triple of an operation: what the coverage gate holds a default
run to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any, Final

from conformance.core.case_coverage import CaseKey
from conformance.core.yamldata import load_yaml
from conformance.judge.constraints import (
    Constraint,
    allows_null,
    iter_constraints,
    types_of,
)

_CLASSES_FILE: Final = Path(__file__).with_name("near_miss_classes.yaml")


@dataclass(frozen=True)
class NearMissClass:
    """One class of one constraint kind: its id, the case labels it covers, its exceptions."""

    id: str
    labels: tuple[str, ...]
    exceptions: tuple[Mapping[str, Any], ...]

    def rules_out(self, constraint: Constraint) -> bool:
        return any(_holds(rule, constraint) for rule in self.exceptions)

    def covers(self, label: str) -> bool:
        return fnmatchcase(label, self.id) or any(fnmatchcase(label, p) for p in self.labels)


def _holds(rule: Mapping[str, Any], constraint: Constraint) -> bool:
    facts: dict[str, set[str]] = {
        "types": types_of(constraint.schema)
        | ({"null"} if allows_null(constraint.schema) else set()),
        "locations": {constraint.field.location},
        "names": {constraint.field.name},
        "patterns": {str(constraint.value)} if constraint.kind == "pattern" else set(),
        "formats": {str(constraint.value)} if constraint.kind == "format" else set(),
        "values": {str(constraint.value)},
    }
    keys = [k for k in rule if k != "why"]
    return bool(keys) and all(facts[k] & {str(v) for v in rule[k]} for k in keys)


@cache
def vocabulary() -> Mapping[str, tuple[NearMissClass, ...]]:
    """Per constraint kind, its classes in the order of the data file."""
    data = load_yaml(_CLASSES_FILE.read_text(encoding="utf-8"))
    return {
        kind: tuple(
            NearMissClass(
                str(name),
                tuple(entry.get("labels", ())),
                tuple(entry.get("except", ())),
            )
            for name, entry in classes.items()
        )
        for kind, classes in data["kinds"].items()
    }


def applicable(constraint: Constraint) -> tuple[str, ...]:
    """The ids of the classes that apply to ``constraint``."""
    return tuple(c.id for c in vocabulary().get(constraint.kind, ()) if not c.rules_out(constraint))


def class_of(constraint: Constraint, label: str) -> str | None:
    """The applicable class a refused case of ``constraint`` with ``label`` belongs to."""
    for near_miss in vocabulary().get(constraint.kind, ()):
        if near_miss.covers(label) and not near_miss.rules_out(constraint):
            return near_miss.id
    return None


def key(constraint: Constraint, near_miss: str) -> CaseKey:
    return CaseKey(constraint.operation_id, str(constraint.field), constraint.kind, near_miss)


def keys_of(constraint: Constraint) -> list[CaseKey]:
    return [key(constraint, near_miss) for near_miss in applicable(constraint)]


def applicable_keys(
    contract: Mapping[str, Any], operation_id: str, *, skip_headers: frozenset[str]
) -> list[CaseKey]:
    """Every (operation, constraint, class) triple of ``operation_id``'s request."""
    found: list[CaseKey] = []
    for constraint in iter_constraints(contract, operation_id, skip_headers=skip_headers):
        found += keys_of(constraint)
    return found
