"""The runner puts the constraint cases its tests logged into the run's result and its reports:
``RunResult.case_coverage`` (one summary per operation) and ``case_log`` (the triples), and
nothing when no test logged one.

The pytest session is replaced by one that hands the collector the test reports a run of the
boundaries family would, so that this takes a second, not a run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.core.case_coverage import CaseKey, CaseLog, OperationCaseCoverage
from conformance.engine import runner
from conformance.engine.collector import ResultCollector
from conformance.engine.options import RunOptions
from conformance.engine.progress import NullDisplay
from conformance.suite.wire.check_properties import CASE_COVERAGE_PROPERTY

DOT = CaseKey("createPayoutSchedule", "body.min_send_amount", "pattern", "trailing-dot")
NULL = CaseKey("createPayoutSchedule", "body.min_send_amount", "type", "null")


class Report:
    def __init__(self, properties: list[tuple[str, Any]]) -> None:
        self.nodeid = "test_boundaries.py::test_boundaries[createPayoutSchedule]"
        self.when = "teardown"
        self.failed = False
        self.user_properties = properties


def session_logging(*logs: CaseLog) -> Callable[..., str | None]:
    def run_pytest(
        options: RunOptions, target: object, seed: int, collector: ResultCollector, *rest: object
    ) -> str | None:
        for log in logs:
            report = Report([(CASE_COVERAGE_PROPERTY, log.to_dict())])
            collector.pytest_runtest_logreport(report)  # type: ignore[arg-type]
        return None

    return run_pytest


def log_of(applicable: list[CaseKey], sent: list[CaseKey]) -> CaseLog:
    log = CaseLog()
    log.expect(applicable)
    for key in sent:
        log.record(key)
    return log


def test_the_result_and_results_json_carry_the_merged_cases(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    logs = (log_of([DOT, NULL], [DOT]), log_of([NULL], [NULL, NULL]))
    monkeypatch.setattr(runner, "_run_pytest", session_logging(*logs))
    options = RunOptions(seed=3, only=("LIMIT-002",), preflight=False, report_dir=tmp_path / "r")
    finished = runner.execute(options, NullDisplay())
    assert finished.result.case_coverage == (
        OperationCaseCoverage("createPayoutSchedule", 2, 2, 2, 3, ()),
    )
    assert finished.result.case_log is not None
    assert finished.result.case_log.sent == {DOT, NULL}
    document = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    assert document["case_coverage"]["operations"] == [finished.result.case_coverage[0].to_dict()]


def test_a_run_whose_tests_logged_nothing_has_no_case_coverage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runner, "_run_pytest", session_logging())
    options = RunOptions(seed=3, only=("LIMIT-002",), preflight=False)
    finished = runner.execute(options, NullDisplay())
    assert (finished.result.case_coverage, finished.result.case_log) == ((), None)
