"""One vocabulary everywhere: the verdict with how much was exercised, and what a replay does.

"checks" used to mean three things (pytest tests on the console, recorded check results in the
reports, and "checks run" counting results that exercised nothing). Now the verdict always
comes with "N of M requirements exercised", the console counts *tests*, the reports count
*check results recorded*, and every format says the same thing about the replay commands.
"""

from __future__ import annotations

import html as html_lib
import io
import json
import re
import xml.etree.ElementTree as ET

from rich.console import Console

from conformance.core.results import REPLAY_NOTE, RunResult
from conformance.engine.progress import render_summary
from conformance.reporting import html, json_report, junit, summary
from conformance.reporting.view import RunView, build_view

HEADLINE = "NOT CONFORMANT, 6 of 7 requirements exercised"  # failing_run: 3 + 3 of 7
RESULTS = "8 check results recorded"
RERUN = "payment-conformance run --seed 42 --quick"


def page_text(page: str) -> str:
    return " ".join(html_lib.unescape(re.sub(r"<[^>]*>", " ", page)).split())


def console_text(run: RunResult) -> str:
    out = io.StringIO()
    render_summary(Console(file=out, width=400, color_system=None), run)
    return " ".join(out.getvalue().split())


def test_the_run_knows_its_headline(failing_run: RunResult, passing_run: RunResult) -> None:
    assert failing_run.verdict_summary == HEADLINE
    assert passing_run.verdict_summary == "CONFORMANT, 6 of 7 requirements exercised"


def test_every_format_puts_the_exercised_count_next_to_the_verdict(
    failing_run: RunResult, failing_view: RunView
) -> None:
    page = html.render(failing_view)
    verdict_box = re.search(r'<div class="verdict[^"]*">(.*?)</div>', page, re.S)
    assert verdict_box is not None
    assert re.sub(r"<[^>]*>", "", verdict_box.group(1)).strip() == HEADLINE
    assert summary.render(failing_view).splitlines()[0].endswith(HEADLINE)
    document = json.loads(json_report.render(failing_view))
    assert document["verdict_summary"] == HEADLINE
    assert document["requirements_exercised"] == 6
    root = ET.fromstring(junit.render(failing_view))
    assert HEADLINE in root.attrib["name"]
    for suite in root.findall("testsuite"):
        props = {p.attrib["name"]: p.attrib["value"] for p in suite.iter("property")}
        assert props["verdict"] == "NOT CONFORMANT"
        assert props["verdict_summary"] == HEADLINE
    assert f"verdict: {HEADLINE}" in console_text(failing_run)


def test_the_count_of_checks_is_named_the_same_in_the_console_and_the_reports(
    failing_run: RunResult, failing_view: RunView
) -> None:
    texts = {
        "console": console_text(failing_run),
        "html": page_text(html.render(failing_view)),
        "summary": summary.render(failing_view),
    }
    for name, text in texts.items():
        assert RESULTS in text, name
        assert not re.search(r"\bchecks run\b|\(\d[\d,]* checks\b", text, re.I), name
    assert "Check results recorded 8: 3 passed, 4 failed, 1 not exercised" in texts["html"]


def test_every_format_says_what_a_replay_does_and_how_to_repeat_the_run(
    failing_run: RunResult, failing_view: RunView
) -> None:
    assert failing_run.rerun_command() == RERUN
    texts = {
        "console": console_text(failing_run),
        "html": page_text(html.render(failing_view)),
        "summary": " ".join(summary.render(failing_view).split()),
        "junit": " ".join(junit.render(failing_view).split()),
    }
    for name, text in texts.items():
        assert REPLAY_NOTE in text, name
        assert RERUN in text, name
        assert (
            "the examples, coverage and fuzzing cases and the stateful phase's call "
            "sequences are the same" in text
        ), name
    assert "Replay only this requirement" not in texts["html"]
    document = json.loads(json_report.render(failing_view))
    assert document["rerun"] == RERUN
    assert document["replay_note"] == REPLAY_NOTE


def test_the_rerun_command_repeats_every_option_that_shapes_the_cases() -> None:
    from tests.reporting.runs import PASSED, check, make_run

    run = make_run(
        [check("c", PASSED, "OPS-001")],
        options={
            "profile": "strict.yaml",
            "quick": "false",
            "workers": "2",
            "only": "spec 4,AUTH",
            "skip": "AUTH-002",
            "max_examples": "7",
            "webhook_url": "http://10.0.0.5:8099/hooks",
            "webhook_bind": "0.0.0.0:8099",
            "max_duration_s": "600",
        },
    )
    assert run.rerun_command() == (
        "payment-conformance run --profile strict.yaml --only 'spec 4' --only AUTH "
        "--skip AUTH-002 --seed 42 --workers 2 --max-duration 600 --max-examples 7 "
        "--webhook-url http://10.0.0.5:8099/hooks --webhook-bind 0.0.0.0:8099"
    )
    # a replay keeps what shapes the generated cases and reaching the server
    assert run.replay_command("OPS-001") == (
        "payment-conformance run --profile strict.yaml --only OPS-001 --seed 42 "
        "--max-examples 7 --webhook-url http://10.0.0.5:8099/hooks --webhook-bind 0.0.0.0:8099"
    )


def test_a_reports_rerun_command_hides_a_url_password() -> None:
    from conformance.core.results import Target
    from tests.reporting.runs import PASSED, check, make_run

    run = make_run(
        [check("c", PASSED, "OPS-001")],
        target=Target("https://user:hunter2pass@sandbox.example.test", embedded=False),
    )
    view = build_view(run, reports_dir="out")
    assert "hunter2pass" not in view.rerun
    assert "sandbox.example.test" in view.rerun
