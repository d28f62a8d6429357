"""The CheckResults of a run, gathered from its test reports as the tests finish.

``ResultCollector`` is a pytest plugin on the controller side: it reads what each test carried
through pytest-xdist (``suite.wire.check_properties``), feeds the display, counts requests,
rate limits and the statuses seen, and merges the constraint cases the tests logged.
``server_gone`` and ``_not_reached`` say what a run that stopped early did not judge;
``rate_limited`` why a run whose server would not let requests through is incomplete.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance import suite
from conformance.core.case_coverage import CaseLog
from conformance.core.catalogue import Requirement
from conformance.core.evidence import check_from_dict
from conformance.core.receiver_counts import ReceiverCounts
from conformance.core.results import CheckResult, Outcome, RateLimitCounts, merge_statuses
from conformance.core.shards import ShardPlan
from conformance.engine.progress import Display
from conformance.suite.tool_errors import SERVER_GONE
from conformance.suite.wire.check_properties import (
    CASE_COVERAGE_PROPERTY,
    CHECK_PROPERTY,
    FAMILY_PROPERTY,
    RATE_LIMITS_PROPERTY,
    REQUESTS_PROPERTY,
    STATUSES_PROPERTY,
    WEBHOOK_RECEIVER_PROPERTY,
)

if TYPE_CHECKING:  # the session imports this module
    from conformance.engine.session import StopSignals

NOT_REACHED_CHECK = "run: not reached"


def server_gone(checks: Sequence[CheckResult]) -> str | None:
    """Why the run is incomplete when the server stopped answering during it (``None``: it did
    not): a run whose later checks could not reach the server has no verdict."""
    for check in checks:
        reason = check.reason_not_exercised or ""
        if SERVER_GONE in reason:
            return reason[reason.index(SERVER_GONE) :]
    return None


def rate_limited(counts: RateLimitCounts) -> str | None:
    """Why the run is incomplete when requests were given up for rate limits (``None``: none
    was): the server asked for longer than the run could wait, so their checks are not
    exercised, never failed, and the run has no verdict."""
    if not counts.given_up:
        return None
    return (
        f"the server rate limited {counts.given_up} request(s) for longer than the run could "
        "wait; what they would have checked is not exercised"
    )


def _not_reached(
    selected: Sequence[Requirement], checks: Sequence[CheckResult], reason: str
) -> CheckResult | None:
    """One not-exercised check naming the selected requirements no check reached."""
    reached = {rid for check in checks for rid in check.requirement_ids}
    missing = tuple(r.id for r in selected if r.id not in reached)
    if not missing:
        return None
    return CheckResult(
        NOT_REACHED_CHECK,
        "run",
        missing,
        Outcome.NOT_EXERCISED,
        message=f"not run: {reason}",
        reason_not_exercised=reason,
    )


def statuses_of(value: Mapping[object, object]) -> dict[str, dict[int, int]]:
    """The counts of a test's STATUSES_PROPERTY; what is not a status and a count is left out."""
    found: dict[str, dict[int, int]] = {}
    for operation_id, statuses in value.items():
        if not isinstance(statuses, dict):
            continue
        for status, answers in statuses.items():
            code = str(status)
            valid = code.isdigit() and len(code) == 3 and isinstance(answers, int)
            if valid and not isinstance(answers, bool) and answers > 0:
                found.setdefault(str(operation_id), {})[int(code)] = answers
    return found


def phase_of(nodeid: str) -> str:
    """``conformance/suite/test_auth.py::test_x[y]`` -> ``auth``; a module of a family's
    package is its family: ``conformance/suite/boundaries/test_parameters.py`` -> ``boundaries``."""
    parts = nodeid.split("::", 1)[0].split("/")
    if len(parts) >= 2 and parts[-2] in _family_packages():  # ids may start below suite/
        return parts[-2]
    return parts[-1].removesuffix(".py").removeprefix("test_")


@cache
def _family_packages() -> frozenset[str]:
    """The subpackages of ``conformance.suite`` that hold a family's test modules."""
    root = Path(suite.__file__).parent
    return frozenset(p.parent.name for p in root.glob("*/test_*.py"))


