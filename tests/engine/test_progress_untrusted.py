"""The console shows server text as text: escape sequences escaped, URL passwords masked.

A failure message quotes the server (its body, its headers); a terminal would obey the escape
sequences in it (rename the window, clear the screen, overprint the verdict).
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from conformance.core.catalogue import Layer, Requirement, Section
from conformance.core.results import (
    STEPS_HEADING,
    CheckResult,
    Outcome,
    RequirementResult,
    RunResult,
    Target,
)
from conformance.engine.preflight import PreflightReport, PreflightStep
from conformance.engine.progress import ConsoleDisplay, describe_target, render_summary
from conformance.engine.selftest import Row, RunOutcome, RunSpec, Status
from conformance.engine.selftest_display import row_detail

HOSTILE = "\x1b]0;pwned\x07\x1b[2J"
SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J"
PASSWORD = "s3cr3tpass"
URL = f"http://user:{PASSWORD}@127.0.0.1:8000"


def hostile_run(base_url: str = "https://sandbox.example.test") -> RunResult:
    message = "\n".join(
        [
            f"expected 422, got 200 {HOSTILE}",
            STEPS_HEADING,
            f"  1. POST /v1/payments -> 200 {HOSTILE}",
        ]
    )
    failed = CheckResult("t", "idempotency", ("IDEM-004",), Outcome.FAILED, message)
    requirement = Requirement(
        "IDEM-004", Section("profile", "2", "Idempotency"), Layer.PROFILE, "MUST", "x"
    )
    return RunResult(
        suite_version="0.1.0",
        contract_sha256="ab" * 32,
        profile_name="default",
        profile_sha256="cd" * 32,
        seed=42,
        target=Target(base_url, embedded=False),
        started_at="2026-11-22T04:00:00Z",
        duration_s=1.0,
        requests_sent=1,
        requirements=(RequirementResult(requirement, Outcome.FAILED, (failed,)),),
        checks=(failed,),
        options={"profile": "default", "quick": "true", "base_url": base_url},
    )


def console(terminal: bool = False) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200, color_system=None, force_terminal=terminal), out


def test_a_failure_message_cannot_drive_the_terminal(tmp_path: Path) -> None:
    shown, out = console()
    render_summary(shown, hostile_run(), [tmp_path / "report.html"])
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert f"expected 422, got 200 {SHOWN}" in text
    assert f"1. POST /v1/payments -> 200 {SHOWN}" in text


def test_the_phase_lines_escape_what_they_show() -> None:
    for terminal in (False, True):
        shown, out = console(terminal)
        display = ConsoleDisplay(shown, live=True)
        display.collected({"auth": 1})
        display.test_done("auth", f"auth{HOSTILE}", True, 1)
        display.close()
        assert "\x07" not in out.getvalue() and "]0;pwned" not in out.getvalue().replace(SHOWN, "")
        assert f"auth{SHOWN}" in out.getvalue()


def test_a_preflight_step_name_is_escaped() -> None:
    shown, out = console()
    ConsoleDisplay(shown).preflight(PreflightReport((PreflightStep(f"x{HOSTILE}", False),), 1))
    assert out.getvalue() == f"preflight ✗ x{SHOWN}\n"


def test_a_password_in_the_base_url_is_never_shown(tmp_path: Path) -> None:
    assert describe_target(Target(URL, embedded=False)) == (
        "target: http://user:[redacted]@127.0.0.1:8000"
    )
    shown, out = console()
    display = ConsoleDisplay(shown)
    display.target(Target(URL, embedded=False))
    run = hostile_run(URL)
    run = replace(
        run, checks=(replace(run.checks[0], message=f"GET {URL}/v1/payments: timed out"),)
    )
    run = replace(run, requirements=(replace(run.requirements[0], checks=run.checks),))
    render_summary(shown, run, [tmp_path / "report.html"])
    text = out.getvalue()
    assert PASSWORD not in text
    assert (
        "replay: payment-conformance run --base-url 'http://user:[redacted]@127.0.0.1:8000'" in text
    )
    assert "GET http://user:[redacted]@127.0.0.1:8000/v1/payments: timed out" in text


def test_a_selftest_row_shows_the_reason_a_run_stopped_escaped() -> None:
    outcome = RunOutcome(2, 1.0, message=f"could not run: error: {HOSTILE} at {URL}")
    row = Row(RunSpec(None, True, 1), Status.ERROR, outcome)
    shown = row_detail(row).plain
    assert shown == f"could not run: error: {SHOWN} at http://user:[redacted]@127.0.0.1:8000"


def test_a_failure_message_cannot_drive_a_ci_runner(tmp_path: Path) -> None:
    shown, out = console()
    message = "expected 422 ##[add-mask]x\n" + STEPS_HEADING + "\n::error::forged ##[error]y"
    failed = hostile_run()
    check = replace(failed.checks[0], message=message)
    requirement = replace(failed.requirements[0], checks=(check,))
    render_summary(
        shown, replace(failed, checks=(check,), requirements=(requirement,)), [tmp_path / "r"]
    )
    lines = out.getvalue().splitlines()
    assert not [line for line in lines if "##[" in line or line.lstrip().startswith("::")]
    assert any("#\\x23[add-mask]x" in line for line in lines)
