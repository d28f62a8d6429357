"""The boundaries family's requirement ids for a request that breaks a constraint.

The suite's boundaries family derives every constraint of every request (length, range,
integer, enum, pattern, format, unique items) from the effective contract and names, in
``conformance/judge/boundary_requirements.yaml``, the requirement ids its cases are reported
under: the contract's "MUST reject" ids and the profile's "MUST answer with the validation
error" ids.
``LimitIds(profile)`` reads those once; ``ids(operation_id, problems)`` gives the ids of the
constraints a recorded request broke, so that the validator reports an accepted (or wrongly
refused) out-of-bounds value under the same requirements as the suite (a split ``bps`` of 10001:
LIMIT-008 and SPLIT-006, besides the schema's own).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from conformance.core.contract import effective_contract
from conformance.core.openapi import operations
from conformance.core.profile import Profile
from conformance.judge.boundary_requirements import RequirementMap
from conformance.judge.constraints import ARRAY_ITEM, MAP_VALUE, iter_constraints
from conformance.judge.response_schemas import Problem

# The coverage tag a schema problem carries (``checks._KEYWORD_TAGS``) and the boundaries
# family's kind of constraint it breaks.
TAG_KINDS = {
    "invalid_pattern": "pattern",
    "string_above_max_length": "maxLength",
    "string_below_min_length": "minLength",
    "value_above_maximum": "maximum",
    "value_below_minimum": "minimum",
    "invalid_enum_value": "enum",
    "non_unique_items": "uniqueItems",
    "incorrect_type": "integer",
    "format:uri": "format",
    "format:date-time": "format",
}
_STEP = re.compile(r"\[[0-9]+\]")


def _field(where: str) -> tuple[str, str]:
    """``("body", "bps")`` for ``shares[0].bps``; ``("query", "limit")`` for ``query.limit``."""
    location = "body"
    for prefix in ("query.", "path."):
        if where.startswith(prefix):
            location, where = prefix[:-1], where[len(prefix) :]
    named = [step for step in _STEP.sub("", where).split(".") if step]
    return location, named[-1] if named else location


class LimitIds:
    """Requirement ids of the request constraints of one profile's effective contract."""

    def __init__(self, profile: Profile) -> None:
        contract = effective_contract(profile)
        requirements = RequirementMap.load()
        self._ids: dict[tuple[str, str, str, str], tuple[str, ...]] = {}
        for operation_id in (entry.operation_id for entry in operations(contract)):
            created = profile.creates(operation_id)
            for constraint in iter_constraints(contract, operation_id):
                named = [p for p in constraint.field.pointer if p not in (ARRAY_ITEM, MAP_VALUE)]
                name = named[-1] if named else constraint.field.location
                key = (operation_id, constraint.field.location, name, constraint.kind)
                ids = requirements.ids_for(constraint, created=created)
                found = self._ids.get(key, ())
                self._ids[key] = tuple(
                    dict.fromkeys((*found, *ids.rejected, *ids.rejected_with_status))
                )

    def ids(self, operation_id: str, problems: Iterable[Problem]) -> tuple[str, ...]:
        """The ids of the constraints ``problems`` break (none for a problem of another kind:
        a missing field, a wrong type that is not an integer's)."""
        found: list[str] = []
        for problem in problems:
            location, name = _field(problem.where)
            for tag in problem.tags:
                kind = TAG_KINDS.get(tag)
                if kind is not None:
                    found += self._ids.get((operation_id, location, name, kind), ())
        return tuple(dict.fromkeys(found))
