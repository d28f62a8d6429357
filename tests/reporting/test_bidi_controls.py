"""A server's bidirectional-text controls reach no report and no console line raw.

U+202E (right-to-left override) in a message makes a report line display its text reversed:
``got 500 ...`` can read as another status. The reports and the console show it as ``\\u202e``,
as they show the C0 and C1 controls, and results.json read back renders the same reports.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from conformance.engine.progress import render_summary
from conformance.reporting import ctrf, html, json_report, junit, summary, write_reports
from conformance.reporting.load import load_view
from tests.reporting.runs import FAILED, PASSED, check, evidence, make_run

OVERRIDE = "\u202e"
ISOLATE = "\u2067"
SHOWN = "\\u202e"


def bidi_run() -> object:
    answer = evidence(
        status=500,
        response_headers={"content-type": "application/json", "x-note": f"a{OVERRIDE}b"},
        response_body=f'{{"code":"internal","message":"{OVERRIDE}KO 102{ISOLATE}"}}',
    )
    return make_run(
        [
            check("schema/createPayment", PASSED, "OPS-001"),
            check(
                "schema/createPayment/server-error",
                FAILED,
                "OPS-002",
                message=f"expected 201, got 500 {OVERRIDE}KO 102",
                evidence_=answer,
            ),
        ]
    )


@pytest.mark.parametrize(
    "name", [html.FILENAME, json_report.FILENAME, junit.FILENAME, summary.FILENAME, ctrf.FILENAME]
)
def test_no_report_holds_a_bidi_control_raw(tmp_path: Path, name: str) -> None:
    write_reports(bidi_run(), tmp_path)  # type: ignore[arg-type]
    text = (tmp_path / name).read_text(encoding="utf-8")
    assert OVERRIDE not in text and ISOLATE not in text


def test_results_json_and_report_html_show_the_escape(tmp_path: Path) -> None:
    write_reports(bidi_run(), tmp_path)  # type: ignore[arg-type]
    document = json.loads((tmp_path / json_report.FILENAME).read_text(encoding="utf-8"))
    (failed,) = [c for c in document["checks"] if c["outcome"] == "failed"]
    assert failed["message"] == f"expected 201, got 500 {SHOWN}KO 102"
    assert failed["evidence"]["response_headers"]["x-note"] == f"a{SHOWN}b"
    page = (tmp_path / html.FILENAME).read_text(encoding="utf-8")
    assert f"expected 201, got 500 {SHOWN}KO 102" in page
    assert f"{SHOWN}KO 102\\u2067" in page  # in the response body too


def test_the_console_shows_a_bidi_control_escaped(tmp_path: Path) -> None:
    out = io.StringIO()
    render_summary(Console(file=out, width=200, color_system=None), bidi_run(), [tmp_path])  # type: ignore[arg-type]
    text = out.getvalue()
    assert OVERRIDE not in text
    assert f"got 500 {SHOWN}KO 102" in text


def test_results_json_with_escaped_controls_renders_the_same_reports(tmp_path: Path) -> None:
    write_reports(bidi_run(), tmp_path)  # type: ignore[arg-type]
    view = load_view(tmp_path / json_report.FILENAME)
    for name, render in ((html.FILENAME, html.render), (junit.FILENAME, junit.render)):
        assert render(view).encode() == (tmp_path / name).read_bytes(), name
    assert summary.render(view).encode() == (tmp_path / summary.FILENAME).read_bytes()
