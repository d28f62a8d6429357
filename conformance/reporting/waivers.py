"""The waivers of a run (``run --waivers``) in the reports: made printable, as results.json and
manifest.json hold them, read back by ``report``, and as summary.md and junit.xml list them.

Each report lists every waiver with its reason, its expiry, its state (applied, expired, stale)
and the failing checks it covered (or, expired, would have covered).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any

from conformance.core.waivers import Covered, Waiver, WaiverReport, WaiverResult, WaiverState
from conformance.reporting.scrub import Scrubber

if TYPE_CHECKING:
    from conformance.reporting.view import RequirementView


def scrubbed(report: WaiverReport | None, scrubber: Scrubber) -> WaiverReport | None:
    """``report`` with its free texts (path, reasons) made safe to show."""
    if report is None:
        return None
    results = tuple(
        replace(r, waiver=replace(r.waiver, reason=scrubber.text(r.waiver.reason)))
        for r in report.results
    )
    return replace(report, file=scrubber.text(report.file), results=results)


def as_dict(report: WaiverReport) -> dict[str, Any]:
    """The ``waivers`` object of results.json (and of manifest.json)."""
    return {
        "file": report.file,
        "sha256": report.sha256,
        "strict": report.strict,
        "used": report.used,
        "strict_failure": report.strict_failure,
        "entries": [_entry(r) for r in report.results],
    }


def _entry(result: WaiverResult) -> dict[str, Any]:
    waiver = result.waiver
    return {
        "requirement": waiver.requirement_id,
        "operation": waiver.operation_id,
        "check": waiver.check_id,
        "reason": waiver.reason,
        "expires": waiver.expires.isoformat(),
        "state": result.state.value,
        "note": result.note,
        "waived": list(result.waived),
        "covered": [
            {"requirement": c.requirement_id, "check": c.check_id, "operation": c.operation_id}
            for c in result.covered
        ],
    }


def from_dict(data: dict[str, Any]) -> WaiverReport:
    """The report ``as_dict`` wrote (a document already valid under results.schema.json)."""
    results = tuple(
        WaiverResult(
            waiver=Waiver(
                requirement_id=e["requirement"],
                reason=e["reason"],
                expires=date.fromisoformat(e["expires"]),
                operation_id=e["operation"],
                check_id=e["check"],
            ),
            state=WaiverState(e["state"]),
            covered=tuple(
                Covered(c["requirement"], c["check"], c["operation"]) for c in e["covered"]
            ),
            waived=tuple(e["waived"]),
            note=e["note"],
        )
        for e in data["entries"]
    )
    return WaiverReport(data["file"], data["sha256"], data["strict"], results)


def markdown(report: WaiverReport, escape: Any, code: Any) -> list[str]:
    """summary.md's "Waivers" section; ``escape`` and ``code`` are summary.md's own."""
    lines = [
        "",
        f"### Waivers ({len(report.results)}: {report.used} used, {len(report.expired)} "
        f"expired, {len(report.stale)} stale)",
        "",
        f"file {code(report.file)} · sha256 {code(report.sha256)}",
        "",
    ]
    if report.strict_failure is not None:
        lines += [f"**The run fails**: {escape(report.strict_failure)}.", ""]
    for result in report.results:
        lines.append(
            f"- **{escape(result.waiver.label)}** {result.state.value}, expires "
            f"{result.waiver.expires.isoformat()}: {escape(result.waiver.reason)}"
            + (f"  \n  {escape(result.note)}" if result.note else "")
            + "".join(
                f"  \n  {result.covered_label}: {escape(c.describe())}" for c in result.covered
            )
        )
    return lines


def waived_message(requirement: RequirementView, report: WaiverReport) -> str:
    """Why a waived requirement did not fail: "waived by AUTH-003 (expires ...): reason"."""
    named = [report.results[i] for i in requirement.waived_by if i < len(report.results)]
    return "waived by " + "; ".join(
        f"{r.waiver.label} (expires {r.waiver.expires.isoformat()}): {r.waiver.reason}"
        for r in named
    )


def properties(report: WaiverReport) -> list[tuple[str, str]]:
    """junit.xml's <property> pairs: the file, its hash, and one line per waiver."""
    values = [("waivers.file", report.file), ("waivers.sha256", report.sha256)]
    if report.strict_failure is not None:
        values.append(("waivers.strict_failure", report.strict_failure))
    for result in report.results:
        covered = "; ".join(c.describe() for c in result.covered) or "nothing"
        values.append(
            (
                "waiver",
                f"{result.describe()}; reason: {result.waiver.reason}; "
                f"{result.covered_label}: {covered}",
            )
        )
    return values
