"""What each conformance check gives: its outcome from the reports of its phases (only an
answer of the server fails a requirement), and the CheckResults and counts it hands on as
user properties (``conformance.suite.wire.check_properties``), with the constraint cases its
``case_log`` logged, if it asked for one."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field, replace

import pytest

from conformance.core.case_coverage import CaseLog, logged
from conformance.core.evidence import check_to_dict
from conformance.core.results import CheckResult, Evidence, Outcome, RateLimitCounts, budget_reason
from conformance.judge.outcomes import NO_SERVER_ERROR
from conformance.suite import rate_limit_checks
from conformance.suite.plugin.collection import (
    _UNMARKED,
    UNMARKED_MESSAGE,
    _marker_ids,
    family_of,
    is_suite_item,
)
from conformance.suite.plugin.session import _STATE, _SessionState
from conformance.suite.selection import selected_requirement_ids
from conformance.suite.tool_errors import SERVER_GONE, not_the_servers
from conformance.suite.wire.check_properties import (
    CASE_COVERAGE_PROPERTY,
    CHECK_PROPERTY,
    FAMILY_PROPERTY,
    RATE_LIMITS_PROPERTY,
    REQUESTS_PROPERTY,
    STATUSES_PROPERTY,
    CheckRecorder,
    clean_message,
)
from conformance.suite.wire.client import (
    ClientStats,
    ServerErrors,
    SuiteTransportError,
    gone_reason,
)

OPERATION_PARAM = "operation_id"


@dataclass
class _ItemState:
    requests_at_start: int
    exchanges_at_start: int
    budget_refusals_at_start: int = 0
    rate_limits_at_start: rate_limit_checks.Mark = field(default_factory=rate_limit_checks.Mark)
    server_errors_at_start: int = 0
    operation_id: str | None = None
    recorder: CheckRecorder | None = None
    case_log: CaseLog | None = None  # the ``case_log`` fixture's, if the test asked for it
    reports: dict[str, pytest.TestReport] = field(default_factory=dict)
    evidence: Evidence | None = None
    synthesized_failure: bool = False
    not_judged: dict[str, str] = field(default_factory=dict)  # phase -> why, not the server's


# Exception names that add nothing to a failure message in a report.
_QUIET_EXCEPTION_PREFIXES = (
    "AssertionError: ",
    "Failed: ",
    f"{SuiteTransportError.__module__}.{SuiteTransportError.__name__}: ",
)


_ITEM = pytest.StashKey[_ItemState]()


def _item_state(item: pytest.Item) -> _ItemState:
    existing = item.stash.get(_ITEM, None)
    if existing is None:
        stats = item.config.stash[_STATE].stats
        existing = _ItemState(
            stats.requests_sent,
            stats.exchanges,
            stats.budget_refusals,
            rate_limit_checks.Mark.of(stats.rate_limiting),
            stats.server_errors.seen,
        )
        item.stash[_ITEM] = existing
    return existing


def _server_errors(
    item: pytest.Item,
    item_state: _ItemState,
    checks: list[CheckResult],
    family: str,
    errors: ServerErrors,
) -> list[CheckResult]:
    """ERR-006 for the 5xx answers a test's requests got, whichever family sent them (the
    validator judges every recorded 5xx so); none when the test judged ERR-006 itself."""
    seen = errors.seen - item_state.server_errors_at_start
    if seen <= 0 or any(NO_SERVER_ERROR in c.requirement_ids for c in checks):
        return []
    index = item_state.server_errors_at_start
    first, evidence = errors.kept[index] if index < len(errors.kept) else ("(not kept)", None)
    return [
        CheckResult(
            f"{_check_id(item)} {NO_SERVER_ERROR}",
            family,
            (NO_SERVER_ERROR,),
            Outcome.FAILED,
            f"{seen} answer(s) with a 5xx status; first: {first}",
            operation_id=item_state.operation_id,
            evidence=evidence,
        )
    ]


def _parametrized_operation(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    value = callspec.params.get(OPERATION_PARAM)
    if isinstance(value, str):
        return value
    for value in callspec.params.values():
        operation = getattr(value, OPERATION_PARAM, None)
        if isinstance(operation, str):
            return operation
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if not is_suite_item(item):
        return
    if item.stash.get(_UNMARKED, False):
        pytest.fail(UNMARKED_MESSAGE, pytrace=False)
    _item_state(item).operation_id = _parametrized_operation(item)
    _count_statuses(item.config.stash[_STATE])
    stats = item.config.stash[_STATE].stats
    if stats.out_of_time:
        pytest.skip(budget_reason(stats.budget_s))
    if stats.server_gone:
        # Every further check would wait for its own timeouts: bound the run instead.
        pytest.skip(f"not run: {gone_reason(stats)}")


def _count_statuses(state: _SessionState) -> None:
    """Count the server's answers per operation and status from now on (``statuses``)."""
    if state.statuses is not None:
        return
    from conformance.suite.statuses import StatusTally

    state.statuses = StatusTally.of_profile(state.load_profile())
    state.statuses.subscribe()


