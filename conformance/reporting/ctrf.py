"""ctrf.json: the run in the Common Test Report Format (https://ctrf.io), for CI dashboards.

One test per requirement, as in junit.xml: ``name`` = "ID: text", ``suite`` = the section,
``status`` passed, failed or skipped (not exercised, with the reason as ``message``), and
``duration`` the sum of its checks' in milliseconds. A failed requirement's ``message`` is its
first failing check's message on one line and ``trace`` lists every failing check's message
with the replay command (the evidence is in results.json and report.html). What CTRF has no
field for (verdict, seed, target, contract and profile hashes) goes in ``extra``, the
format's extension point. ``message`` and ``trace`` quote the server and CTRF's GitHub
reporter puts them into HTML unescaped, so both are HTML-escaped here. The document is checked
against CTRF's published JSON Schema in the tests (tests/reporting/data/ctrf.schema.json).
"""

from __future__ import annotations

import html
import json
from datetime import datetime
from typing import Any

from conformance.core.results import Outcome
from conformance.reporting.view import RequirementView, RunView, SectionView

FILENAME = "ctrf.json"
# The version of the CTRF specification this document follows (its working draft, the
# version the schema of tests/reporting/data/ names).
SPEC_VERSION = "0.0.0"
TOOL = "payment-conformance"
MESSAGE_LIMIT = 500
MAX_TRACED = 20  # failing checks listed in a trace; results.json has all
# A waived requirement failed under a declared waiver: neither passed nor skipped (JUnit has no
# such status and reports it skipped; CTRF's "other" says it is neither).
STATUS = {
    Outcome.PASSED: "passed",
    Outcome.FAILED: "failed",
    Outcome.NOT_EXERCISED: "skipped",
    Outcome.WAIVED: "other",
}


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    line = line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 1] + "…"
    return html.escape(line)


def _milliseconds(seconds: float) -> int:
    return round(seconds * 1000)


def _start_ms(started_at: str) -> int:
    """results.json's ``started_at`` (ISO 8601, UTC, "Z") in milliseconds since the epoch."""
    return _milliseconds(datetime.fromisoformat(started_at.replace("Z", "+00:00")).timestamp())


def _trace(requirement: RequirementView, replay_note: str) -> str:
    failures = requirement.failures
    lines = [f"replay: {requirement.replay}", f"({replay_note})"]
    for number, check in enumerate(failures[:MAX_TRACED], start=1):
        where = f" on {check.operation_id}" if check.operation_id else ""
        lines += ["", f"--- failure {number}/{len(failures)}: {check.check_id}{where}"]
        lines.append(check.message or "(no message)")
    if len(failures) > MAX_TRACED:
        lines += ["", f"... and {len(failures) - MAX_TRACED} more: see results.json"]
    return html.escape("\n".join(lines))


def _waived(requirement: RequirementView, view: RunView) -> str:
    results = view.waivers.results if view.waivers is not None else ()
    reasons = [results[i].waiver.reason for i in requirement.waived_by if i < len(results)]
    return _one_line("waived: " + "; ".join(reasons or ["by a waiver"]))


def _test(requirement: RequirementView, section: SectionView, view: RunView) -> dict[str, Any]:
    replay_note = view.replay_note
    test: dict[str, Any] = {
        "name": f"{requirement.id}: {requirement.text}",
        "status": STATUS[requirement.outcome],
        "duration": _milliseconds(requirement.duration_s),
        "suite": [f"{section.key} {section.title}"],
        "tags": [requirement.badge, requirement.level],
        "extra": {"requirement_id": requirement.id, "layer": requirement.badge},
    }
    if requirement.outcome is Outcome.FAILED:
        failures = requirement.failures
        first = failures[0].message if failures and failures[0].message else "failed"
        test["message"] = _one_line(first)
        test["trace"] = _trace(requirement, replay_note)
    elif requirement.outcome is Outcome.NOT_EXERCISED:
        test["message"] = _one_line(requirement.reason_not_exercised or "not exercised")
    elif requirement.outcome is Outcome.WAIVED:
        test["message"] = _waived(requirement, view)
        test["trace"] = _trace(requirement, replay_note)
    return test


def document(view: RunView) -> dict[str, Any]:
    """ctrf.json as a Python object."""
    counts = view.counts
    start = _start_ms(view.started_at)
    return {
        "reportFormat": "CTRF",
        "specVersion": SPEC_VERSION,
        "timestamp": view.started_at,
        "generatedBy": f"{TOOL} {view.suite_version}",
        "results": {
            "tool": {"name": TOOL, "version": view.suite_version},
            "summary": {
                "tests": counts.total,
                "passed": counts.passed,
                "failed": counts.failed,
                "skipped": counts.not_exercised,
                "pending": 0,
                "other": counts.waived,
                "suites": len(view.sections),
                "start": start,
                "stop": start + _milliseconds(view.duration_s),
                "duration": _milliseconds(view.duration_s),
            },
            "tests": [
                _test(requirement, section, view)
                for section in view.sections
                for requirement in section.requirements
            ],
            "extra": {
                "verdict": view.verdict,
                "verdict_summary": view.verdict_summary,
                "exit_code": view.exit_code,
                "target": view.target,
                "seed": None if view.validation else view.seed,
                "profile": view.profile_name,
                "profile_sha256": view.profile_sha256,
                "contract_sha256": view.contract_sha256,
                "rerun": view.rerun,
                "warnings": list(view.warnings),
            },
        },
    }


def render(view: RunView) -> str:
    return json.dumps(document(view), indent=2, ensure_ascii=False) + "\n"
