"""The coverage gate: every part of the catalogue and of the effective contract has a check.

A *checked* requirement is one that at least one check of the suite declares (its
``@pytest.mark.requirement`` ids; ``conformance.engine.inventory`` collects them). From those:

- every requirement of the catalogue must be checked;
- every operation of the effective contract must be named by a checked requirement;
- every status code an operation documents must be named, with the operation, by a checked
  requirement (its text states when that status is answered);
- every required field of an operation's request body and of each documented response must be
  named, with the operation, by a checked requirement.

The catalogue is written so that each of these is stated by some requirement; the gate fails
when a requirement loses its last check, or when the contract grows an operation, a status or a
required field that no checked requirement states.

``case_gaps`` is the gate on a run's negative cases: every (operation, constraint, near-miss
class) triple that applies (``conformance.suite.boundaries.classes``) must have had a case in a
default run; a ``--quick`` run samples, but every (operation, constraint) must have had one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from conformance.core.case_coverage import CaseKey
from conformance.core.catalogue import Catalogue, Requirement
from conformance.core.openapi import operations, resolve

_STATUS = re.compile(r"\b[1-5][0-9]{2}\b")


@dataclass(frozen=True, order=True)
class Gap:
    """Something the suite has no check for: ``kind`` is requirement, operation, status, field
    or case; ``subject`` names it."""

    kind: str
    subject: str

    def __str__(self) -> str:
        if self.kind == "case":
            return self.subject
        return f"{self.subject} has no check"


@dataclass(frozen=True)
class Documented:
    """What the effective contract documents of one operation."""

    operation_id: str
    statuses: tuple[str, ...]
    required: tuple[tuple[str, str], ...]  # (where: "request" or a status, field name)


def documented(contract: Mapping[str, Any]) -> list[Documented]:
    found = []
    for entry in operations(contract):
        required: list[tuple[str, str]] = []
        body = resolve(contract, entry.operation.get("requestBody"))
        required += [("request", f) for f in _required_fields(contract, body)]
        statuses = []
        for status, response in (entry.operation.get("responses") or {}).items():
            statuses.append(str(status))
            resolved = resolve(contract, response)
            required += [(str(status), f) for f in _required_fields(contract, resolved)]
        found.append(Documented(entry.operation_id, tuple(statuses), tuple(required)))
    return found


def gaps(
    catalogue: Catalogue, contract: Mapping[str, Any], checked_ids: Iterable[str]
) -> list[Gap]:
    """Everything the suite has no check for (empty: the gate passes)."""
    checked = set(checked_ids)
    found = [
        Gap("requirement", f"requirement {r.id}")
        for r in catalogue.requirements
        if r.id not in checked
    ]
    stating = [r for r in catalogue.requirements if r.id in checked]
    for operation in documented(contract):
        mine = [r for r in stating if operation.operation_id in r.operations]
        name = operation.operation_id
        if not mine:
            found.append(Gap("operation", f"operation {name}"))
        found += [
            Gap("status", f"operation {name} status {status}")
            for status in operation.statuses
            if not any(status in _statuses(r) for r in mine)
        ]
        found += [
            Gap("field", f"operation {name} {_where(where)} required field {field}")
            for where, field in operation.required
            if not any(_names(r, field) for r in mine)
        ]
    return sorted(set(found))


def _where(where: str) -> str:
    return "request body" if where == "request" else f"status {where} body"


def _statuses(requirement: Requirement) -> set[str]:
    return set(_STATUS.findall(requirement.text))


def _names(requirement: Requirement, field: str) -> bool:
    return (
        re.search(rf"(?<![A-Za-z0-9_]){re.escape(field)}(?![A-Za-z0-9_])", requirement.text)
        is not None
    )


def _required_fields(contract: Mapping[str, Any], holder: Any) -> Iterator[str]:
    """Top-level required fields of every JSON schema a request body or response holds."""
    if not isinstance(holder, Mapping):
        return
    seen: set[str] = set()
    for media in (holder.get("content") or {}).values():
        if isinstance(media, Mapping):
            for name in _required(contract, media.get("schema"), 0):
                if name not in seen:
                    seen.add(name)
                    yield name


def _required(contract: Mapping[str, Any], schema: Any, depth: int) -> list[str]:
    schema = resolve(contract, schema)
    if not isinstance(schema, Mapping) or depth > 8:
        return []
    names = [str(n) for n in schema.get("required", [])]
    for sub in schema.get("allOf", []):
        names += _required(contract, sub, depth + 1)
    return names


def case_gaps(
    applicable: Iterable[CaseKey], sent: Iterable[CaseKey], *, sampled: bool = False
) -> list[Gap]:
    """Every triple of ``applicable`` without a case in ``sent`` (empty: the gate passes).

    ``sampled`` (a --quick run): only a constraint without any case at all is a gap.
    """
    done = set(sent)
    if not sampled:
        return sorted({Gap("case", key.gap()) for key in applicable if key not in done})
    reached = {key.constraint for key in done}
    return sorted(
        {
            Gap("case", f"{key.operation_id} {key.field}: no case ({key.kind})")
            for key in applicable
            if key.constraint not in reached
        }
    )
