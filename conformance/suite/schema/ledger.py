"""The ledger of the schema phases: per (check, operation), what passed, what failed, and why.

Each response's check results land here (``SchemaPhaseRunner``); at the end of a test the ledger
gives one or two results per (check, operation): the requirement ids broken (with the evidence
of the first failure), the ids verified, or why the check had nothing to check.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from conformance.core.profile import Profile
from conformance.core.results import Evidence, Outcome
from conformance.judge.schema_requirements import is_pinned, passable_ids, requirement_ids

FAMILY = "schema"


@dataclass
class Observation:
    """What one check saw on one operation."""

    passed_ids: set[str] = field(default_factory=set)
    failed_ids: set[str] = field(default_factory=set)
    applicable: int = 0
    failures: int = 0
    first_failure: tuple[str, Evidence] | None = None
    phases: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class RecordedCheck:
    """One result for ``check_recorder.record`` (SUITE.md)."""

    check_id: str
    requirement_ids: tuple[str, ...]
    outcome: Outcome
    message: str
    operation_id: str
    evidence: Evidence | None


def unexercisable_ids(profile: Profile) -> dict[str, str]:
    """Requirement ids no check of this family can verify under ``profile``, and why: a
    response that passes a check says nothing about them."""
    found = {}
    if not profile.idempotency.replay_marked:
        found["IDEM-008"] = (
            'the profile declares no replay marker (idempotency.replay_header = ""): there is '
            "no replay header to check"
        )
    return found


class CheckLedger:
    def __init__(self, unexercisable: Mapping[str, str] | None = None) -> None:
        # requirement id -> why no response can verify it under the profile
        self.unexercisable: Mapping[str, str] = unexercisable or {}
        self.observations: dict[tuple[str, str], Observation] = {}
        # operation id -> why a request of it was given up ("not exercised: rate limited ...")
        self.rate_limited: dict[str, str] = {}

    def _get(self, check: str, operation_id: str) -> Observation:
        return self.observations.setdefault((check, operation_id), Observation())

    def passed(self, check: str, operation_id: str, phase: str, ids: Iterable[str]) -> None:
        observation = self._get(check, operation_id)
        observation.applicable += 1
        observation.phases[phase] += 1
        observation.passed_ids.update(i for i in ids if i not in self.unexercisable)

    def failed(
        self,
        check: str,
        operation_id: str,
        phase: str,
        ids: Iterable[str],
        message: str,
        evidence: Evidence,
    ) -> None:
        observation = self._get(check, operation_id)
        observation.applicable += 1
        observation.failures += 1
        observation.phases[phase] += 1
        observation.failed_ids.update(ids)
        if observation.first_failure is None:
            observation.first_failure = (message, evidence)

    def results(
        self, group: str, checks: Iterable[str], operation_ids: Iterable[str]
    ) -> list[RecordedCheck]:
        """One or two results per (check, operation): failed ids, passed ids, or why neither."""
        recorded = []
        for operation_id in operation_ids:
            for check in checks:
                recorded.extend(self._results_for(group, check, operation_id))
        return recorded

    def _results_for(self, group: str, check: str, operation_id: str) -> list[RecordedCheck]:
        check_id = f"{FAMILY}.{group}.{check}"
        observation = self.observations.get((check, operation_id))
        ids = requirement_ids(check, operation_id)
        beyond = tuple(rid for rid in ids if rid in self.unexercisable)
        if beyond and len(beyond) == len(ids) and (observation is None or not observation.failures):
            why = "; ".join(dict.fromkeys(self.unexercisable[rid] for rid in beyond))
            return [RecordedCheck(check_id, beyond, Outcome.NOT_EXERCISED, why, operation_id, None)]
        if not ids and (observation is None or not observation.failures):
            return []  # the check states nothing about this operation
        if observation is None or observation.applicable == 0:
            return [
                RecordedCheck(
                    check_id,
                    ids,
                    Outcome.NOT_EXERCISED,
                    self.rate_limited.get(operation_id)
                    or f"no {group} case of this run gave {check} anything to check",
                    operation_id,
                    None,
                )
            ]
        phases = ", ".join(f"{p} {n}" for p, n in sorted(observation.phases.items()))
        results = []
        if observation.failures:
            assert observation.first_failure is not None
            message, evidence = observation.first_failure
            results.append(
                RecordedCheck(
                    check_id,
                    tuple(sorted(observation.failed_ids)),
                    Outcome.FAILED,
                    f"{observation.failures} of {observation.applicable} responses failed "
                    f"({phases}); first: {message}",
                    operation_id,
                    evidence,
                )
            )
        passed = tuple(sorted(observation.passed_ids - observation.failed_ids))
        if not passed and not observation.failures:
            # Responses were checked, but none of them tied to a requirement of this check
            # (a negative case whose negated field no requirement names).
            return [
                RecordedCheck(
                    check_id,
                    ids,
                    Outcome.NOT_EXERCISED,
                    f"{observation.applicable} responses passed, none of them about a field "
                    "a requirement names",
                    operation_id,
                    None,
                )
            ]
        if passed:
            results.append(
                RecordedCheck(
                    check_id,
                    passed,
                    Outcome.PASSED,
                    f"{observation.applicable - observation.failures} responses passed ({phases})",
                    operation_id,
                    None,
                )
            )
        if is_pinned(check):
            results.extend(self._unreached(check_id, check, operation_id, observation))
        return results

    @staticmethod
    def _unreached(
        check_id: str, check: str, operation_id: str, observation: Observation
    ) -> list[RecordedCheck]:
        """The candidates of a pinned check that no case was about: not exercised, and why."""
        seen = observation.passed_ids | observation.failed_ids
        unreached = tuple(rid for rid in passable_ids(check, operation_id) if rid not in seen)
        if not unreached:
            return []
        reason = (
            f"none of the {observation.applicable} responses of {operation_id} that {check} "
            "checked was about the field it names (cases are generated at random: a run "
            "without --quick, or a larger --max-examples, makes one likely)"
        )
        return [
            RecordedCheck(check_id, unreached, Outcome.NOT_EXERCISED, reason, operation_id, None)
        ]
