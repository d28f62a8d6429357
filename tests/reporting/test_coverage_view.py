"""Coverage by operation in the reports (conformance/reporting/coverage.py).

The status codes shown are those the server answered, per operation, as the run saw them: not
numbers found in requirement texts (a "128 characters" once showed as status 128).
"""

from __future__ import annotations

from dataclasses import replace

from conformance.core.catalogue import Layer, Requirement
from conformance.reporting import html, summary
from conformance.reporting.coverage import by_operation
from conformance.reporting.view import RunView, build_view
from tests.reporting.runs import FAILED, PASSED, SPEC_4, check, make_run


def requirement(rid: str, text: str, *operations: str) -> Requirement:
    return Requirement(rid, SPEC_4, Layer.CONTRACT, "MUST", text, operations)


REQUIREMENTS = [
    requirement("OPS-001", "createPayment MUST answer 201 with the payment.", "createPayment"),
    requirement("OPS-002", "An order number of 128 characters MUST be accepted.", "createPayment"),
    requirement("OPS-003", "An unknown id MUST be answered 404.", "cancelPayment", "createPayment"),
    requirement("OPS-004", "A cancel MUST answer 200 within 300 seconds.", "cancelPayment"),
]
ANSWERED = {"createPayment": {201: 14, 400: 3, 409: 1}, "cancelPayment": {200: 2}}


def run_view(statuses: dict[str, dict[int, int]] | None = None) -> RunView:
    checks = [
        check("schema/create", PASSED, "OPS-001"),
        check("schema/duplicate", FAILED, "OPS-002", message="answered 201"),
        check("schema/cancel", PASSED, "OPS-004"),
    ]  # OPS-003 not exercised
    run = make_run(checks, requirements=REQUIREMENTS)
    run = replace(run, statuses_seen=ANSWERED if statuses is None else statuses)
    return build_view(run, reports_dir="out")


def test_each_operation_counts_its_requirements_and_the_statuses_the_server_answered() -> None:
    rows = {row.operation_id: row for row in by_operation(run_view())}
    create, cancel = rows["createPayment"], rows["cancelPayment"]
    assert (create.passed, create.failed, create.not_exercised) == (1, 1, ("OPS-003",))
    assert create.statuses == ((201, 14), (400, 3), (409, 1))
    assert (cancel.passed, cancel.failed, cancel.not_exercised) == (1, 0, ("OPS-003",))
    assert cancel.statuses == ((200, 2),)


def test_numbers_in_requirement_texts_are_not_status_codes() -> None:
    rows = {row.operation_id: row for row in by_operation(run_view({}))}
    assert rows["createPayment"].statuses == ()
    assert rows["cancelPayment"].statuses == ()
    text = summary.render(run_view({}))
    assert "| `createPayment` | 1 | 1 | 1 | none |" in text  # not "128" from "128 characters"
    assert "| `cancelPayment` | 1 | 0 | 1 | none |" in text  # not "300" from "300 seconds"


def test_the_html_and_markdown_reports_show_coverage_by_operation() -> None:
    view = run_view()
    page = html.render(view)
    assert '<a href="#operations">Coverage by operation</a>' in page
    assert '<td class="mono">createPayment</td>' in page
    assert "<td>201 ×14, 400 ×3, 409 ×1</td>" in page
    text = summary.render(view)
    assert "| operation | passed | failed | not exercised | status codes answered |" in text
    assert "| `createPayment` | 1 | 1 | 1 | 201 ×14, 400 ×3, 409 ×1 |" in text
    assert "| `cancelPayment` | 1 | 0 | 1 | 200 ×2 |" in text