def _is_timeout(exc: BaseException) -> bool:
    """A timeout of any HTTP stack (httpx, requests, sockets), by class name."""
    return any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


def _report_message(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        text = str(crash.message)
        for prefix in _QUIET_EXCEPTION_PREFIXES:
            text = text.removeprefix(prefix)
        return text
    return str(longrepr)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not is_suite_item(item):
        return report
    item_state = _item_state(item)
    item_state.reports[report.when] = report
    state = item.config.stash[_STATE]
    if report.when == "call":
        _note_server_health(state.stats, call, report)
    if report.failed and call.excinfo is not None:
        reason = not_the_servers(call.excinfo.value)
        if reason is not None:
            item_state.not_judged[report.when] = reason
    if report.failed and item_state.evidence is None:
        item_state.evidence = _evidence_since(state.stats, item_state.exchanges_at_start)
    recorder = item_state.recorder
    failures = [] if recorder is None else _in_selection(state, recorder.failures)
    if report.when == "call" and report.passed and failures:
        report.outcome = "failed"
        lines = [f"{len(failures)} conformance check(s) failed:"]
        lines += [f"- {c.check_id} ({', '.join(c.requirement_ids)}): {c.message}" for c in failures]
        report.longrepr = "\n".join(lines)
        item_state.synthesized_failure = True
    if report.when == "teardown":
        properties = _final_properties(item, item_state, state)
        report.user_properties.extend(properties)
        item.user_properties.extend(properties)
    return report


def _in_selection(state: _SessionState, checks: list[CheckResult]) -> list[CheckResult]:
    """``checks`` but those naming only requirements ``--only``/``--skip`` leave out: the
    engine sets their results aside, and they must not fail the test (nor stop a --fail-fast
    run)."""
    settings = state.settings
    if not settings.only and not settings.skip:
        return checks
    if state.outside is None:
        from conformance.core.catalogue import load_catalogue

        every = {requirement.id for requirement in load_catalogue().requirements}
        state.outside = frozenset(every - selected_requirement_ids(settings.only, settings.skip))
    outside = state.outside
    return [c for c in checks if not (c.requirement_ids and outside.issuperset(c.requirement_ids))]


def _note_server_health(
    stats: ClientStats, call: pytest.CallInfo[None], report: pytest.TestReport
) -> None:
    """Count timeouts of HTTP stacks other than SuiteClient (which counts its own)."""
    excinfo = call.excinfo
    if excinfo is None:
        if report.passed:
            stats.consecutive_timeouts = stats.late_answers = 0
        return
    if not isinstance(excinfo.value, SuiteTransportError) and _is_timeout(excinfo.value):
        stats.consecutive_timeouts += 1


def _evidence_since(stats: ClientStats, exchanges_at_start: int) -> Evidence | None:
    if stats.exchanges <= exchanges_at_start or stats.last_client is None:
        return None
    return stats.last_client.last_exchange


def _test_outcome(item_state: _ItemState) -> tuple[Outcome, str]:
    setup = item_state.reports.get("setup")
    call = item_state.reports.get("call")
    teardown = item_state.reports.get("teardown")
    not_judged = item_state.not_judged
    if setup is not None and setup.failed and "setup" in not_judged:
        return Outcome.NOT_EXERCISED, not_judged["setup"]
    if setup is not None and setup.failed:
        return Outcome.FAILED, "error while preparing the check: " + _report_message(setup)
    if setup is not None and setup.skipped:
        return Outcome.NOT_EXERCISED, _report_message(setup)
    if call is not None and call.failed and "call" in not_judged:
        return Outcome.NOT_EXERCISED, not_judged["call"]
    if call is not None and call.failed:
        return Outcome.FAILED, _report_message(call)
    if call is not None and call.skipped:
        return Outcome.NOT_EXERCISED, _report_message(call)
    if teardown is not None and teardown.failed and "teardown" in not_judged:
        return Outcome.NOT_EXERCISED, not_judged["teardown"]
    if teardown is not None and teardown.failed:
        return Outcome.FAILED, "error while cleaning up: " + _report_message(teardown)
    return Outcome.PASSED, ""


def _spare_budget_cut(
    outcome: Outcome,
    message: str,
    recorded: list[CheckResult],
    item_state: _ItemState,
    state: _SessionState,
) -> tuple[Outcome, str, list[CheckResult]]:
    """The run's time budget ran out during this check and its clients refused to send: what
    that cut short is not exercised, not failed; a failure found before stays one."""
    reason = budget_reason(state.stats.budget_s)
    recorded = [
        replace(c, outcome=Outcome.NOT_EXERCISED, evidence=None, reason_not_exercised=reason)
        if c.outcome is Outcome.FAILED and reason in c.message
        else c
        for c in recorded
    ]
    if outcome is Outcome.FAILED and not item_state.synthesized_failure:
        return Outcome.NOT_EXERCISED, reason, recorded
    return outcome, message, recorded


def _check_id(item: pytest.Item) -> str:
    return item.nodeid.rsplit("/", 1)[-1]


def _final_properties(
    item: pytest.Item, item_state: _ItemState, state: _SessionState
) -> list[tuple[str, object]]:
    family = family_of(item)
    outcome, message = _test_outcome(item_state)
    message = clean_message(message, state.secrets)
    recorded = item_state.recorder.checks if item_state.recorder is not None else []
    gone = state.stats.server_gone and SERVER_GONE not in message
    if outcome is Outcome.NOT_EXERCISED and item_state.not_judged and gone:
        message = f"{message}; {gone_reason(state.stats)}"
    if state.stats.budget_refusals > item_state.budget_refusals_at_start:
        outcome, message, recorded = _spare_budget_cut(
            outcome, message, recorded, item_state, state
        )
    rates = state.stats.rate_limiting
    if rates.counts.given_up > item_state.rate_limits_at_start.counts.given_up:
        outcome, message, recorded = rate_limit_checks.spare_rate_limited(
            outcome, message, recorded, synthesized=item_state.synthesized_failure
        )
    checks = list(recorded)
    real_failure = outcome is Outcome.FAILED and not item_state.synthesized_failure
    if not recorded or real_failure or outcome is Outcome.NOT_EXERCISED:
        call = item_state.reports.get("call")
        checks.append(
            CheckResult(
                check_id=_check_id(item),
                family=family,
                requirement_ids=_marker_ids(item),
                outcome=outcome,
                message=message,
                operation_id=item_state.operation_id,
                duration_s=round(call.duration if call is not None else 0.0, 6),
                evidence=item_state.evidence if outcome is Outcome.FAILED else None,
                reason_not_exercised=(message or "skipped")
                if outcome is Outcome.NOT_EXERCISED
                else None,
            )
        )
    checks += rate_limit_checks.answers_judged(
        rates, item_state.rate_limits_at_start, state.settings.only, state.settings.skip
    )
    checks += _server_errors(item, item_state, checks, family, state.stats.server_errors)
    properties: list[tuple[str, object]] = [(CHECK_PROPERTY, check_to_dict(c)) for c in checks]
    properties.append((REQUESTS_PROPERTY, state.stats.requests_sent - item_state.requests_at_start))
    waited = rates.counts - item_state.rate_limits_at_start.counts
    if waited != RateLimitCounts():
        properties.append((RATE_LIMITS_PROPERTY, waited.as_dict()))
    answers = state.statuses.take_property() if state.statuses is not None else {}
    if answers:
        properties.append((STATUSES_PROPERTY, answers))
    log = None if item_state.case_log is None else logged(item_state.case_log)
    if log is not None:
        properties.append((CASE_COVERAGE_PROPERTY, log.to_dict()))
    properties.append((FAMILY_PROPERTY, family))
    return properties
