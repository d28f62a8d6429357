"""The requirement map: which requirement ids each side of a constraint's cases names.

``boundary_requirements.yaml``, beside this module, holds the map.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from conformance.core.yamldata import load_yaml
from conformance.judge.constraints import Constraint, profile_key

_REQUIREMENTS_FILE: Final = Path(__file__).with_name("boundary_requirements.yaml")


@dataclass(frozen=True)
class RequirementIds:
    """The requirement ids each side of a constraint's cases is reported under."""

    rejected: tuple[str, ...]  # contract: the value is refused (any 4xx)
    rejected_with_status: tuple[str, ...]  # profile: refused with the validation status and code
    accepted: tuple[str, ...]  # the value is accepted

    @property
    def all(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.rejected, *self.rejected_with_status, *self.accepted)))


@dataclass(frozen=True)
class RequirementMap:
    """``boundary_requirements.yaml``: which requirement ids a constraint's results name."""

    rules: tuple[Mapping[str, Any], ...]
    by_kind: Mapping[str, tuple[str, ...]]
    error_shape: tuple[str, ...]
    success_created: tuple[str, ...]
    success_other: tuple[str, ...]
    refusal_status: Mapping[str, str]  # constraint kind -> the profile's status name

    @classmethod
    def load(cls) -> RequirementMap:
        """The map of the shipped file, read once per process."""
        return _shipped_map()

    def refusal_status_of(self, constraint: Constraint) -> str:
        """The name under the profile's ``[status]`` a refused case of ``constraint`` gets."""
        return self.refusal_status.get(constraint.kind, "validation")

    def _applies(self, rule: Mapping[str, Any], constraint: Constraint) -> bool:
        match = rule.get("match", {})
        facts = {
            "kinds": constraint.kind,
            "names": constraint.field.name,
            "locations": constraint.field.location,
            "operations": constraint.operation_id,
            "profile_keys": profile_key(constraint),
        }
        return all(facts[key] in allowed for key, allowed in match.items())

    def ids_for(self, constraint: Constraint, *, created: bool) -> RequirementIds:
        rejected: list[str] = []
        with_status: list[str] = list(self.by_kind.get(constraint.kind, ()))
        if constraint.field.location in ("query", "path") and constraint.kind != "required":
            with_status += self.by_kind.get("parameters", ())
        accepted: list[str] = list(self.success_created if created else self.success_other)
        for rule in self.rules:
            if self._applies(rule, constraint):
                rejected += rule.get("reject", [])
                with_status += rule.get("reject_with_status", [])
                accepted += rule.get("accept", [])
        return RequirementIds(
            tuple(dict.fromkeys(rejected)),
            tuple(dict.fromkeys(with_status)),
            tuple(dict.fromkeys(accepted)),
        )

    def judged_by(self, constraint: Constraint, *, created: bool) -> frozenset[str]:
        """Every requirement id the cases of ``constraint`` can report under, the error shape's
        (judged on any refusal) included."""
        return frozenset((*self.ids_for(constraint, created=created).all, *self.error_shape))

    def every_id(self) -> tuple[str, ...]:
        ids: list[str] = [*self.error_shape, *self.success_created, *self.success_other]
        for values in self.by_kind.values():
            ids += values
        for rule in self.rules:
            for key in ("reject", "reject_with_status", "accept"):
                ids += rule.get(key, [])
        return tuple(dict.fromkeys(ids))


@cache
def _shipped_map() -> RequirementMap:
    data = load_yaml(_REQUIREMENTS_FILE.read_text(encoding="utf-8"))
    success = data["accepted_with_success"]
    return RequirementMap(
        rules=tuple(data["rules"]),
        by_kind={k: tuple(v) for k, v in data["rejected_with_profile_status"].items()},
        error_shape=tuple(data["error_shape"]),
        success_created=tuple(success["created"]),
        success_other=tuple(success["other"]),
        refusal_status=dict(data.get("refusal_status") or {}),
    )
