"""A run's comparison with its baseline in the reports: results.json's ``baseline`` section
(valid, read back), summary.md's and report.html's section, and the Markdown of a diff."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from conformance.core.diff import Change, Diff, compare, outcomes_of
from conformance.core.results import Outcome, RunResult
from conformance.reporting import diff, html, json_report, junit, summary, write_reports
from conformance.reporting.load import LoadError, load_view
from tests.reporting.runs import API_SECRET


def gated(run: RunResult, **baseline: Outcome) -> RunResult:
    """``run`` compared with a baseline holding ``baseline`` (ids with "_" for "-")."""
    outcomes = {rid.replace("_", "-"): outcome for rid, outcome in baseline.items()}
    old = replace(outcomes_of(run, "old/results.json"), outcomes=outcomes)
    return replace(run, baseline=compare(old, outcomes_of(run)))


@pytest.fixture
def known_failures(failing_run: RunResult) -> RunResult:
    """The failing run against a baseline that had every failure but one."""
    failed = [r.requirement.id for r in failing_run.requirements if r.outcome is Outcome.FAILED]
    return gated(
        failing_run,
        **{rid.replace("-", "_"): Outcome.FAILED for rid in failed[1:]},
        OPS_001=Outcome.FAILED,
    )


def test_results_json_holds_the_baseline_section_valid_against_its_schema(
    known_failures: RunResult, report_dir: Path
) -> None:
    write_reports(known_failures, report_dir)
    document = json.loads((report_dir / json_report.FILENAME).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(json_report.schema()).validate(document)
    section = document["baseline"]
    assert section["source"] == "old/results.json"
    assert section["gate"] == "1 new failure against the baseline"
    assert [c["was"] for c in section["newly_failed"]] == [None]
    assert document["exit_code"] == 1
    assert document["verdict"] == "NOT CONFORMANT"
    assert document["verdict_summary"].startswith(
        "NOT CONFORMANT (1 new failure against the baseline), "
    )


def test_a_run_without_a_baseline_has_no_baseline_section(
    passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(passing_run, report_dir)
    document = json.loads((report_dir / json_report.FILENAME).read_text(encoding="utf-8"))
    assert "baseline" not in document


RENDERERS = {
    html.FILENAME: html.render,
    junit.FILENAME: junit.render,
    summary.FILENAME: summary.render,
}


@pytest.mark.parametrize("filename", list(RENDERERS))
def test_every_format_re_renders_a_gated_run_byte_for_byte(
    filename: str, known_failures: RunResult, report_dir: Path
) -> None:
    write_reports(known_failures, report_dir)
    view = load_view(report_dir / json_report.FILENAME)
    assert view.baseline is not None
    assert RENDERERS[filename](view).encode() == (report_dir / filename).read_bytes()


def test_a_baseline_section_whose_gate_contradicts_its_lists_is_refused(
    known_failures: RunResult, report_dir: Path
) -> None:
    write_reports(known_failures, report_dir)
    path = report_dir / json_report.FILENAME
    document = json.loads(path.read_text(encoding="utf-8"))
    document["baseline"]["gate"] = "no new failures against the baseline"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(LoadError, match=r"baseline gate .* does not match its lists"):
        load_view(path)


def test_summary_md_says_the_gate_and_lists_each_change(
    known_failures: RunResult, report_dir: Path
) -> None:
    write_reports(known_failures, report_dir)
    text = (report_dir / summary.FILENAME).read_text(encoding="utf-8")
    assert text.startswith("## payment-conformance: ❌ NOT CONFORMANT (1 new failure against")
    assert "### Against the baseline: ❌ 1 new failure against the baseline" in text
    assert "baseline: `old/results.json`" in text
    assert "**Newly failed (1)**\n\n- `OPS-002` (not in the baseline)" in text
    assert "**Newly passed (3)**\n\n- `OPS-001` (was failed)\n" in text
    assert "**Unchanged failures (2)**\n\n- `AUTH-002`\n- `IDEM-004`\n" in text
    assert "**Newly not exercised" not in text  # an empty list is left out


def test_a_run_with_only_known_failures_is_marked_as_a_warning_not_a_failure(
    failing_run: RunResult, report_dir: Path
) -> None:
    failed = [r.requirement.id for r in failing_run.requirements if r.outcome is Outcome.FAILED]
    run = gated(failing_run, **{rid.replace("-", "_"): Outcome.FAILED for rid in failed})
    write_reports(run, report_dir)
    text = (report_dir / summary.FILENAME).read_text(encoding="utf-8")
    assert text.startswith(
        "## payment-conformance: ⚠️ NOT CONFORMANT (no new failures against the baseline)"
    )
    page = (report_dir / html.FILENAME).read_text(encoding="utf-8")
    assert "NOT CONFORMANT (no new failures against the baseline)<span" in page
    assert '<section id="baseline">' in page
    assert '<a href="#baseline">Against the baseline</a>' in page


def test_report_html_links_each_changed_requirement_to_its_row(
    known_failures: RunResult, report_dir: Path
) -> None:
    write_reports(known_failures, report_dir)
    page = (report_dir / html.FILENAME).read_text(encoding="utf-8")
    section = page.split('<section id="baseline">', 1)[1].split("</section>", 1)[0]
    assert '<a href="#req-OPS-001" class="mono">OPS-001</a> (was failed)' in section
    assert 'id="req-OPS-001"' in page


def test_the_baseline_path_is_redacted_and_escaped_in_every_report(
    passing_run: RunResult, report_dir: Path
) -> None:
    hostile = f"/tmp/{API_SECRET}/<b>x</b>\x1b[31m/results.json"
    run = gated(passing_run)
    assert run.baseline is not None
    run = replace(run, baseline=replace(run.baseline, baseline=hostile))
    write_reports(run, report_dir, secrets=[API_SECRET])
    for path in report_dir.iterdir():
        data = path.read_text(encoding="utf-8")
        assert API_SECRET not in data, path.name
        assert "\x1b" not in data, path.name
    assert "<b>x</b>" not in (report_dir / html.FILENAME).read_text(encoding="utf-8")


def test_markdown_of_a_diff_escapes_ids_and_caps_each_list() -> None:
    many = tuple(Change(f"R-{i}", Outcome.PASSED, Outcome.FAILED) for i in range(60))
    hostile = (Change("X`|<script>", None, Outcome.PASSED),)
    changes = Diff("old", "t", "CONFORMANT", newly_failed=many, newly_passed=hostile)
    lines = diff.markdown(changes)
    assert lines[0] == "### Against the baseline: ❌ 60 new failures against the baseline"
    assert "- `R-49` (was passed)" in lines
    assert "- `R-50` (was passed)" not in lines
    assert "- … and 10 more" in lines
    assert "- ``X`|<script>`` (not in the baseline)" in lines  # a code span: shown, inert
    assert "**Newly not exercised" not in "\n".join(lines)  # empty lists are left out
