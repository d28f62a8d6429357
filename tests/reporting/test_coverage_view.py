"""Coverage by operation in the reports (conformance/reporting/coverage.py)."""

from __future__ import annotations

from conformance.core.catalogue import Layer, Requirement
from conformance.reporting import html, summary
from conformance.reporting.coverage import by_operation
from conformance.reporting.view import RunView, build_view
from tests.reporting.runs import FAILED, PASSED, SPEC_4, check, make_run


def requirement(rid: str, text: str, *operations: str) -> Requirement:
    return Requirement(rid, SPEC_4, Layer.CONTRACT, "MUST", text, operations)


REQUIREMENTS = [
    requirement("OPS-001", "createPayment MUST answer 201 with the payment.", "createPayment"),
    requirement("OPS-002", "A duplicate order MUST be answered 409.", "createPayment"),
    requirement("OPS-003", "An unknown id MUST be answered 404.", "cancelPayment", "createPayment"),
    requirement("OPS-004", "A cancel MUST answer 200.", "cancelPayment"),
]


def run_view() -> RunView:
    checks = [
        check("schema/create", PASSED, "OPS-001"),
        check("schema/duplicate", FAILED, "OPS-002", message="answered 201"),
        check("schema/cancel", PASSED, "OPS-004"),
    ]  # OPS-003 not exercised
    return build_view(make_run(checks, requirements=REQUIREMENTS), reports_dir="out")


def test_each_operation_counts_its_requirements_and_the_status_codes_they_exercised() -> None:
    rows = {row.operation_id: row for row in by_operation(run_view())}
    create, cancel = rows["createPayment"], rows["cancelPayment"]
    assert (create.passed, create.failed, create.not_exercised) == (1, 1, ("OPS-003",))
    assert create.statuses == ("201", "404", "409")
    assert create.statuses_exercised == ("201", "409")
    assert (cancel.passed, cancel.failed, cancel.not_exercised) == (1, 0, ("OPS-003",))
    assert cancel.statuses_exercised == ("200",)


def test_the_html_and_markdown_reports_show_coverage_by_operation() -> None:
    view = run_view()
    page = html.render(view)
    assert '<a href="#operations">Coverage by operation</a>' in page
    assert '<td class="mono">createPayment</td>' in page
    assert "201, 409 (of 201, 404, 409)" in page
    text = summary.render(view)
    assert "| `createPayment` | 1 | 1 | 1 | 201, 409 (of 201, 404, 409) |" in text
    assert "| `cancelPayment` | 1 | 0 | 1 | 200 (of 200, 404) |" in text
