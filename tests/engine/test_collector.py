"""The collector merges the constraint cases every test logged (``CASE_COVERAGE_PROPERTY``) into
one ``CaseLog`` of the run: one operation's cases may come from several tests, run by several
test processes, and what a test process sends that is not a log is left out."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.case_coverage import CaseKey, CaseLog, OperationCaseCoverage
from conformance.engine.collector import ResultCollector
from conformance.engine.progress import NullDisplay
from conformance.suite.wire.check_properties import CASE_COVERAGE_PROPERTY
from tests.suite.plugin.projects import project, write_check

pytest_plugins = ("pytester",)
__all__ = ["project"]  # the fixture, used by name

AMOUNT = ("createPayoutSchedule", "body.min_send_amount")
DOT = CaseKey(*AMOUNT, "pattern", "trailing-dot")
NULL = CaseKey(*AMOUNT, "type", "null")
MISSING = CaseKey(*AMOUNT, "required", "missing")
CURSOR = CaseKey("listPayments", "query.cursor", "cursor", "unknown-cursor")


class Report:
    def __init__(self, properties: list[tuple[str, Any]], nodeid: str = "test_b.py::t") -> None:
        self.nodeid = nodeid
        self.when = "teardown"
        self.failed = False
        self.user_properties = properties


def log_of(applicable: list[CaseKey], sent: list[CaseKey]) -> dict[str, Any]:
    log = CaseLog()
    log.expect(applicable)
    for key in sent:
        log.record(key)
    return log.to_dict()


def collect(*values: object) -> ResultCollector:
    collector = ResultCollector(NullDisplay())
    for value in values:
        report = Report([(CASE_COVERAGE_PROPERTY, value)])
        collector.pytest_runtest_logreport(report)  # type: ignore[arg-type]
    return collector


def test_two_tests_of_one_operation_are_merged_as_sets_and_their_cases_added() -> None:
    first = log_of([DOT, NULL, MISSING], [DOT, DOT])  # trailing-dot sent twice
    second = log_of([NULL, MISSING], [NULL, DOT])  # overlaps the first on NULL, MISSING, DOT
    collector = collect(first, second)
    assert collector.case_log.applicable == {DOT, NULL, MISSING}
    assert collector.case_log.sent == {DOT, NULL}
    assert collector.case_log.cases == {"createPayoutSchedule": 4}
    assert collector.case_log.by_operation() == (
        OperationCaseCoverage(
            "createPayoutSchedule",
            constraints=3,
            triples=3,
            covered=2,
            cases=4,
            missing=("createPayoutSchedule body.min_send_amount: no missing case (required)",),
        ),
    )


def test_operations_stay_apart() -> None:
    collector = collect(log_of([DOT], [DOT]), log_of([CURSOR], []))
    rows = {row.operation_id: row for row in collector.case_log.by_operation()}
    assert (rows["createPayoutSchedule"].covered, rows["createPayoutSchedule"].cases) == (1, 1)
    assert (rows["listPayments"].covered, rows["listPayments"].cases) == (0, 0)
    assert rows["listPayments"].missing == (
        "listPayments query.cursor: no unknown-cursor case (cursor)",
    )


@pytest.mark.parametrize(
    "value",
    [
        None,
        "applicable",
        ["createPayment", "body.x", "type", "null"],
        {"applicable": "createPayment body.x type null"},
        {"applicable": [["createPayment", "body.x", "type"]], "sent": [[1, 2, 3, 4]]},
        {"applicable": [["createPayment", "body.x", "type", None]], "sent": [{"a": 1}]},
        {"cases": {"createPayment": -3}},
        {"cases": {"createPayment": "many", "7": 2.5}},
        {"cases": ["createPayment", 3]},
    ],
)
def test_what_is_not_a_log_is_left_out_without_a_traceback(value: object) -> None:
    collector = collect(value)
    assert collector.case_log == CaseLog()
    assert collector.case_log.by_operation() == ()


def test_a_malformed_entry_costs_only_itself() -> None:
    good = log_of([DOT], [DOT])
    good["applicable"].append(["createPayoutSchedule", "body.min_send_amount", "pattern"])
    good["sent"].append("trailing-dot")
    collector = collect(good)
    assert (collector.case_log.applicable, collector.case_log.sent) == ({DOT}, {DOT})


def test_a_run_of_checks_logging_cases_merges_them(project: pytest.Pytester) -> None:
    """End to end in one process: two checks of one operation log overlapping triples; the
    collector, a plugin of the run as the engine adds it, merges them."""
    write_check(
        project,
        "test_bounds",
        """
        import pytest

        from conformance.core.case_coverage import CaseKey

        DOT = CaseKey("createPayoutSchedule", "body.min_send_amount", "pattern", "trailing-dot")
        NULL = CaseKey("createPayoutSchedule", "body.min_send_amount", "type", "null")

        @pytest.mark.requirement("LIMIT-002")
        def test_pattern(case_log):
            case_log.expect([DOT, NULL])
            case_log.record(DOT)

        @pytest.mark.requirement("LIMIT-002")
        def test_type(case_log):
            case_log.expect([NULL])
            case_log.record(NULL)
            case_log.record(NULL)

        @pytest.mark.requirement("LIMIT-002")
        def test_other():
            pass
        """,
    )
    collector = ResultCollector(NullDisplay())
    project.inline_run(plugins=[collector]).assertoutcome(passed=3)
    assert collector.case_log.by_operation() == (
        OperationCaseCoverage("createPayoutSchedule", 2, 2, 2, 3, ()),
    )
