"""The status codes the server answered reach the run's result, per operation."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.results import merge_statuses
from conformance.engine.collector import ResultCollector
from conformance.engine.options import RunOptions
from conformance.engine.progress import NullDisplay
from conformance.engine.runner import execute
from conformance.suite.wire.check_properties import STATUSES_PROPERTY


class Report:
    def __init__(self, properties: list[tuple[str, Any]]) -> None:
        self.nodeid = "test_auth.py::t"
        self.when = "teardown"
        self.failed = False
        self.user_properties = properties


def test_the_collector_sums_the_statuses_of_every_test() -> None:
    collector = ResultCollector(NullDisplay())
    first = {"createPayment": {"201": 2, "400": 1}}
    second = {"createPayment": {"201": 1}, "cancelPayment": {"409": 1}}
    for statuses in (first, second):
        collector.pytest_runtest_logreport(Report([(STATUSES_PROPERTY, statuses)]))  # type: ignore[arg-type]
    assert collector.statuses_seen == {
        "createPayment": {201: 3, 400: 1},
        "cancelPayment": {409: 1},
    }


def test_statuses_that_are_not_counts_are_ignored() -> None:
    collector = ResultCollector(NullDisplay())
    bad = {"createPayment": {"2x1": 1, "201": "many", "404": -1}, "listPayments": ["200"]}
    collector.pytest_runtest_logreport(Report([(STATUSES_PROPERTY, bad)]))  # type: ignore[arg-type]
    assert collector.statuses_seen == {}


def test_merging_counts() -> None:
    total = {"createPayment": {201: 1}}
    merge_statuses(total, {"createPayment": {201: 2, 409: 1}, "listPayments": {200: 1}})
    assert total == {"createPayment": {201: 3, 409: 1}, "listPayments": {200: 1}}


@pytest.mark.slow
def test_a_run_records_the_answers_its_requests_got() -> None:
    finished = execute(RunOptions(seed=42, only=("AUTH-001",), quick=True), NullDisplay())
    seen = finished.result.statuses_seen
    assert seen, "no answer counted"
    assert 401 in seen["createPayment"]  # AUTH-001: a request without a key, refused
    assert 201 in seen["createPayment"]  # the payments its prerequisites created
    assert sum(sum(s.values()) for s in seen.values()) <= finished.result.requests_sent
