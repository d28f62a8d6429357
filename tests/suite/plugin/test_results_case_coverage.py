"""The ``case_log`` fixture and what the plugin hands on of it: a test that asks for the fixture
gets a fresh ``CaseLog``, and at its end the log rides on the report as
``CASE_COVERAGE_PROPERTY`` (``CaseLog.to_dict()``) when it logged anything; a test that does
not ask, or logs nothing, adds nothing.

Each test writes a small project with pytester (``tests.suite.plugin.projects``). Files under
``checks/`` are conformance checks, files elsewhere are ordinary tests.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.suite.wire.check_properties import CASE_COVERAGE_PROPERTY
from tests.suite.plugin.projects import project, write_check

pytest_plugins = ("pytester",)
__all__ = ["project"]  # the fixture, used by name

LOGGING = """
import pytest

from conformance.core.case_coverage import CaseKey

DOT = CaseKey("createPayoutSchedule", "body.min_send_amount", "pattern", "trailing-dot")
NULL = CaseKey("createPayoutSchedule", "body.min_send_amount", "type", "null")

@pytest.mark.requirement("LIMIT-002")
def test_logs(case_log):
    case_log.expect([DOT, NULL])
    case_log.record(DOT)
    case_log.record(DOT)

@pytest.mark.requirement("LIMIT-002")
def test_fails_after_logging(case_log):
    case_log.expect([NULL])
    case_log.record(NULL)
    assert False, "the server accepted null"

@pytest.mark.requirement("LIMIT-002")
def test_asks_but_logs_nothing(case_log):
    assert not case_log.applicable and not case_log.sent

@pytest.mark.requirement("LIMIT-002")
def test_without_the_fixture():
    pass
"""


def logged(result: pytest.HookRecorder) -> dict[str, list[Any]]:
    """Each test's CASE_COVERAGE_PROPERTY values, by test name."""
    found: dict[str, list[Any]] = {}
    for report in result.getreports("pytest_runtest_logreport"):
        if report.when == "teardown":
            name = report.nodeid.rsplit("::", 1)[-1]
            found[name] = [v for k, v in report.user_properties if k == CASE_COVERAGE_PROPERTY]
    return found


def test_a_check_hands_on_the_cases_it_logged_and_no_other_adds_any(
    project: pytest.Pytester,
) -> None:
    write_check(project, "test_bounds", LOGGING)
    result = project.inline_run()
    result.assertoutcome(passed=3, failed=1)
    found = logged(result)
    assert found["test_logs"] == [
        {
            "applicable": [
                ["createPayoutSchedule", "body.min_send_amount", "pattern", "trailing-dot"],
                ["createPayoutSchedule", "body.min_send_amount", "type", "null"],
            ],
            "sent": [["createPayoutSchedule", "body.min_send_amount", "pattern", "trailing-dot"]],
            "cases": {"createPayoutSchedule": 2},
        }
    ]
    # a check that failed had still sent its cases: they count
    assert found["test_fails_after_logging"] == [
        {
            "applicable": [["createPayoutSchedule", "body.min_send_amount", "type", "null"]],
            "sent": [["createPayoutSchedule", "body.min_send_amount", "type", "null"]],
            "cases": {"createPayoutSchedule": 1},
        }
    ]
    assert found["test_asks_but_logs_nothing"] == []
    assert found["test_without_the_fixture"] == []


def test_each_test_gets_a_fresh_log(project: pytest.Pytester) -> None:
    write_check(
        project,
        "test_fresh",
        """
        import pytest

        from conformance.core.case_coverage import CaseKey

        @pytest.mark.requirement("LIMIT-002")
        @pytest.mark.parametrize("n", [1, 2])
        def test_logs(case_log, n):
            assert not case_log.sent, "the log of the test before"
            case_log.record(CaseKey("listPayments", "query.cursor", "cursor", f"class-{n}"))
        """,
    )
    result = project.inline_run()
    result.assertoutcome(passed=2)
    found = logged(result)
    assert [v[0]["sent"] for v in found.values()] == [
        [["listPayments", "query.cursor", "cursor", "class-1"]],
        [["listPayments", "query.cursor", "cursor", "class-2"]],
    ]


def test_an_ordinary_test_outside_the_suite_hands_on_nothing(project: pytest.Pytester) -> None:
    project.makepyfile(test_plain=LOGGING.replace('@pytest.mark.requirement("LIMIT-002")\n', ""))
    result = project.inline_run("test_plain.py")
    result.assertoutcome(passed=3, failed=1)
    assert all(values == [] for values in logged(result).values())
