"""What a run shows on the terminal: header, preflight, live phases, then the summary.

The runner feeds a ``Display`` with events. ``ConsoleDisplay`` draws a rich live table of the
phases (one per test module / check family) on a terminal and falls back to one plain line per
finished phase elsewhere (CI logs). ``render_summary`` prints the section table, the failed
requirements with their replay commands, the verdict line and where the reports are.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from conformance.core.case_coverage import coverage_line
from conformance.core.catalogue import Layer, Requirement
from conformance.core.diff import describe
from conformance.core.redaction import redact_text
from conformance.core.results import (
    Outcome,
    RunResult,
    Target,
    Verdict,
    outside_selection_note,
    split_steps,
)
from conformance.core.untrusted import for_terminal, mask_url_passwords
from conformance.engine.preflight import PreflightReport

REFRESH_INTERVAL_S = 0.1
MAX_FAILURES_LISTED = 25
MAX_STEP_LINES = 30  # of a failure's step list; the reports carry it whole


@dataclass(frozen=True)
class RunHeader:
    version: str
    contract_sha256: str
    profile_name: str
    seed: int

    def line(self) -> str:
        return (
            f"payment-conformance {self.version} · contract sha256 {self.contract_sha256[:12]} "
            f"· profile {self.profile_name} · seed {self.seed}"
        )


class Display(Protocol):
    def header(self, header: RunHeader) -> None: ...
    def target(self, target: Target) -> None: ...
    def preflight(self, report: PreflightReport) -> None: ...
    def workers(self, line: str) -> None: ...
    def collected(self, phases: dict[str, int]) -> None: ...
    def test_done(self, phase: str, family: str, failed: bool, requests: int) -> None: ...
    def close(self) -> None: ...


class NullDisplay:
    """Shows nothing (``run_suite(progress=False)``, tests)."""

    def header(self, header: RunHeader) -> None:
        pass

    def target(self, target: Target) -> None:
        pass

    def preflight(self, report: PreflightReport) -> None:
        pass

    def workers(self, line: str) -> None:
        pass

    def collected(self, phases: dict[str, int]) -> None:
        pass

    def test_done(self, phase: str, family: str, failed: bool, requests: int) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class _Phase:
    label: str
    total: int
    done: int = 0
    failed: int = 0
    requests: int = 0
    announced: bool = False


def describe_target(target: Target) -> str:
    """The target line, with the password of a ``--base-url`` masked."""
    if target.embedded:
        fault = f" with fault {target.fault}" if target.fault else ""
        return for_terminal(f"target: embedded reference server at {target.base_url}{fault}")
    return for_terminal(f"target: {target.base_url}")


@dataclass
class ConsoleDisplay:
    """Header and preflight lines, then live phases (``live``) or plain lines."""

    console: Console
    live: bool = True
    _phases: dict[str, _Phase] = field(default_factory=dict)
    _live: Live | None = None
    _last_refresh: float = 0.0

    def __post_init__(self) -> None:
        # rich follows sys.stdout lazily; pin today's stream, since the runner redirects
        # sys.stdout to keep pytest's own output off the terminal.
        self.console.file = self.console.file

    def header(self, header: RunHeader) -> None:
        self.console.print(escape(for_terminal(header.line())), highlight=False, soft_wrap=True)

    def target(self, target: Target) -> None:
        self.console.print(escape(describe_target(target)), highlight=False, soft_wrap=True)

    def preflight(self, report: PreflightReport) -> None:
        parts = [f"{'✓' if s.ok else '✗'} {s.name}" for s in report.steps]
        line = for_terminal("preflight " + " ".join(parts))
        self.console.print(escape(line), highlight=False, soft_wrap=True)

    def workers(self, line: str) -> None:
        self.console.print(escape(line), highlight=False, soft_wrap=True)

    def collected(self, phases: dict[str, int]) -> None:
        self._phases = {key: _Phase(key, total) for key, total in phases.items()}
        total = sum(phases.values())
        if self.live and self.console.is_terminal:
            self._live = Live(
                self._render(),
                console=self.console,
                auto_refresh=False,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()
        else:
            self.console.print(
                f"running {total} tests in {len(phases)} phases", highlight=False, soft_wrap=True
            )

    def test_done(self, phase: str, family: str, failed: bool, requests: int) -> None:
        entry = self._phases.setdefault(phase, _Phase(phase, 0))
        entry.label = family
        entry.done += 1
        entry.total = max(entry.total, entry.done)
        entry.failed += int(failed)
        entry.requests += requests
        if self._live is not None:
            now = time.monotonic()
            if now - self._last_refresh >= REFRESH_INTERVAL_S:
                self._last_refresh = now
                self._live.update(self._render(), refresh=True)
        elif entry.done == entry.total and not entry.announced:
            entry.announced = True
            self.console.print(escape(_plain_line(entry)), highlight=False, soft_wrap=True)

    def close(self) -> None:
        if self._live is not None:
            self._live.update(self._render(), refresh=True)
            self._live.stop()
            self._live = None
        else:
            for entry in self._phases.values():
                if not entry.announced and entry.done:
                    entry.announced = True
                    self.console.print(escape(_plain_line(entry)), highlight=False, soft_wrap=True)

    def _render(self) -> Table:
        grid = Table.grid(padding=(0, 2))
        for _ in range(5):
            grid.add_column()
        for entry in self._phases.values():
            failed = Text(f"{entry.failed} failed", style="red") if entry.failed else Text("")
            grid.add_row(
                Text(for_terminal(entry.label)),
                ProgressBar(total=max(entry.total, 1), completed=entry.done, width=20),
                Text(f"{entry.done}/{entry.total} tests"),
                Text(f"{entry.requests:,} requests", justify="right"),
                failed,
            )
        return grid


def _plain_line(entry: _Phase) -> str:
    failed = f", {entry.failed} failed" if entry.failed else ""
    label = for_terminal(entry.label)
    return f"{label:<16} {entry.done}/{entry.total} tests, {entry.requests:,} requests{failed}"


# -- the end of a run ------------------------------------------------------------------------
def section_rows(run: RunResult) -> list[tuple[str, int, int, int]]:
    """(section, passed, failed, not exercised) in the catalogue's order."""
    rows: dict[str, list[int]] = {}
    columns = {Outcome.PASSED: 0, Outcome.FAILED: 1, Outcome.NOT_EXERCISED: 2}
    for result in run.requirements:
        section = result.requirement.section
        counts = rows.setdefault(f"{section.document} {section.number} {section.title}", [0, 0, 0])
        if result.outcome in columns:  # waived: in the verdict line and the waivers
            counts[columns[result.outcome]] += 1
    return [(name, c[0], c[1], c[2]) for name, c in rows.items()]


