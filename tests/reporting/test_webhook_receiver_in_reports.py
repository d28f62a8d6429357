"""What the webhook receiver dropped over its bounds, in every report: results.json,
report.html, summary.md and the console summary; results.json files written before the field
existed still load."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import jsonschema
from rich.console import Console

from conformance.core.receiver_counts import PathDrops, ReceiverCounts
from conformance.core.results import RunResult
from conformance.engine.progress import render_summary
from conformance.reporting import html, json_report, summary, write_reports
from conformance.reporting.load import load_view

FLOODED = ReceiverCounts(
    kept=25,
    kept_bytes=400 * 1024,
    drops=(
        PathDrops("/run/ok/we_ok", deliveries=300, bytes=300 * 1024 * 1024, refused=2),
        PathDrops("/elsewhere", deliveries=5, bytes=5 * 1024),
    ),
)
LINE = (
    "webhook receiver: kept 25 requests (400.0 KiB); dropped 305 over its bounds (300.0 MiB; "
    "the checks judge what was kept): /run/ok/we_ok 300 (300.0 MiB, 2 refused with 413), "
    "/elsewhere 5 (5.0 KiB)"
)


def test_every_report_says_what_the_receiver_dropped(
    passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(replace(passing_run, webhook_receiver=FLOODED), report_dir)
    document = json.loads((report_dir / json_report.FILENAME).read_text(encoding="utf-8"))
    jsonschema.validate(document, json_report.schema())
    assert document["webhook_receiver"] == {
        "kept": 25,
        "kept_bytes": 409600,
        "dropped": 305,
        "dropped_bytes": 314577920,
        "refused": 2,
        "drops": [
            {"path": "/run/ok/we_ok", "deliveries": 300, "bytes": 314572800, "refused": 2},
            {"path": "/elsewhere", "deliveries": 5, "bytes": 5120, "refused": 0},
        ],
    }
    markdown = (report_dir / summary.FILENAME).read_text(encoding="utf-8")
    assert f"{summary.escape(LINE)}\n" in markdown  # Markdown-escaped
    page = (report_dir / html.FILENAME).read_text(encoding="utf-8")
    assert f"<tr><th>Webhook receiver</th><td>{LINE}</td></tr>" in page
    assert load_view(report_dir / json_report.FILENAME).webhook_receiver == FLOODED


def test_a_receiver_that_dropped_nothing_is_a_field_not_a_line(
    passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(replace(passing_run, webhook_receiver=ReceiverCounts(3, 2048)), report_dir)
    document = json.loads((report_dir / json_report.FILENAME).read_text(encoding="utf-8"))
    assert document["webhook_receiver"]["dropped"] == 0
    assert "webhook receiver" not in (report_dir / summary.FILENAME).read_text(encoding="utf-8")
    write_reports(passing_run, report_dir)  # no receiver ran
    document = json.loads((report_dir / json_report.FILENAME).read_text(encoding="utf-8"))
    jsonschema.validate(document, json_report.schema())
    assert document["webhook_receiver"] is None


def test_a_results_json_without_the_field_still_loads(
    passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(passing_run, report_dir)
    path = report_dir / json_report.FILENAME
    document = json.loads(path.read_text(encoding="utf-8"))
    del document["webhook_receiver"]
    document["schema_version"] = "1.3"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert load_view(path).webhook_receiver is None


def test_the_console_says_what_the_receiver_dropped(passing_run: RunResult) -> None:
    out = io.StringIO()
    render_summary(Console(file=out, width=400), replace(passing_run, webhook_receiver=FLOODED))
    assert LINE in out.getvalue()
    quiet = io.StringIO()
    render_summary(Console(file=quiet, width=400), replace(passing_run, webhook_receiver=None))
    assert "webhook receiver" not in quiet.getvalue()


def test_a_path_the_server_chose_is_scrubbed_and_escaped(passing_run: RunResult) -> None:
    hostile = ReceiverCounts(0, 0, (PathDrops("/\x1b[2Jwhsec_c2VjcmV0", 1, 10),))
    out = io.StringIO()
    render_summary(Console(file=out, width=400), replace(passing_run, webhook_receiver=hostile))
    assert "\x1b" not in out.getvalue() and "whsec_c2VjcmV0" not in out.getvalue()