def is_maxfail_stop(exc: BaseException) -> bool:
    """Whether ``exc`` is pytest-xdist's end of a session at ``--maxfail`` (its ``Interrupted``
    saying "stopping after N failures"), not a Ctrl-C."""
    kind = type(exc)
    return (
        kind.__name__ == "Interrupted"
        and kind.__module__.startswith("xdist")
        and str(exc).startswith("stopping after")
    )


class ResultCollector:
    """A pytest plugin (controller side) gathering CheckResults and feeding the display."""

    def __init__(
        self,
        display: Display,
        started: float | None = None,
        outside: frozenset[str] = frozenset(),
    ) -> None:
        self.display = display
        # ids of the catalogue's requirements --only/--skip left out: a result naming only such
        # ids is kept but fails no phase line and sets no first-failure time
        self.outside = outside
        self.statuses_seen: dict[str, dict[int, int]] = {}  # summed over STATUSES_PROPERTY
        self.started = time.perf_counter() if started is None else started
        self.first_failure_s: float | None = None  # since ``started``
        self.checks: list[CheckResult] = []
        self.requests_sent = 0
        self.rate_limits = RateLimitCounts()  # summed over the tests' RATE_LIMITS_PROPERTY
        self.webhook_receiver: ReceiverCounts | None = None  # WEBHOOK_RECEIVER_PROPERTY
        # merged over every test's CASE_COVERAGE_PROPERTY: one operation's cases may come from
        # several tests, run by several test processes
        self.case_log = CaseLog()
        self.collection_errors: list[str] = []
        self.crashed: list[str] = []
        self.stop: StopSignals | None = None
        self.shard_plan: ShardPlan | None = None  # run --shard: what the test processes ran
        # pytest-xdist ends a session that reached --maxfail (run --fail-fast) by raising its
        # Interrupted, as if Ctrl-C had been pressed: that stop is no interruption
        self.stopped_at_maxfail = False
        self._announced = False

    def _announce(self, nodeids: Sequence[str]) -> None:
        if self._announced:
            return
        self._announced = True
        phases: dict[str, int] = {}
        for nodeid in nodeids:
            phase = phase_of(nodeid)
            phases[phase] = phases.get(phase, 0) + 1
        self.display.collected(phases)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not hasattr(session.config, "workerinput") and session.items:
            self._announce([item.nodeid for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: Sequence[str]) -> None:
        self._announce(ids)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        if is_maxfail_stop(excinfo.value):
            self.stopped_at_maxfail = True
            return
        if self.stop is not None:
            self.stop.taken = True

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {report.longreprtext}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when not in {"setup", "call", "teardown"} and report.failed:
            # pytest-xdist reports a worker that died mid-test this way; no teardown follows
            self.crashed.append(f"{report.nodeid}: {report.longreprtext.strip()[:300]}")
            return
        if report.when != "teardown":
            return
        family = phase_of(report.nodeid)
        requests = 0
        failed = False
        for name, value in report.user_properties:
            if name == CHECK_PROPERTY and isinstance(value, dict):
                check = check_from_dict(value)
                self.checks.append(check)
                if check.requirement_ids and self.outside.issuperset(check.requirement_ids):
                    continue
                failed = failed or check.outcome is Outcome.FAILED
                if check.outcome is Outcome.FAILED and self.first_failure_s is None:
                    self.first_failure_s = round(time.perf_counter() - self.started, 3)
            elif name == REQUESTS_PROPERTY and isinstance(value, int):
                requests = value
            elif name == FAMILY_PROPERTY and isinstance(value, str):
                family = value
            elif name == RATE_LIMITS_PROPERTY and isinstance(value, dict):
                self.rate_limits += RateLimitCounts.from_dict(value)
            elif name == STATUSES_PROPERTY and isinstance(value, dict):
                merge_statuses(self.statuses_seen, statuses_of(value))
            elif name == WEBHOOK_RECEIVER_PROPERTY and isinstance(value, dict):
                self.webhook_receiver = ReceiverCounts.from_dict(value)
            elif name == CASE_COVERAGE_PROPERTY and isinstance(value, dict):
                self.case_log.merge(CaseLog.from_dict(value))  # what is malformed is left out
        self.requests_sent += requests
        self.display.test_done(phase_of(report.nodeid), family, failed, requests)
