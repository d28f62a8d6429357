"""``--only``/``--skip``: a run counts only the requirements it selected, and says what it left.

A test may name several requirements and record results for each; with ``--only "spec 6"``, a
failure of a requirement outside the selection printed "1 failed" and a first-failure time next
to a CONFORMANT verdict. Such results fail no phase line and set no first-failure time; the run
keeps them in ``checks`` but counts only ``selected_checks``, and the console and every report
leave the rest out and say how many there were.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from conformance.core.evidence import check_to_dict
from conformance.core.results import CheckResult, Outcome, RunResult
from conformance.engine.collector import ResultCollector
from conformance.engine.progress import NullDisplay, render_summary, verdict_line
from conformance.reporting import html, json_report, junit, summary, write_reports
from conformance.reporting.load import load_view
from conformance.suite.wire.check_properties import CHECK_PROPERTY
from tests.reporting import runs

IGNORED = "1 result outside the selection ignored"


class Report:
    """The teardown report of one test, as the collector reads it."""

    def __init__(self, nodeid: str, checks: list[CheckResult]) -> None:
        self.nodeid = nodeid
        self.when = "teardown"
        self.failed = False
        self.user_properties: list[tuple[str, Any]] = [
            (CHECK_PROPERTY, check_to_dict(c)) for c in checks
        ]


class Phases(NullDisplay):
    def __init__(self) -> None:
        self.failed: list[bool] = []

    def test_done(self, phase: str, family: str, failed: bool, requests: int) -> None:
        self.failed.append(failed)


def check(ids: tuple[str, ...], outcome: Outcome) -> CheckResult:
    return CheckResult("t", "auth", ids, outcome, message="m")


def test_a_failure_naming_only_requirements_outside_the_selection_fails_no_phase() -> None:
    display = Phases()
    collector = ResultCollector(display, outside=frozenset({"SHAPE-001"}))
    outside = check(("SHAPE-001",), Outcome.FAILED)
    inside = check(("AUTH-001",), Outcome.PASSED)
    collector.pytest_runtest_logreport(Report("test_auth.py::t1", [outside, inside]))  # type: ignore[arg-type]
    assert collector.checks == [outside, inside]
    assert collector.first_failure_s is None
    assert display.failed == [False]


def test_a_failure_naming_a_selected_requirement_counts() -> None:
    display = Phases()
    collector = ResultCollector(display, outside=frozenset({"SHAPE-001"}))
    both = check(("AUTH-001", "SHAPE-001"), Outcome.FAILED)
    collector.pytest_runtest_logreport(Report("test_auth.py::t1", [both]))  # type: ignore[arg-type]
    assert collector.checks == [both]
    assert collector.first_failure_s is not None
    assert display.failed == [True]


def test_without_a_selection_every_failure_counts() -> None:
    collector = ResultCollector(NullDisplay())
    failed = check(("SHAPE-001",), Outcome.FAILED)
    collector.pytest_runtest_logreport(Report("test_auth.py::t1", [failed]))  # type: ignore[arg-type]
    assert collector.first_failure_s is not None


def test_the_run_counts_only_the_results_of_its_selection() -> None:
    outside = check(("SHAPE-001",), Outcome.FAILED)
    inside = check(("AUTH-001",), Outcome.PASSED)
    unmarked = check((), Outcome.FAILED)  # the engine refuses it as a broken suite
    typo = check(("AUTH-0001",), Outcome.PASSED)  # the reports show it as unattributed
    run = replace(passing_run(), checks=(outside, inside, unmarked, typo))
    assert run.selected_checks == run.checks and run.outside_selection == 0
    run = replace(run, outside_ids=frozenset({"SHAPE-001", "SHAPE-002"}))
    assert run.selected_checks == (inside, unmarked, typo)
    assert run.outside_selection == 1


def passing_run() -> RunResult:
    return runs.make_run([runs.check("auth/missing-key", runs.PASSED, "AUTH-001")])


def test_the_console_and_every_report_say_what_was_outside_the_selection(tmp_path: Path) -> None:
    run = passing_run()
    outside = check(("SHAPE-001",), Outcome.FAILED)
    run = replace(run, checks=(*run.checks, outside), outside_ids=frozenset({"SHAPE-001"}))
    report_dir = tmp_path / "reports"
    assert verdict_line(run).endswith(f"; {IGNORED}")
    assert "1 check result recorded" in verdict_line(run)
    out = io.StringIO()
    render_summary(Console(file=out, width=200, color_system=None), run)
    assert IGNORED in out.getvalue()
    write_reports(run, report_dir)
    assert IGNORED in (report_dir / summary.FILENAME).read_text(encoding="utf-8")
    assert IGNORED in (report_dir / html.FILENAME).read_text(encoding="utf-8")
    properties = {
        p.get("name"): p.get("value")
        for p in ET.parse(report_dir / junit.FILENAME).getroot().iter("property")
    }
    assert properties["results_outside_selection"] == "1"
    document = json.loads((report_dir / json_report.FILENAME).read_text(encoding="utf-8"))
    assert document["outside_selection"] == 1
    assert [c["requirement_ids"] for c in document["checks"]] == [["AUTH-001"]]
    assert document["counts"]["checks"]["failed"] == 0
    view = load_view(report_dir / json_report.FILENAME)
    assert view.outside_selection == 1
    assert summary.render(view).encode() == (report_dir / summary.FILENAME).read_bytes()


def test_a_run_with_nothing_outside_says_nothing_of_it() -> None:
    assert "outside the selection" not in verdict_line(passing_run())
