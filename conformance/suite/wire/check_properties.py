"""How suite tests record CheckResults so that they survive the trip through pytest-xdist.

A test's results ride on ``item.user_properties`` (which xdist sends from the worker to the
controller) as ``(CHECK_PROPERTY, dict)`` pairs of plain JSON-like values
(``core.evidence.check_to_dict``); the engine turns them back into ``CheckResult`` objects with
``core.evidence.check_from_dict``.
"""

from __future__ import annotations

from conformance.core.redaction import REDACTED
from conformance.core.results import STEPS_HEADING, CheckResult, Evidence, Outcome
from conformance.suite.steps import cut_middle

CHECK_PROPERTY = "conformance_check"
REQUESTS_PROPERTY = "conformance_requests"
FAMILY_PROPERTY = "conformance_family"
RATE_LIMITS_PROPERTY = "conformance_rate_limits"  # a test's RateLimitCounts.as_dict()
# the statuses the server answered during a test: {operation id: {"201": answers}}
STATUSES_PROPERTY = "conformance_statuses"
WEBHOOK_RECEIVER_PROPERTY = "conformance_webhook_receiver"  # ReceiverCounts.as_dict()
# the constraint cases a test applied and sent (``case_log`` fixture): CaseLog.to_dict()
CASE_COVERAGE_PROPERTY = "conformance_case_coverage"
MESSAGE_LIMIT = 4000


def clean_message(text: str, secrets: tuple[str, ...] = ()) -> str:
    """A failure or skip message fit for a report: secrets out, bounded length."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    if len(text) > MESSAGE_LIMIT:
        # a step list loses its middle, never its last step: the one that failed
        text = cut_middle(text, MESSAGE_LIMIT, STEPS_HEADING)
    return text


class CheckRecorder:
    """Records sub-checks of one test (``check_recorder`` fixture).

    The schema phases, for example, report one result per schemathesis check per operation
    from a single pytest test. A failed sub-check makes the pytest test fail too, so that
    a plain ``pytest`` run shows it.
    """

    def __init__(
        self, family: str, secrets: tuple[str, ...] = (), operation_id: str | None = None
    ) -> None:
        self.family = family
        self.checks: list[CheckResult] = []
        self._secrets = secrets
        self.operation_id = operation_id

    def record(
        self,
        check_id: str,
        requirement_ids: tuple[str, ...] | list[str],
        outcome: Outcome | str,
        message: str = "",
        operation_id: str | None = None,
        evidence: Evidence | None = None,
        *,
        duration_s: float = 0.0,
    ) -> CheckResult:
        outcome = Outcome(outcome)
        text = clean_message(message, self._secrets)
        check = CheckResult(
            check_id=check_id,
            family=self.family,
            requirement_ids=tuple(requirement_ids),
            outcome=outcome,
            message=text,
            operation_id=operation_id if operation_id is not None else self.operation_id,
            duration_s=duration_s,
            evidence=evidence,
            reason_not_exercised=(text or None) if outcome is Outcome.NOT_EXERCISED else None,
        )
        self.checks.append(check)
        return check

    @property
    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if c.outcome is Outcome.FAILED]
