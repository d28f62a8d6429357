"""ctrf.json: the run in the Common Test Report Format, valid against CTRF's published schema.

The schema is vendored unchanged in tests/reporting/data/ctrf.schema.json (its source and
version: tests/reporting/data/README.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.core.results import RunResult
from conformance.reporting import ctrf, manifest, write_reports
from conformance.reporting.view import RunView, build_view
from tests.reporting.runs import API_SECRET, FAILED, PLANTED_SECRETS, SKIPPED, check, make_run

SCHEMA = Path(__file__).parent / "data" / "ctrf.schema.json"


def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())


def load(view: RunView) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(ctrf.render(view))
    return document


@pytest.mark.parametrize("view_name", ["passing_view", "failing_view", "untested_view"])
def test_every_kind_of_run_is_valid_against_the_published_schema(
    request: pytest.FixtureRequest, view_name: str
) -> None:
    document = load(request.getfixturevalue(view_name))
    assert [e.message for e in validator().iter_errors(document)] == []


def test_the_schema_check_catches_what_ctrf_forbids(failing_view: RunView) -> None:
    # the check above can fail: a status CTRF does not know, a field outside "extra"
    document = load(failing_view)
    document["results"]["tests"][0]["status"] = "not_exercised"
    document["results"]["verdict"] = "NOT CONFORMANT"
    messages = [e.message for e in validator().iter_errors(document)]
    assert any("'not_exercised' is not one of" in m for m in messages)
    assert any("'verdict' was unexpected" in m for m in messages)


def test_one_test_per_requirement_with_its_status_and_section(failing_view: RunView) -> None:
    document = load(failing_view)
    tests = {t["extra"]["requirement_id"]: t for t in document["results"]["tests"]}
    assert len(tests) == len(failing_view.requirements)
    summary = document["results"]["summary"]
    counts = failing_view.counts
    assert (summary["tests"], summary["passed"], summary["failed"], summary["skipped"]) == (
        counts.total,
        counts.passed,
        counts.failed,
        counts.not_exercised,
    )
    assert summary["stop"] - summary["start"] == round(failing_view.duration_s * 1000)
    failed = failing_view.failed[0]
    test = tests[failed.id]
    assert test["status"] == "failed"
    assert test["name"] == f"{failed.id}: {failed.text}"
    assert test["suite"] == [f"{failed.section.key} {failed.section.title}"]
    assert test["message"]
    assert f"replay: {failed.replay}" in test["trace"]
    skipped = failing_view.not_exercised[0]
    assert tests[skipped.id]["status"] == "skipped"
    assert tests[skipped.id]["message"] == skipped.reason_not_exercised


def test_the_verdict_and_what_was_tested_go_in_extra(failing_view: RunView) -> None:
    document = load(failing_view)
    extra = document["results"]["extra"]
    assert (extra["verdict"], extra["exit_code"], extra["seed"]) == ("NOT CONFORMANT", 1, 42)
    assert extra["verdict_summary"] == failing_view.verdict_summary
    assert document["results"]["tool"] == {"name": "payment-conformance", "version": "0.1.0"}
    assert document["timestamp"] == "2026-11-22T10:04:11Z"


def test_written_beside_junit_listed_in_the_manifest_and_free_of_secrets(
    failing_run: RunResult, report_dir: Path
) -> None:
    paths = write_reports(failing_run, report_dir, secrets=[API_SECRET])
    assert report_dir / ctrf.FILENAME in paths
    listed = json.loads((report_dir / manifest.FILENAME).read_text(encoding="utf-8"))["files"]
    assert ctrf.FILENAME in listed
    assert manifest.verify(report_dir) == []
    text = (report_dir / ctrf.FILENAME).read_text(encoding="utf-8")
    for secret in PLANTED_SECRETS:
        assert secret not in text
    assert [e.message for e in validator().iter_errors(json.loads(text))] == []


def test_server_text_is_html_escaped_for_ctrf_html_renderers() -> None:
    # CTRF's GitHub reporter puts message and trace into the HTML it renders
    markup = '<img src=x onerror=alert(1)> & "q"'
    run = make_run(
        [
            check("c1", FAILED, "IDEM-004", message=f"expected 409, got {markup}"),
            check("c2", SKIPPED, "OPS-001", reason=f"no answer: {markup}"),
        ]
    )
    tests = {t["extra"]["requirement_id"]: t for t in load(build_view(run))["results"]["tests"]}
    escaped = "&lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot;"
    assert tests["IDEM-004"]["message"] == f"expected 409, got {escaped}"
    assert f"expected 409, got {escaped}" in tests["IDEM-004"]["trace"]
    assert tests["OPS-001"]["message"] == f"no answer: {escaped}"
    assert "<img" not in json.dumps(tests)
