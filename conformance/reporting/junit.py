"""junit.xml: one <testsuite> per section, one <testcase> per requirement.

The layout common JUnit consumers (Jenkins, GitLab, GitHub actions) read: a <testcase> has
``classname`` = the section key ("spec 5") and ``name`` = "ID: text"; a failed requirement has
one <failure> holding every failing check's message and evidence; a requirement no check
exercised has a <skipped> with the reason, and so has a waived one (``run --waivers``): the
waivers and what they covered as its message, its failures as the text. Run metadata goes in
each suite's <properties>.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conformance.core.results import Outcome
from conformance.reporting import waivers
from conformance.reporting.view import (
    Body,
    CheckView,
    EvidenceView,
    RequirementView,
    RunView,
    SectionView,
    clip_body,
)
from conformance.reporting.waivers import waived_message

FILENAME = "junit.xml"
BODY_LIMIT = 4_096
MESSAGE_LIMIT = 500
MAX_EVIDENCE = 5  # failing checks shown with their evidence per requirement; the rest by message


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _body_lines(label: str, body: Body | None) -> list[str]:
    if body is None:
        return [f"{label}: (none)"]
    clipped = clip_body(body, BODY_LIMIT)
    note = f" [{clipped.note}]" if clipped.note else ""
    return [f"{label}:{note}", clipped.text]


def _evidence_lines(evidence: EvidenceView) -> list[str]:
    lines = [f"request: {evidence.method} {evidence.url}"]
    lines += [f"  {k}: {v}" for k, v in evidence.request_headers]
    lines += _body_lines("request body", evidence.request_body)
    status = "no response" if evidence.status is None else str(evidence.status)
    lines.append(f"response: {status}")
    lines += [f"  {k}: {v}" for k, v in evidence.response_headers]
    lines += _body_lines("response body", evidence.response_body)
    lines += ["reproduce with curl (signature headers are redacted: sign afresh):", evidence.curl]
    return lines


def _failure_text(
    requirement: RequirementView, failures: tuple[CheckView, ...], replay_note: str
) -> str:
    lines = [
        f"{requirement.id} [{requirement.badge} {requirement.level}] {requirement.text}",
        f"layer: {requirement.badge}: {requirement.advice}",
        f"replay: {requirement.replay}",
        f"({replay_note})",
    ]
    for number, check in enumerate(failures, start=1):
        where = f" on {check.operation_id}" if check.operation_id else ""
        lines += ["", f"--- failure {number}/{len(failures)}: {check.check_id}{where}"]
        lines.append(check.message or "(no message)")
        if check.evidence is not None and number <= MAX_EVIDENCE:
            lines += _evidence_lines(check.evidence)
        elif check.evidence is not None:
            lines.append("(evidence in results.json and report.html)")
    return "\n".join(lines)


def _testcase(parent: ET.Element, requirement: RequirementView, view: RunView) -> None:
    replay_note = view.replay_note
    case = ET.SubElement(
        parent,
        "testcase",
        {
            "classname": requirement.section.key,
            "name": f"{requirement.id}: {requirement.text}",
            "time": _seconds(requirement.duration_s),
        },
    )
    if requirement.outcome is Outcome.FAILED:
        failures = requirement.failures
        first = failures[0].message if failures and failures[0].message else "failed"
        failure = ET.SubElement(
            case,
            "failure",
            {"message": _one_line(first), "type": f"{requirement.badge} requirement"},
        )
        failure.text = _failure_text(requirement, failures, replay_note)
    elif requirement.outcome is Outcome.WAIVED and view.waivers is not None:
        # skipped, not failed: CI reads the run as the verdict does; the failures stay visible
        skipped = ET.SubElement(
            case, "skipped", {"message": _one_line(waived_message(requirement, view.waivers))}
        )
        skipped.text = _failure_text(requirement, requirement.failures, replay_note)
    elif requirement.outcome is Outcome.NOT_EXERCISED:
        ET.SubElement(
            case, "skipped", {"message": _one_line(requirement.reason_not_exercised or "")}
        )


def _properties(parent: ET.Element, view: RunView) -> None:
    properties = ET.SubElement(parent, "properties")
    values = [
        ("suite_version", view.suite_version),
        ("contract_sha256", view.contract_sha256),
        ("profile", view.profile_name),
        ("profile_sha256", view.profile_sha256),
        *([] if view.seed_text is None else [("seed", view.seed_text)]),
        ("target", view.target),
        ("requests_sent", str(view.requests_sent)),
        ("verdict", view.verdict),
        *([("incomplete_reason", view.incomplete_reason)] if view.incomplete_reason else []),
        *[("warning", warning) for warning in view.warnings],
        ("verdict_summary", view.verdict_summary),
        ("requirements_exercised", str(view.exercised)),
        ("requirements_selected", str(view.counts.total)),
        ("check_results_recorded", str(view.check_counts.total)),
        ("results_outside_selection", str(view.outside_selection)),
        ("rerun", view.rerun),
    ]
    values += waivers.properties(view.waivers) if view.waivers is not None else []
    values += [(f"option.{k}", v) for k, v in view.options]
    values += [(f"rate_limits.{k}", f"{v:g}") for k, v in view.rate_limits.as_dict().items()]
    for name, value in values:
        ET.SubElement(properties, "property", {"name": name, "value": value})


def _counts(element: ET.Element, tests: int, failures: int, skipped: int, time: float) -> None:
    element.set("tests", str(tests))
    element.set("failures", str(failures))
    element.set("errors", "0")
    element.set("skipped", str(skipped))
    element.set("time", _seconds(time))


def _testsuite(parent: ET.Element, view: RunView, section: SectionView, number: int) -> None:
    suite = ET.SubElement(
        parent, "testsuite", {"name": f"{section.key} {section.title}", "id": str(number)}
    )
    counts = section.counts
    time = sum(r.duration_s for r in section.requirements)
    _counts(suite, counts.total, counts.failed, counts.not_exercised + counts.waived, time)
    suite.set("timestamp", view.started_at)
    _properties(suite, view)
    for requirement in section.requirements:
        _testcase(suite, requirement, view)


def render(view: RunView) -> str:
    name = f"payment-conformance {view.suite_version}: {view.verdict_summary}"
    root = ET.Element("testsuites", {"name": name})
    counts = view.counts
    skipped = counts.not_exercised + counts.waived
    _counts(root, counts.total, counts.failed, skipped, view.duration_s)
    root.set("timestamp", view.started_at)
    for number, section in enumerate(view.sections):
        _testsuite(root, view, section, number)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"
