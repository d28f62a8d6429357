"""Diffs of two runs as reports hold them (the comparison itself: ``core.diff``; reading a
run's outcomes: ``outcomes``).

- ``as_dict`` / ``from_dict``: the ``baseline`` section of results.json (``run --baseline``);
- ``markdown``: the comparison for a pull-request comment and for summary.md.
"""

from __future__ import annotations

from typing import Any

from conformance.core.diff import (
    CATEGORIES,
    Change,
    Diff,
    RunOutcomes,
    category_title,
    entry_note,
)
from conformance.core.results import Outcome
from conformance.reporting.summary import code, escape

MAX_LISTED = 50  # requirements listed per category in Markdown (the rest: "... and N more")
GATE_MARK = {0: "✅", 1: "❌"}
# The outcome each list holds now (unchanged failures and newly failed: failed).
_NOW = {
    "newly_failed": Outcome.FAILED,
    "newly_passed": Outcome.PASSED,
    "newly_not_exercised": Outcome.NOT_EXERCISED,
    "unchanged_failures": Outcome.FAILED,
}


def as_dict(diff: Diff) -> dict[str, Any]:
    """The ``baseline`` section of results.json."""
    return {
        "source": diff.baseline,
        "started_at": diff.baseline_started_at,
        "verdict": diff.baseline_verdict,
        "gate": diff.gate,
        "warnings": list(diff.warnings),
        **{
            name: [
                {"id": c.id, "was": None if c.was is None else c.was.value}
                for c in getattr(diff, name)
            ]
            for name in CATEGORIES
        },
    }


def from_dict(data: dict[str, Any]) -> Diff:
    """The ``Diff`` of a ``baseline`` section already validated against the schema;
    ``ValueError`` when its gate does not match its lists."""

    def changes(name: str) -> tuple[Change, ...]:
        return tuple(
            Change(c["id"], None if c["was"] is None else Outcome(c["was"]), _NOW[name])
            for c in data[name]
        )

    diff = Diff(
        baseline=data["source"],
        baseline_started_at=data["started_at"],
        baseline_verdict=data["verdict"],
        newly_failed=changes("newly_failed"),
        newly_passed=changes("newly_passed"),
        newly_not_exercised=changes("newly_not_exercised"),
        unchanged_failures=changes("unchanged_failures"),
        warnings=tuple(data["warnings"]),
    )
    if diff.gate != data["gate"]:
        raise ValueError(f"baseline gate {data['gate']!r} does not match its lists ({diff.gate!r})")
    return diff


def _note(category: str, change: Change) -> str:
    note = entry_note(category, change)
    return f" {escape(note)}" if note else ""


def markdown(
    diff: Diff, heading: str = "### Against the baseline:", now: RunOutcomes | None = None
) -> list[str]:
    """The comparison as Markdown lines: ``heading`` with the gate, the baseline (and ``now``,
    the later run, when it is not the report's own), each warning and each non-empty list (at
    most ``MAX_LISTED`` requirements each). Every text from the files is escaped."""
    counts = ", ".join(f"{len(getattr(diff, name))} {category_title(name)}" for name in CATEGORIES)
    lines = [
        f"{heading} {GATE_MARK[diff.exit_code]} {escape(diff.gate)}",
        "",
        f"baseline: {code(diff.baseline)} ({escape(diff.baseline_verdict)}, started "
        f"{escape(diff.baseline_started_at)})",
        "",
    ]
    if now is not None:
        lines += [
            f"now: {code(now.source)} ({escape(now.verdict)}, started {escape(now.started_at)})",
            "",
        ]
    lines += [f"{counts}.", ""]
    for warning in diff.warnings:
        lines += [f"**Warning**: {escape(warning)}.", ""]
    for name in CATEGORIES:
        changes: tuple[Change, ...] = getattr(diff, name)
        if not changes:
            continue
        lines += [f"**{category_title(name).capitalize()} ({len(changes)})**", ""]
        lines += [f"- {code(c.id)}{_note(name, c)}" for c in changes[:MAX_LISTED]]
        if len(changes) > MAX_LISTED:
            lines.append(f"- … and {len(changes) - MAX_LISTED} more")
        lines.append("")
    return lines
