"""The outcome of a run, as every report format reads it.

The suite (``conformance.suite``) records one ``CheckResult`` per executed check; the engine
folds them into one ``RequirementResult`` per catalogue entry and a ``RunResult``; each module of
``conformance.reporting`` renders a ``RunResult`` in one format.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from enum import StrEnum

from conformance.core.catalogue import Requirement


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_EXERCISED = "not_exercised"


class Verdict(StrEnum):
    CONFORMANT = "CONFORMANT"
    NOT_CONFORMANT = "NOT CONFORMANT"
    NOT_TESTED = "NOT TESTED"


STEPS_HEADING = "Steps that reproduce it:"
"""Starts the numbered step list a failure of a call sequence carries below its message."""


def split_steps(message: str) -> tuple[str, list[str]]:
    """A check's message without its step list, and the step list's lines (``[]``: none)."""
    head, found, steps = message.partition("\n" + STEPS_HEADING)
    if not found:
        return message, []
    return head, [STEPS_HEADING, *(line for line in steps.splitlines() if line.strip())]


@dataclass(frozen=True)
class Evidence:
    """One request and its response, with secrets already redacted (``core.redaction``)."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: str | None
    status: int | None
    response_headers: dict[str, str]
    response_body: str | None
    curl: str


@dataclass(frozen=True)
class CheckResult:
    """One executed check: a test of the suite, or one schemathesis check on one operation."""

    check_id: str
    family: str  # schema, auth, idempotency, boundaries, state, domain, ...
    requirement_ids: tuple[str, ...]
    outcome: Outcome
    message: str = ""
    operation_id: str | None = None
    duration_s: float = 0.0
    evidence: Evidence | None = None
    reason_not_exercised: str | None = None


@dataclass(frozen=True)
class RequirementResult:
    requirement: Requirement
    outcome: Outcome
    checks: tuple[CheckResult, ...] = ()

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        return tuple(c for c in self.checks if c.outcome is Outcome.FAILED)


@dataclass(frozen=True)
class Target:
    base_url: str
    embedded: bool  # True when the suite started the reference server itself
    fault: str | None = None  # reference-server fault switched on, if any


@dataclass(frozen=True)
class RunResult:
    suite_version: str
    contract_sha256: str
    profile_name: str
    profile_sha256: str
    seed: int
    target: Target
    started_at: str  # ISO 8601, UTC
    duration_s: float
    requests_sent: int
    requirements: tuple[RequirementResult, ...]
    checks: tuple[CheckResult, ...]
    options: dict[str, str] = field(default_factory=dict)

    def count(self, outcome: Outcome) -> int:
        return sum(1 for r in self.requirements if r.outcome is outcome)

    @property
    def verdict(self) -> Verdict:
        if self.count(Outcome.FAILED):
            return Verdict.NOT_CONFORMANT
        if not self.count(Outcome.PASSED):
            return Verdict.NOT_TESTED
        return Verdict.CONFORMANT

    @property
    def exit_code(self) -> int:
        """0: every exercised requirement passed; 1: one failed; 2: nothing was tested."""
        return {Verdict.CONFORMANT: 0, Verdict.NOT_CONFORMANT: 1, Verdict.NOT_TESTED: 2}[
            self.verdict
        ]

    def replay_command(self, requirement_id: str, *, base_url: str | None = None) -> str:
        """The ``payment-conformance run`` command repeating this requirement's checks.

        Same target, profile, seed and ``--quick`` as this run, so it sends the same cases.
        ``base_url`` replaces the target's URL in the command (a report passes it scrubbed).
        """
        words = ["payment-conformance", "run"]
        if not self.target.embedded:
            words += ["--base-url", base_url or self.target.base_url]
        elif self.target.fault:
            words += ["--fault", self.target.fault]
        profile = self.options.get("profile", "default")
        if profile != "default":
            words += ["--profile", profile]
        words += ["--only", requirement_id, "--seed", str(self.seed)]
        if self.options.get("quick") == "true":
            words.append("--quick")
        return shlex.join(words)


def fold(
    requirements: list[Requirement], checks: list[CheckResult]
) -> tuple[RequirementResult, ...]:
    """One result per requirement: failed if any check failed, passed if one passed."""
    by_id: dict[str, list[CheckResult]] = {r.id: [] for r in requirements}
    for check in checks:
        for rid in check.requirement_ids:
            if rid in by_id:
                by_id[rid].append(check)
    folded = []
    for req in requirements:
        mine = by_id[req.id]
        outcomes = {c.outcome for c in mine}
        if Outcome.FAILED in outcomes:
            outcome = Outcome.FAILED
        elif Outcome.PASSED in outcomes:
            outcome = Outcome.PASSED
        else:
            outcome = Outcome.NOT_EXERCISED
        mine.sort(key=lambda c: c.outcome is not Outcome.FAILED)
        folded.append(RequirementResult(req, outcome, tuple(mine)))
    return tuple(folded)
