"""summary.md: the verdict, the section table and the failures, for a CI step summary.

GitHub renders Markdown and inline HTML in step summaries, so every text that comes from the
run (messages, requirement texts) is escaped; the list of failures is capped to keep the
summary short.
"""

from __future__ import annotations

import re

from conformance.core.case_coverage import coverage_line
from conformance.core.results import split_steps
from conformance.core.untrusted import inert_workflow_commands
from conformance.reporting import waivers
from conformance.reporting.coverage import by_operation
from conformance.reporting.view import RequirementView, RunView

FILENAME = "summary.md"
MAX_FAILURES = 50
TEXT_LIMIT = 160
MESSAGE_LIMIT = 240
MAX_STEP_LINES = 30  # of a failure's step list (report.html and results.json carry it whole)
MAX_GAPS = 50  # (constraint, class) pairs without a case listed; report.html lists them all

VERDICT_MARK = {"CONFORMANT": "✅", "NOT CONFORMANT": "❌", "NOT TESTED": "⚠️", "INCOMPLETE": "⚠️"}

# Inline Markdown only: the escaped texts never start a line, so "#", "-", "1." are inert.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def escape(text: str, limit: int | None = None) -> str:
    """``text`` on one line, cut to ``limit`` characters, inert as Markdown and as HTML."""
    line = " ".join(text.split())
    if limit is not None and len(line) > limit:
        line = line[: limit - 1] + "…"
    line = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", line)


def code(text: str) -> str:
    """``text`` as inline code, whatever backticks it holds, and no workflow command to a CI
    step that prints summary.md (Markdown would keep ``##[error]`` in a code span)."""
    text = inert_workflow_commands(" ".join(text.split()))
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _failure(requirement: RequirementView) -> str:
    failures = requirement.failures
    message = failures[0].message if failures and failures[0].message else "failed"
    message, steps = split_steps(message)
    more = f" (+{len(failures) - 1} more failing checks)" if len(failures) > 1 else ""
    shown = "".join(f"  {code(line)}  \n" for line in steps[:MAX_STEP_LINES])
    return (
        f"- **{escape(requirement.id)}** ({requirement.badge}, {escape(requirement.level)}) "
        f"{escape(requirement.text, TEXT_LIMIT)}  \n"
        f"  {escape(message, MESSAGE_LIMIT)}{more}  \n"
        f"{shown}"
        f"  replay: {code(requirement.replay)}"
    )


def _mark(view: RunView) -> str:
    if view.verdict == "NOT CONFORMANT" and view.exit_code == 0:  # no new failure: baseline
        return "⚠️"
    if view.verdict.startswith("CONFORMANT WITH"):  # "CONFORMANT WITH 2 WAIVERS"
        return VERDICT_MARK["CONFORMANT"]
    return VERDICT_MARK.get(view.verdict, "")


def _baseline(view: RunView) -> list[str]:
    """The comparison with the baseline (``run --baseline``), or nothing."""
    from conformance.reporting import diff  # it renders with this module's escape and code

    return [] if view.baseline is None else diff.markdown(view.baseline)


def _case_coverage(view: RunView) -> list[str]:
    """The constraint-case totals and each pair without a case, or nothing when no test logged
    a constraint case."""
    if not view.case_coverage:
        return []
    lines = [escape(coverage_line(view.case_coverage, sampled=view.quick)), ""]
    gaps = [gap for op in view.case_coverage for gap in op.missing]
    if gaps and not view.quick:
        lines += [f"- {code(gap)}" for gap in gaps[:MAX_GAPS]]
        if len(gaps) > MAX_GAPS:
            lines.append(f"- … and {len(gaps) - MAX_GAPS} more: see report.html or results.json")
        lines.append("")
    return lines


def _shard_title(view: RunView) -> str:
    """ " shard 2 of 4" for one shard of a run; "" for a whole run."""
    if view.shard is None:
        return ""
    return f" shard {view.shard['index']} of {view.shard['total']}"


def _shard_note(view: RunView) -> list[str]:
    if view.shard is None:
        return []
    return [
        f"_This is shard {view.shard['index']} of {view.shard['total']} of one run: its "
        "verdict covers only its part of the checks. `payment-conformance merge` of every "
        "shard gives the run's verdict._",
        "",
    ]


def render(view: RunView) -> str:
    counts = view.counts
    results = view.check_counts.total
    lines = [
        f"## payment-conformance{_shard_title(view)}: {_mark(view)} {view.verdict_summary}",
        "",
        *_shard_note(view),
        f"**{view.verdict_summary}**: {counts.passed} passed, {counts.failed} failed, "
        + (f"{counts.waived} waived, " if counts.waived else "")
        + f"{counts.not_exercised} not exercised ({results:,} check result"
        f"{'' if results == 1 else 's'} recorded, {view.requests_sent:,} requests "
        f"in {view.duration}"
        + (
            ""
            if view.first_failure_s is None
            else f"; first failure after {view.first_failure_s:.1f} s"
        )
        + (f"; {view.outside_selection_note}" if view.outside_selection else "")
        + ")",
        "",
        f"rate limits: {escape(view.rate_limits.describe())}",
        "",
        *_case_coverage(view),
        *(
            [escape(view.webhook_receiver.describe()), ""]
            if view.webhook_receiver is not None and view.webhook_receiver.drops
            else []
        ),
        f"{'validated' if view.validation else 'target'}: {escape(view.target)} "
        f"· profile {code(view.profile_name)}"
        + ("" if view.seed_text is None else f" · seed {view.seed_text}")
        + " "
        f"· suite {escape(view.suite_version)} · contract sha256 {code(view.contract_sha256)}",
        "",
        f"repeat this {'validation' if view.validation else 'run'}: {code(view.rerun)}",
        "",
        *(
            [f"**The run did not finish**: {escape(view.incomplete_reason)}.", ""]
            if view.incomplete_reason
            else []
        ),
        *[line for warning in view.warnings for line in (f"**Warning**: {escape(warning)}.", "")],
        *_baseline(view),
        "| section | passed | failed | not exercised |",
        "|---|--:|--:|--:|",
    ]
    for section in view.sections:
        c = section.counts
        lines.append(
            f"| {escape(section.key)} {escape(section.title)} | {c.passed} | {c.failed} "
            f"| {c.not_exercised} |"
        )
    lines.append(
        f"| **total** | **{counts.passed}** | **{counts.failed}** | **{counts.not_exercised}** |"
    )
    operations = by_operation(view)
    if operations:
        lines += [
            "",
            "| operation | passed | failed | not exercised | status codes answered |",
            "|---|--:|--:|--:|---|",
        ]
        for op in operations:
            lines.append(
                f"| {code(op.operation_id)} | {op.passed} | {op.failed} "
                f"| {len(op.not_exercised)} | {op.statuses_text} |"
            )
    failed = view.failed
    if failed:
        lines += [
            "",
            f"### Failed requirements ({len(failed)})",
            "",
            f"_{escape(view.replay_note)}_",
            "",
        ]
        lines += [_failure(r) for r in failed[:MAX_FAILURES]]
        if len(failed) > MAX_FAILURES:
            lines.append(
                f"- … and {len(failed) - MAX_FAILURES} more: see report.html or results.json"
            )
    if view.waivers is not None:
        lines += waivers.markdown(view.waivers, escape, code)
    lines += [
        "",
        f"reports: {code(view.reports_dir)} "
        "(report.html, junit.xml, ctrf.json, results.json, summary.md, manifest.json)",
    ]
    return "\n".join(lines) + "\n"
