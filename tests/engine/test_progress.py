"""What a run prints: header, preflight, phases (live or plain), section table, verdict."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from conformance.core.catalogue import Layer, Requirement, Section
from conformance.core.results import (
    REPLAY_NOTE,
    STEPS_HEADING,
    CheckResult,
    Outcome,
    RequirementResult,
    RunResult,
    Target,
)
from conformance.engine.preflight import PreflightReport, PreflightStep
from conformance.engine.progress import (
    ConsoleDisplay,
    RunHeader,
    render_summary,
    reports_line,
    section_rows,
    verdict_line,
)

SPEC5 = Section("spec", "5", "Authentication")
PROFILE2 = Section("profile", "2", "Idempotency")


def requirement(rid: str, section: Section, layer: Layer) -> Requirement:
    return Requirement(rid, section, layer, "MUST", f"{rid} MUST hold.")


def make_run(target: Target, options: dict[str, str] | None = None) -> RunResult:
    failed = CheckResult("t", "idempotency", ("IDEM-004",), Outcome.FAILED, "expected 422")
    results = (
        RequirementResult(requirement("AUTH-001", SPEC5, Layer.CONTRACT), Outcome.PASSED),
        RequirementResult(requirement("AUTH-002", SPEC5, Layer.CONTRACT), Outcome.NOT_EXERCISED),
        RequirementResult(
            requirement("IDEM-004", PROFILE2, Layer.PROFILE), Outcome.FAILED, (failed,)
        ),
    )
    return RunResult(
        suite_version="0.1.0",
        contract_sha256="ab" * 32,
        profile_name="default",
        profile_sha256="cd" * 32,
        seed=42,
        target=target,
        started_at="2026-11-22T04:00:00Z",
        duration_s=12.4,
        requests_sent=10,
        requirements=results,
        checks=(failed,),
        options=options or {"profile": "default", "quick": "false", "workers": "1"},
    )


def plain_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200, color_system=None), out


def test_the_header_names_version_contract_profile_and_seed() -> None:
    console, out = plain_console()
    display = ConsoleDisplay(console)
    display.header(RunHeader("0.1.0", "3f2a" + "0" * 60, "default", 42))
    display.target(Target("http://127.0.0.1:5000", embedded=True))
    display.preflight(
        PreflightReport((PreflightStep("reachable", True), PreflightStep("signed", False, "x")), 2)
    )
    assert out.getvalue().splitlines() == [
        "payment-conformance 0.1.0 · contract sha256 3f2a00000000 · profile default · seed 42",
        "target: embedded reference server at http://127.0.0.1:5000",
        "preflight ✓ reachable ✗ signed",
    ]


def test_without_a_terminal_each_phase_is_one_line_when_done() -> None:
    console, out = plain_console()
    display = ConsoleDisplay(console, live=True)  # not a terminal: plain lines anyway
    display.collected({"auth": 2, "schema": 1})
    display.test_done("auth", "auth", False, 5)
    assert "auth " not in out.getvalue()
    display.test_done("auth", "auth", True, 3)
    display.test_done("schema", "schema", False, 40)
    display.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "running 3 tests in 2 phases"
    assert lines[1].split() == ["auth", "2/2", "tests,", "8", "requests,", "1", "failed"]
    assert lines[2].split() == ["schema", "1/1", "tests,", "40", "requests"]


def test_on_a_terminal_the_phases_are_drawn_live() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system=None)
    display = ConsoleDisplay(console, live=True)
    display.collected({"auth": 2})
    display.test_done("auth", "auth headers", False, 7)
    display.test_done("auth", "auth headers", False, 1)
    display.close()
    text = out.getvalue()
    assert "auth headers" in text
    assert "2/2 tests" in text and "8 requests" in text


def test_sections_verdict_and_failures_in_the_summary(tmp_path: Path) -> None:
    run = make_run(Target("https://sandbox.example.test", embedded=False))
    assert section_rows(run) == [
        ("spec 5 Authentication", 1, 0, 1),
        ("profile 2 Idempotency", 0, 1, 0),
    ]
    assert verdict_line(run) == (
        "verdict: NOT CONFORMANT, 2 of 3 requirements exercised "
        "(1 passed, 1 failed, 1 not exercised; 1 check result recorded) in 12 s"
    )
    console, out = plain_console()
    paths = [tmp_path / "report.html", tmp_path / "junit.xml", tmp_path / "manifest.json"]
    render_summary(console, run, paths)
    text = out.getvalue()
    assert "✗ IDEM-004 [your profile: fix the server or the profile] expected 422" in text
    assert (
        "replay: payment-conformance run --base-url https://sandbox.example.test "
        "--only IDEM-004 --seed 42"
    ) in text
    assert REPLAY_NOTE in text
    assert (
        "repeat the whole run: payment-conformance run --base-url https://sandbox.example.test "
        "--seed 42 --workers 1"
    ) in text
    assert f"reports: {tmp_path}/ (report.html, junit.xml, manifest.json)" in text


def test_the_reports_line_names_every_file_written_manifest_and_signature_too(
    tmp_path: Path,
) -> None:
    names = ["report.html", "junit.xml", "results.json", "summary.md", "manifest.json"]
    paths = [tmp_path / name for name in [*names, "manifest.sig"]]
    assert reports_line(paths) == f"reports: {tmp_path}/ ({', '.join(names)}, manifest.sig)"


def test_a_failure_of_a_call_sequence_prints_its_numbered_steps(tmp_path: Path) -> None:
    steps = "\n".join(
        [
            "expected 409 invalid_state, got 200",
            STEPS_HEADING,
            "  1. create a payment",
            "     POST /v1/payments -> 201 {...}",
            "  2. cancel it twice",
            "     POST /v1/payments/p1/cancel -> 200 {...}",
        ]
    )
    failed = CheckResult("t", "payments", ("IDEM-004",), Outcome.FAILED, steps)
    run = make_run(Target("https://sandbox.example.test", embedded=False))
    run = replace(
        run,
        requirements=tuple(
            replace(r, checks=(failed,)) if r.outcome is Outcome.FAILED else r
            for r in run.requirements
        ),
    )
    console, out = plain_console()
    render_summary(console, run, [tmp_path / "report.html"])
    lines = out.getvalue().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("✗ IDEM-004"))
    assert lines[first].endswith("expected 409 invalid_state, got 200")
    assert [line.strip() for line in lines[first + 1 : first + 6]] == [
        STEPS_HEADING,
        "1. create a payment",
        "POST /v1/payments -> 201 {...}",
        "2. cancel it twice",
        "POST /v1/payments/p1/cancel -> 200 {...}",
    ]
    assert lines[first + 6].strip().startswith("replay: ")
