"""The boundaries family's requirement ids for a request that breaks a constraint.

The suite's boundaries family derives every constraint of every request (length, range,
integer, enum, pattern, format, unique items) from the effective contract and names, in
``conformance/judge/boundary_requirements.yaml``, the requirement ids its cases are reported
under: the contract's "MUST reject" ids and the profile's "MUST answer with the validation
error" ids. ``ConstraintIds(profile)`` reads those once, so that every judge of a request that
breaks a constraint names the same ids: the schema family's negative cases (``of``, by the
fields and coverage tags of a case) and the validator's recorded requests (``ids`` and
``rejection_ids``, by the problems the request's schema found). A split ``bps`` of 10001:
LIMIT-008 and SPLIT-006; ``interval_secs`` above its maximum: LIMIT-005 and STATUS-008, not
every requirement whose text names ``interval_secs``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from conformance.core.contract import effective_contract
from conformance.core.openapi import operations
from conformance.core.profile import Profile
from conformance.judge.boundary_requirements import RequirementMap
from conformance.judge.constraints import ARRAY_ITEM, MAP_VALUE, iter_constraints
from conformance.judge.response_schemas import Problem
from conformance.judge.schema_requirements import pin

# The coverage tag a schema problem carries (``checks._KEYWORD_TAGS``) and the boundaries
# family's kinds of constraint it breaks (a wrong type: an integer's, or any other JSON type's).
TAG_KINDS: dict[str, tuple[str, ...]] = {
    "invalid_pattern": ("pattern",),
    "string_above_max_length": ("maxLength",),
    "string_below_min_length": ("minLength",),
    "value_above_maximum": ("maximum",),
    "value_below_minimum": ("minimum",),
    "invalid_enum_value": ("enum",),
    "non_unique_items": ("uniqueItems",),
    "incorrect_type": ("integer", "type"),
    "format:uri": ("format",),
    "format:date-time": ("format",),
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


def pinned(candidates: tuple[str, ...], problems: Sequence[Problem]) -> tuple[str, ...]:
    """The candidates the problems point at (by field and tag), every candidate when none."""
    fields = {f for p in problems for f in p.fields}
    tags = {t for p in problems for t in p.tags}
    return pin(candidates, fields, tags) or candidates


def _joined(*groups: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(rid for group in groups for rid in group))


class ConstraintIds:
    """Requirement ids of the request constraints of one profile's effective contract."""

    def __init__(self, profile: Profile) -> None:
        contract = effective_contract(profile)
        requirements = RequirementMap.load()
        self._ids: dict[tuple[str, str, str, str], tuple[str, ...]] = {}
        # the profile's "refused with the validation error" ids alone
        self._status_ids: dict[tuple[str, str, str, str], tuple[str, ...]] = {}
        self._by_name: dict[tuple[str, str, str], tuple[str, ...]] = {}  # any location
        self._status_by_name: dict[tuple[str, str, str], tuple[str, ...]] = {}
        for operation_id in (entry.operation_id for entry in operations(contract)):
            created = profile.creates(operation_id)
            for constraint in iter_constraints(contract, operation_id):
                named = [p for p in constraint.field.pointer if p not in (ARRAY_ITEM, MAP_VALUE)]
                name = named[-1] if named else constraint.field.location
                key = (operation_id, constraint.field.location, name, constraint.kind)
                ids = requirements.ids_for(constraint, created=created)
                broken = (*ids.rejected, *ids.rejected_with_status)
                self._ids[key] = _joined(self._ids.get(key, ()), broken)
                status = self._status_ids.get(key, ())
                self._status_ids[key] = _joined(status, ids.rejected_with_status)
                loose = (operation_id, name, constraint.kind)
                self._by_name[loose] = _joined(self._by_name.get(loose, ()), broken)
                refused = self._status_by_name.get(loose, ())
                self._status_by_name[loose] = _joined(refused, ids.rejected_with_status)

    def ids(
        self, operation_id: str, problems: Iterable[Problem], *, status_only: bool = False
    ) -> tuple[str, ...]:
        """The ids of the constraints ``problems`` break (none for a problem of another kind:
        a missing field, a wrong type that is not an integer's); ``status_only``: those of the
        profile's validation answer alone (the request was refused, with another answer)."""
        table = self._status_ids if status_only else self._ids
        found: list[str] = []
        for problem in problems:
            location, name = _field(problem.where)
            for tag in problem.tags:
                for kind in TAG_KINDS.get(tag, ()):
                    found += table.get((operation_id, location, name, kind), ())
        return tuple(dict.fromkeys(found))

    def of(
        self,
        operation_id: str,
        fields: Iterable[str],
        tags: Iterable[str],
        *,
        status_only: bool = False,
    ) -> tuple[str, ...]:
        """The ids of the constraints a case breaks, by the fields it names and its coverage
        tags (``value_above_maximum``...); empty when no tag is a constraint's kind or no
        field has such a constraint. ``status_only``: those of the profile's validation answer
        alone (the case was refused, with another answer), as ``ids``."""
        table = self._status_by_name if status_only else self._by_name
        kinds = [kind for tag in tags for kind in TAG_KINDS.get(tag, ())]
        found = [
            rid
            for field in fields
            for kind in kinds
            for rid in table.get((operation_id, field, kind), ())
        ]
        return tuple(dict.fromkeys(found))

    def rejection_ids(
        self, operation_id: str, problems: list[Problem], candidates: tuple[str, ...]
    ) -> tuple[str, ...]:
        """The ids a refusal of a request with ``problems`` is judged under: the boundaries
        family's alone when every problem breaks a constraint it knows; else the candidates
        the problems point at (by fields and tags; all of them when they point nowhere) and
        the constraints' ids."""
        per_problem = [self.ids(operation_id, [problem]) for problem in problems]
        if per_problem and all(per_problem):
            return _joined(*per_problem)
        return _joined(pinned(candidates, problems), self.ids(operation_id, problems))

    def misanswered_ids(
        self, operation_id: str, problems: list[Problem], candidates: tuple[str, ...]
    ) -> tuple[str, ...]:
        """The ids a request with ``problems`` refused with another answer than the profile's
        validation error breaks: the constraints' ids of that answer when every problem has
        them (the refusal itself held), else the candidates the problems point at."""
        per_problem = [self.ids(operation_id, [p], status_only=True) for p in problems]
        if per_problem and all(per_problem):
            return _joined(*per_problem)
        return pinned(candidates, problems)
