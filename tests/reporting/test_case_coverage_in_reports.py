"""Constraint-case coverage in every report: results.json (the per-operation summaries and the
triples behind them), report.html (a table per operation), summary.md and the console (one
line of totals, and summary.md lists the pairs without a case). A run in which no test logged a
constraint case shows none of it, and results.json files written before the field existed
still load."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from rich.console import Console

from conformance.core.case_coverage import CaseKey, CaseLog, coverage_line, logged
from conformance.core.results import RunResult
from conformance.engine.progress import render_summary
from conformance.reporting import html, json_report, junit, summary, write_reports
from conformance.reporting.load import load_view
from conformance.reporting.view import build_view

AMOUNT = ("createPayoutSchedule", "body.min_send_amount")
DOT = CaseKey(*AMOUNT, "pattern", "trailing-dot")
NULL = CaseKey(*AMOUNT, "type", "null")
MISSING = CaseKey(*AMOUNT, "required", "missing")
CURSOR = CaseKey("listPayments", "query.cursor", "cursor", "unknown-cursor")
FOREIGN = CaseKey("listPayments", "query.cursor", "cursor", "foreign-cursor")
GAP = "listPayments query.cursor: no foreign-cursor case (cursor)"
LINE = "constraint cases: 1,202 cases over 4 of 5 (constraint, class) pairs in 2 operations"


def case_log() -> CaseLog:
    log = CaseLog()
    log.expect([DOT, NULL, MISSING, CURSOR, FOREIGN])
    for key in (DOT, NULL, MISSING, CURSOR):
        log.record(key)
    log.cases["createPayoutSchedule"] += 1_198  # many cases of one pair: counted, not listed
    return log


def with_cases(run: RunResult, log: CaseLog | None = None) -> RunResult:
    """``run`` as a default (not --quick) run that logged ``log``."""
    log = case_log() if log is None else log
    options = {**run.options, "quick": "false"}
    return replace(run, case_coverage=log.by_operation(), case_log=log, options=options)


@pytest.fixture
def report_dir(tmp_path: Path) -> Path:
    return tmp_path / "reports"


# -- results.json ----------------------------------------------------------------------------
def test_results_json_carries_the_summaries_and_the_triples(
    passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(with_cases(passing_run), report_dir)
    document = json.loads((report_dir / json_report.FILENAME).read_text(encoding="utf-8"))
    jsonschema.validate(document, json_report.schema())
    coverage = document["case_coverage"]
    assert coverage["operations"] == [
        {
            "operation_id": "createPayoutSchedule",
            "constraints": 3,
            "triples": 3,
            "covered": 3,
            "cases": 1201,
            "missing": [],
        },
        {
            "operation_id": "listPayments",
            "constraints": 1,
            "triples": 2,
            "covered": 1,
            "cases": 2 - 1,
            "missing": [GAP],
        },
    ]
    assert coverage["applicable"] == [k.to_list() for k in sorted(case_log().applicable)]
    assert coverage["sent"] == [k.to_list() for k in sorted(case_log().sent)]
    assert coverage["cases"] == {"createPayoutSchedule": 1201, "listPayments": 1}


def test_results_json_reads_back_as_written(passing_run: RunResult, report_dir: Path) -> None:
    run = with_cases(passing_run)
    write_reports(run, report_dir)
    path = report_dir / json_report.FILENAME
    view = load_view(path)
    assert view.case_coverage == run.case_coverage
    assert view.case_log == run.case_log
    assert json_report.render(view).encode() == path.read_bytes()
    for name, render in (
        (html.FILENAME, html.render),
        (summary.FILENAME, summary.render),
        (junit.FILENAME, junit.render),
    ):
        assert render(view).encode() == (report_dir / name).read_bytes(), name


def test_summaries_without_their_triples_are_kept_alone(
    passing_run: RunResult, report_dir: Path
) -> None:
    """A result built with ``case_coverage`` only (``run`` always keeps the triples too)."""
    run = replace(with_cases(passing_run), case_log=None)
    write_reports(run, report_dir)
    path = report_dir / json_report.FILENAME
    document = json.loads(path.read_text(encoding="utf-8"))
    assert set(document["case_coverage"]) == {"operations"}
    view = load_view(path)
    assert (view.case_coverage, view.case_log) == (run.case_coverage, None)
    assert json_report.render(view).encode() == path.read_bytes()
    assert summary.render(view).encode() == (report_dir / summary.FILENAME).read_bytes()
    assert f"- `{GAP}`" in summary.render(view)


def test_a_run_that_logged_no_case_has_no_field(passing_run: RunResult, report_dir: Path) -> None:
    write_reports(passing_run, report_dir)
    document = json.loads((report_dir / json_report.FILENAME).read_text(encoding="utf-8"))
    assert "case_coverage" not in document
    view = load_view(report_dir / json_report.FILENAME)
    assert (view.case_coverage, view.case_log) == ((), None)


def test_a_results_json_written_before_the_field_existed_still_loads(
    passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(with_cases(passing_run), report_dir)
    path = report_dir / json_report.FILENAME
    document = json.loads(path.read_text(encoding="utf-8"))
    del document["case_coverage"]
    document["schema_version"] = "1.4"
    path.write_text(json.dumps(document), encoding="utf-8")
    view = load_view(path)
    assert (view.case_coverage, view.case_log) == ((), None)
    assert "Constraint-case coverage" not in html.render(view)


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda c: c["applicable"].append(["createPayment", "body.x", "type"]), "applicable"),
        (lambda c: c["operations"][0].update(cases=-1), "cases"),
        (lambda c: c.pop("sent"), "case_coverage"),
        (lambda c: c.pop("operations"), "operations"),
        (lambda c: c["cases"].update(createPayment=True), "createPayment"),
    ],
)
def test_an_edited_field_is_refused_by_the_schema(
    passing_run: RunResult, report_dir: Path, edit: object, where: str
) -> None:
    from conformance.reporting.load import LoadError

    write_reports(with_cases(passing_run), report_dir)
    path = report_dir / json_report.FILENAME
    document = json.loads(path.read_text(encoding="utf-8"))
    edit(document["case_coverage"])  # type: ignore[operator]
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(LoadError, match=where):
        load_view(path)


@pytest.mark.parametrize(
    "edit",
    [
        lambda c: c["operations"][1].update(covered=2, missing=[]),  # the gap hidden
        lambda c: c["sent"].pop(),  # a case taken away, the summary left
        lambda c: c["operations"].pop(),  # an operation's summary left out
    ],
)
def test_summaries_that_do_not_match_their_triples_are_refused(
    passing_run: RunResult, report_dir: Path, edit: object
) -> None:
    from conformance.reporting.load import LoadError

    write_reports(with_cases(passing_run), report_dir)
    path = report_dir / json_report.FILENAME
    document = json.loads(path.read_text(encoding="utf-8"))
    edit(document["case_coverage"])  # type: ignore[operator]
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(LoadError, match="operations do not match the triples"):
        load_view(path)


# -- report.html -----------------------------------------------------------------------------
def test_the_html_report_has_a_table_per_operation(passing_run: RunResult) -> None:
    page = html.render(build_view(with_cases(passing_run)))
    assert '<a href="#case-coverage">Constraint-case coverage</a>' in page
    assert '<section id="case-coverage">\n<h2>Constraint-case coverage</h2>' in page
    assert f"Constraint{LINE.removeprefix('constraint')}.</p>" in page
    assert (
        '<tr><td class="mono">createPayoutSchedule</td>\n<td class="num">3</td>'
        '<td class="num">3</td><td class="num">3</td><td class="num">1,201</td>\n'
        "<td>none</td></tr>"
    ) in page
    assert (
        '<tr class="row-failed"><td class="mono">listPayments</td>\n<td class="num">1</td>'
        '<td class="num">2</td><td class="num">1</td><td class="num">1</td>\n'
        f'<td><span class="mono">{GAP}</span></td></tr>'
    ) in page


def test_the_html_report_of_a_run_without_cases_has_no_section(passing_run: RunResult) -> None:
    page = html.render(build_view(passing_run))
    assert "case-coverage" not in page and "Constraint-case" not in page


# -- summary.md and the console --------------------------------------------------------------
def test_summary_md_has_the_totals_and_the_pairs_without_a_case(passing_run: RunResult) -> None:
    text = summary.render(build_view(with_cases(passing_run)))
    assert f"\n{summary.escape(LINE)}\n\n- `{GAP}`\n\n" in text
    assert "constraint cases" not in summary.render(build_view(passing_run))


def test_summary_md_lists_no_gap_when_every_pair_had_a_case(passing_run: RunResult) -> None:
    log = case_log()
    log.record(FOREIGN)
    text = summary.render(build_view(with_cases(passing_run, log)))
    line = "constraint cases: 1,203 cases over 5 of 5 (constraint, class) pairs in 2 operations"
    assert f"\n{summary.escape(line)}\n\ntarget: " in text
    assert "no foreign-cursor case" not in text


def test_summary_md_caps_the_gaps_it_lists(passing_run: RunResult) -> None:
    log = CaseLog()
    log.expect(CaseKey("listPayments", f"query.f{i:03}", "type", "null") for i in range(60))
    text = summary.render(build_view(with_cases(passing_run, log)))
    assert text.count(": no null case (type)`") == summary.MAX_GAPS
    assert "- … and 10 more: see report.html or results.json" in text


def test_a_quick_run_says_it_samples_and_lists_no_pair_as_missing(passing_run: RunResult) -> None:
    quick = replace(with_cases(passing_run), options={**passing_run.options, "quick": "true"})
    text = summary.render(build_view(quick))
    assert f"{summary.escape(LINE)} (--quick samples the classes)" in text
    assert GAP not in text
    out = io.StringIO()
    render_summary(Console(file=out, width=400), quick)
    assert f"\n{LINE} (--quick samples the classes)\n" in out.getvalue()
    assert "(--quick samples the classes)" in html.render(build_view(quick))


def test_the_console_says_the_same_line(passing_run: RunResult) -> None:
    out = io.StringIO()
    render_summary(Console(file=out, width=400), with_cases(passing_run))
    assert f"\n{LINE}\n" in out.getvalue()
    quiet = io.StringIO()
    render_summary(Console(file=quiet, width=400), passing_run)
    assert "constraint cases" not in quiet.getvalue()


def test_the_line_counts_in_the_singular_too() -> None:
    log = CaseLog()
    log.expect([CURSOR])
    log.record(CURSOR)
    assert coverage_line(log.by_operation()) == (
        "constraint cases: 1 case over 1 of 1 (constraint, class) pairs in 1 operation"
    )
    assert logged(CaseLog()) is None and logged(log) is log


# -- names from a profile's contract ---------------------------------------------------------
def test_hostile_names_are_escaped_in_every_report(
    passing_run: RunResult, report_dir: Path
) -> None:
    hostile = CaseKey("listPayments", "query.<img src=x>`|*\x1b[2J\u202e", "type", "null")
    log = CaseLog()
    log.expect([hostile])
    write_reports(with_cases(passing_run, log), report_dir)
    page = (report_dir / html.FILENAME).read_text(encoding="utf-8")
    assert "<img" not in page and "&lt;img src=x&gt;" in page
    assert "\x1b" not in page and "\u202e" not in page and "\\x1b[2J\\u202e" in page
    markdown = (report_dir / summary.FILENAME).read_text(encoding="utf-8")
    assert "\x1b" not in markdown and "\u202e" not in markdown
    # inline code, fenced past the backtick it holds: Markdown shows it as text, HTML too
    assert "- ``listPayments query.<img src=x>`|*\\x1b[2J\\u202e: no null case (type)``" in (
        markdown
    )
    document = json.loads((report_dir / json_report.FILENAME).read_text(encoding="utf-8"))
    assert document["case_coverage"]["applicable"] == [
        ["listPayments", "query.<img src=x>`|*\\x1b[2J\\u202e", "type", "null"]
    ]
