"""``read_outcomes``: a run's requirement outcomes from its results.json or report directory,
refused with a message when the file cannot be a results.json this version reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.core.results import Outcome, RunResult
from conformance.reporting import json_report, write_reports
from conformance.reporting.load import LoadError
from conformance.reporting.outcomes import read_outcomes


def test_a_report_directory_and_its_results_json_read_the_same(
    failing_run: RunResult, report_dir: Path
) -> None:
    write_reports(failing_run, report_dir)
    from_dir = read_outcomes(report_dir)
    from_file = read_outcomes(report_dir / json_report.FILENAME)
    assert from_dir.outcomes == from_file.outcomes
    assert (from_dir.source, from_file.source) == (
        str(report_dir),
        str(report_dir / json_report.FILENAME),
    )
    assert from_dir.outcomes == {r.requirement.id: r.outcome for r in failing_run.requirements}
    assert Outcome.FAILED in from_dir.outcomes.values()
    assert (from_dir.verdict, from_dir.profile_name) == ("NOT CONFORMANT", "default")


def test_a_directory_without_results_json_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match=r"cannot read .*results\.json: No such file"):
        read_outcomes(tmp_path)


def test_a_results_json_of_another_major_version_is_refused(
    passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(passing_run, report_dir)
    path = report_dir / json_report.FILENAME
    document = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**document, "schema_version": "2.1"}), encoding="utf-8")
    with pytest.raises(LoadError, match=r"schema version 2\.1"):
        read_outcomes(report_dir)


def test_another_json_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text('{"manifest_version": "1.0"}', encoding="utf-8")
    with pytest.raises(LoadError, match=r"not a valid results\.json"):
        read_outcomes(path)
