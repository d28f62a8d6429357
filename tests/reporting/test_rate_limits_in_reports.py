"""The rate limits a run met, in every report: results.json, report.html, summary.md, junit.xml
and the console summary; zero when nothing was rate limited, and results.json files written
before the field existed still load."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from conformance.core.results import RateLimitCounts, RunResult
from conformance.engine.progress import render_summary
from conformance.reporting import html, json_report, junit, summary, write_reports
from conformance.reporting.load import load_view

COUNTS = RateLimitCounts(
    received_429=12, received_503=1, waited_s=13.25, limiter_waited_s=2.5, given_up=1
)
LINE = (
    "429s: 12, 503s with Retry-After: 1, waited 13.2 s, 2.5 s for --rate-limit; "
    "1 request(s) given up"
)
ZERO_LINE = "429s: 0, 503s with Retry-After: 0, waited 0.0 s"


def _junit_properties(report_dir: Path) -> dict[str, str]:
    root = ET.parse(report_dir / junit.FILENAME).getroot()
    return {p.get("name", ""): p.get("value", "") for p in root.iter("property")}


def test_every_report_says_how_the_rate_limits_touched_the_run(
    passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(replace(passing_run, rate_limits=COUNTS), report_dir)
    document = json.loads((report_dir / json_report.FILENAME).read_text(encoding="utf-8"))
    assert document["schema_version"] == "1.4"
    assert document["rate_limits"] == {
        "received_429": 12,
        "received_503": 1,
        "waited_s": 13.25,
        "limiter_waited_s": 2.5,
        "given_up": 1,
    }
    assert f"rate limits: {LINE}" in (report_dir / summary.FILENAME).read_text(encoding="utf-8")
    page = (report_dir / html.FILENAME).read_text(encoding="utf-8")
    assert f"<tr><th>Rate limits</th><td>{LINE}</td></tr>" in page
    properties = _junit_properties(report_dir)
    assert properties["rate_limits.received_429"] == "12"
    assert properties["rate_limits.waited_s"] == "13.25"
    assert properties["rate_limits.given_up"] == "1"
    assert load_view(report_dir / json_report.FILENAME).rate_limits == COUNTS


def test_a_run_that_met_no_rate_limit_shows_zeros_compactly(
    passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(passing_run, report_dir)
    assert f"rate limits: {ZERO_LINE}\n" in (report_dir / summary.FILENAME).read_text(
        encoding="utf-8"
    )
    assert _junit_properties(report_dir)["rate_limits.received_429"] == "0"


def test_a_results_json_of_schema_1_2_still_loads(passing_run: RunResult, report_dir: Path) -> None:
    write_reports(passing_run, report_dir)
    path = report_dir / json_report.FILENAME
    document = json.loads(path.read_text(encoding="utf-8"))
    del document["rate_limits"]
    document["schema_version"] = "1.2"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert load_view(path).rate_limits == RateLimitCounts()


def test_the_console_summary_shows_the_rate_limits(passing_run: RunResult) -> None:
    for counts, line in ((COUNTS, LINE), (RateLimitCounts(), ZERO_LINE)):
        out = io.StringIO()
        render_summary(Console(file=out, width=200), replace(passing_run, rate_limits=counts))
        assert f"rate limits: {line}" in out.getvalue()
