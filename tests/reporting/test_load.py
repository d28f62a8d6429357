"""``load``: results.json read back renders every report exactly as the run wrote it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.core.results import RunResult
from conformance.reporting import html, json_report, junit, summary, write_reports
from conformance.reporting.load import LoadError, load_view
from tests.reporting.runs import HUGE_BODY_CHARS

RENDERERS = {
    html.FILENAME: html.render,
    junit.FILENAME: junit.render,
    summary.FILENAME: summary.render,
}


@pytest.mark.parametrize("fixture", ["passing_run", "failing_run", "untested_run"])
@pytest.mark.parametrize("filename", list(RENDERERS))
def test_every_format_re_renders_byte_for_byte(
    fixture: str, filename: str, report_dir: Path, request: pytest.FixtureRequest
) -> None:
    run: RunResult = request.getfixturevalue(fixture)
    write_reports(run, report_dir)
    view = load_view(report_dir / json_report.FILENAME)
    assert RENDERERS[filename](view).encode() == (report_dir / filename).read_bytes()


def test_the_failing_run_exercises_what_results_json_cuts_or_escapes(
    failing_run: RunResult, report_dir: Path
) -> None:
    # the round trip above is only meaningful if these cases are in it
    write_reports(failing_run, report_dir)
    document = json.loads((report_dir / json_report.FILENAME).read_text(encoding="utf-8"))
    truncated = [c["evidence"]["truncated"] for c in document["checks"] if c["evidence"]]
    assert {"response_body": HUGE_BODY_CHARS + 10} in truncated
    page = (report_dir / html.FILENAME).read_text(encoding="utf-8")
    assert "binary or non-UTF-8 content" in page
    assert f"of {HUGE_BODY_CHARS + 10:,} characters shown" in page


def test_results_json_itself_round_trips(passing_run: RunResult, report_dir: Path) -> None:
    write_reports(passing_run, report_dir)
    original = (report_dir / json_report.FILENAME).read_bytes()
    assert json_report.render(load_view(report_dir / json_report.FILENAME)).encode() == original


def test_summary_names_the_directory_it_is_told(passing_run: RunResult, report_dir: Path) -> None:
    write_reports(passing_run, report_dir)
    view = load_view(report_dir / json_report.FILENAME, reports_dir="elsewhere")
    assert "reports: `elsewhere`" in summary.render(view)


def _edited(report_dir: Path, edit: str) -> Path:
    path = report_dir / json_report.FILENAME
    document = json.loads(path.read_text(encoding="utf-8"))
    if edit == "unknown field":
        document["extra"] = 1
    elif edit == "bad outcome":
        document["requirements"][0]["outcome"] = "sort of"
    elif edit == "check out of range":
        document["requirements"][0]["checks"] = [10_000]
    elif edit == "unknown section":
        document["requirements"][0]["section"] = "spec 99"
    elif edit == "verdict summary":
        document["verdict_summary"] = "CONFORMANT, 999 of 999 requirements exercised"
    elif edit == "missing field":
        del document["seed"]
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("unknown field", "Additional properties"),
        ("bad outcome", "requirements/0/outcome"),
        ("check out of range", "names a check beyond"),
        ("unknown section", "unknown section 'spec 99'"),
        ("verdict summary", "does not match"),
        ("missing field", "'seed' is a required property"),
    ],
)
def test_an_edited_results_json_is_refused(
    edit: str, message: str, passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(passing_run, report_dir)
    with pytest.raises(LoadError, match=r"results\.json") as raised:
        load_view(_edited(report_dir, edit))
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"type": "a HAR, say"}', "not a valid results.json"),
        (b"not json at all", "is not JSON"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"[]", "not a valid results.json"),
    ],
)
def test_a_foreign_file_is_refused(content: bytes, message: str, tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(content)
    with pytest.raises(LoadError, match=message):
        load_view(path)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="cannot read"):
        load_view(tmp_path / "nope.json")


@pytest.mark.parametrize("version", ["2.0", "0.9"])
def test_a_results_json_of_another_major_schema_is_refused_by_name(
    version: str, passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(passing_run, report_dir)
    path = report_dir / json_report.FILENAME
    document = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**document, "schema_version": version}), encoding="utf-8")
    with pytest.raises(LoadError, match=f"schema version {version}; .* reads schema 1.x"):
        load_view(path)