def verdict_line(run: RunResult) -> str:
    """The verdict with the requirements it rests on; "tests" (above) are pytest tests, each
    recording one or more check results (the reports count the latter)."""
    return (
        f"verdict: {run.verdict_summary} ({run.count(Outcome.PASSED)} passed, "
        f"{run.count(Outcome.FAILED)} failed, "
        + (f"{run.count(Outcome.WAIVED)} waived, " if run.count(Outcome.WAIVED) else "")
        + f"{run.count(Outcome.NOT_EXERCISED)} not exercised; "
        f"{check_results(len(run.selected_checks))}) in {run.duration_s:.0f} s"
        + first_failure(run.first_failure_s)
        + (f"; {outside_selection_note(run.outside_selection)}" if run.outside_selection else "")
    )


def first_failure(seconds: float | None) -> str:
    return "" if seconds is None else f"; first failure after {seconds:.1f} s"


def check_results(count: int) -> str:
    return f"{count:,} check result{'' if count == 1 else 's'} recorded"


def layer_advice(requirement: Requirement) -> str:
    if requirement.layer is Layer.CONTRACT:
        return "contract: must fix"
    return "your profile: fix the server or the profile"


def render_summary(console: Console, run: RunResult, report_paths: Sequence[Path] = ()) -> None:
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("section")
    table.add_column("passed", justify="right")
    table.add_column("failed", justify="right")
    table.add_column("not exercised", justify="right")
    for name, passed, failed, skipped in section_rows(run):
        table.add_row(
            escape(name),
            str(passed),
            Text(str(failed), style="red" if failed else ""),
            str(skipped),
        )
    console.print(table)
    failures = [r for r in run.requirements if r.outcome is Outcome.FAILED]
    if failures:
        console.print()
        console.print(
            f"failed requirements ({len(failures)}; {run.replay_note}):",
            highlight=False,
            soft_wrap=True,
        )
        for result in failures[:MAX_FAILURES_LISTED]:
            requirement = result.requirement
            first = result.failures[0] if result.failures else None
            # the message quotes the server: shown escaped, never obeyed by the terminal
            head, steps = split_steps(for_terminal(first.message)) if first else ("", [])
            message = head.splitlines()[0] if head else ""
            shown = steps[:MAX_STEP_LINES]
            if len(steps) > len(shown):
                shown.append(f"  ... {len(steps) - len(shown)} more lines in the reports")
            console.print(
                Group(
                    Text.assemble(
                        ("✗ ", "red"),
                        (for_terminal(requirement.id), "bold"),
                        f" [{layer_advice(requirement)}] ",
                        message[:300],
                    ),
                    *(Text(f"    {line}") for line in shown),
                    Text(
                        f"    replay: {for_terminal(replay_command(run, requirement.id))}",
                        style="dim",
                    ),
                ),
                soft_wrap=True,
            )
        if len(failures) > MAX_FAILURES_LISTED:
            more = len(failures) - MAX_FAILURES_LISTED
            console.print(f"... and {more} more (see the reports)", soft_wrap=True)
        rerun = run.rerun_command(base_url=mask_url_passwords(run.target.base_url))
        console.print(
            Text(f"repeat the whole run: {for_terminal(rerun)}", style="dim"), soft_wrap=True
        )
        console.print()
    console.print(f"rate limits: {run.rate_limits.describe()}", highlight=False, soft_wrap=True)
    if run.case_coverage:  # numbers only: the pairs without a case are named in the reports
        sampled = run.options.get("quick") == "true"
        line = coverage_line(run.case_coverage, sampled=sampled)
        console.print(line, highlight=False, soft_wrap=True)
    if run.webhook_receiver is not None and run.webhook_receiver.drops:
        # the paths are the server's choice: secrets masked, shown escaped
        line = redact_text(run.webhook_receiver.describe())
        console.print(Text(for_terminal(line)), soft_wrap=True)
    if run.baseline is not None:  # the baseline's file is the user's: shown escaped
        for line in describe(run.baseline):
            console.print(Text(for_terminal(line)), soft_wrap=True)
    style = {
        Verdict.CONFORMANT: "green",
        Verdict.CONFORMANT_WITH_WAIVERS: "green",
        Verdict.NOT_CONFORMANT: "red",
    }.get(run.verdict, "yellow")
    console.print(Text(verdict_line(run), style=f"bold {style}"), soft_wrap=True)
    if report_paths:
        console.print(escape(reports_line(report_paths)), highlight=False, soft_wrap=True)


def replay_command(run: RunResult, requirement_id: str) -> str:
    """``run.replay_command`` with the password of the base URL masked."""
    return run.replay_command(requirement_id, base_url=mask_url_passwords(run.target.base_url))


def reports_line(paths: Iterable[Path]) -> str:
    """Every file written, the manifest (and its signature) too: ``verify`` needs them."""
    paths = list(paths)
    directory = paths[0].parent
    names = ", ".join(p.name for p in paths)
    return f"reports: {directory}/ ({names})"
