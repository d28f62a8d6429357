"""What ``selftest`` shows: a row per run as it finishes, then the summary per category.

On a terminal a live footer says which runs are under way; elsewhere (CI logs) only the plain
lines are printed. Every row carries the fault's category, so plain output sorts by category
with ``sort -k3``; the summary and the list of problems are grouped by category.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.console import Console, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from conformance.core.untrusted import for_terminal
from conformance.engine.selftest import Matrix, Row, RunSpec, Status

MAX_IDS_SHOWN = 6
MAX_MESSAGE_CHARS = 240
NAME_WIDTH_LIMIT = 44

LABELS = {
    Status.CAUGHT: ("caught", "green"),
    Status.PASSED: ("passed", "green"),
    Status.OTHER_IDS: ("OTHER IDS", "bold yellow"),
    Status.SURVIVED: ("SURVIVED", "bold red"),
    Status.FAILED: ("FAILED", "bold red"),
    Status.ERROR: ("ERROR", "bold red"),
    Status.TIMEOUT: ("TIMEOUT", "bold red"),
    Status.NOT_APPLICABLE: ("n/a", "dim"),
}


def _ids(ids: tuple[str, ...], style: str = "") -> Text:
    shown = ", ".join(ids[:MAX_IDS_SHOWN])
    more = f" +{len(ids) - MAX_IDS_SHOWN} more" if len(ids) > MAX_IDS_SHOWN else ""
    return Text(shown + more, style=style)


def row_detail(row: Row) -> Text:
    """The ids that failed, those the fault names in ``breaks`` first and highlighted."""
    fault = row.spec.fault
    if row.status is Status.NOT_APPLICABLE:
        return Text(row.note, style="dim")
    if row.status in (Status.ERROR, Status.TIMEOUT):
        message = for_terminal(row.outcome.message.replace("\n", " "))
        return Text(message[:MAX_MESSAGE_CHARS], style="red")
    if fault is None:
        if row.status is Status.PASSED:
            requests = row.outcome.requests
            return Text("conformant" + (f", {requests:,} requests" if requests else ""))
        return Text.assemble("failed ", _ids(row.other, "bold red"))
    if row.status is Status.CAUGHT:
        text = _ids(row.named, "bold green")
        if row.other:
            text.append(" · also ")
            text.append_text(_ids(row.other, "dim"))
        return text
    if row.status is Status.OTHER_IDS:
        text = Text.assemble("failed ", _ids(row.other, "yellow"), " · not its own: ")
    else:
        text = Text("nothing failed · its own: ")
    text.append(row.note or ", ".join(fault.breaks), style="bold")
    return text


def row_line(row: Row, done: int, total: int, name_width: int) -> Text:
    label, style = LABELS[row.status]
    counter = f"{done:>{len(str(total))}}/{total}"
    return Text.assemble(
        (counter, "dim"),
        "  ",
        (f"{label:<9}", style),
        "  ",
        f"{row.category or '-':<11}",
        " ",
        f"{row.name:<{name_width}}",
        " ",
        (f"{row.outcome.wall_s:6.1f} s", "dim"),
        "  ",
        row_detail(row),
    )


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}:{rest:02d}" if minutes else f"{seconds:.0f} s"


@dataclass
class SelftestDisplay:
    """An ``Observer`` of ``run_selftest`` printing to ``console``."""

    console: Console
    live: bool = True
    _running: dict[str, float] = field(default_factory=dict)
    _name_width: int = 24
    _total: int = 0
    _started: float = 0.0
    _live: Live | None = None
    _matrix: Matrix | None = None

    def begin(self, matrix: Matrix) -> None:
        self._matrix = matrix
        self._total = len(matrix.specs)
        self._started = time.monotonic()
        self._name_width = min(NAME_WIDTH_LIMIT, max(len(s.name) for s in matrix.specs))
        options = matrix.options
        categories: dict[str, int] = {}
        for spec in matrix.specs:
            if spec.fault is not None:
                categories[spec.category] = categories.get(spec.category, 0) + 1
        faults = ", ".join(f"{c} {n}" for c, n in categories.items())
        mode = "quick mode" if options.quick else "default mode"
        if options.fail_fast:
            mode += ", each faulted run stopping at its first failure"
        if options.latency_ms:
            mode += f", server latency {options.latency_ms} ms"
        if options.server_rate_limit is not None:
            mode += f", server rate limit {options.server_rate_limit:g} requests/s per API key"
        skipped = sum(bool(s.unmet) for s in matrix.specs)
        if skipped:
            faults += f"; {skipped} not applicable under the profile"
        self._print(
            f"selftest: {self._total} runs (unfaulted + {self._total - 1} faults: {faults})"
            f" · profile {options.profile} · {mode} · seed {matrix.seed} · {options.jobs} jobs"
            f" · timeout {options.run_timeout_s:.0f} s per run"
        )
        if options.only:
            self._print(
                f"--only {','.join(options.only)}: every run checks only these requirements, "
                "so a fault is not seen failing ids outside them",
                style="yellow",
            )
        if self.live and self.console.is_terminal:
            self._live = Live(
                console=self.console,
                get_renderable=self._footer,
                refresh_per_second=2,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()

    def started(self, spec: RunSpec) -> None:
        self._running[spec.name] = time.monotonic()

    def finished(self, row: Row, matrix: Matrix) -> None:
        self._running.pop(row.name, None)
        self.console.print(
            row_line(row, len(matrix.rows), self._total, self._name_width),
            soft_wrap=True,
            highlight=False,
        )

    def end(self, matrix: Matrix) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        render_summary(self.console, matrix)

    def _footer(self) -> RenderableType:
        now = time.monotonic()
        running = ", ".join(
            f"{name} ({now - started:.0f} s)" for name, started in list(self._running.items())
        )
        done = len(self._matrix.rows) if self._matrix is not None else 0
        return Text(
            f"{done}/{self._total} done · {_duration(now - self._started)} · running "
            f"{running or '-'}",
            style="dim",
        )

    def _print(self, message: str, style: str = "") -> None:
        self.console.print(Text(message, style=style), soft_wrap=True, highlight=False)


def render_summary(console: Console, matrix: Matrix) -> None:
    """Per category caught / total and time, the problems, timings and the verdict."""
    console.print()
    table = Table(box=None, pad_edge=False, show_edge=False, title_justify="left")
    for column in ("category", "caught", "not applicable", "run time"):
        table.add_column(column, justify="left" if column == "category" else "right")
    caught = total = skipped = 0
    for summary in matrix.categories():
        caught += summary.caught
        total += summary.total
        skipped += summary.not_applicable
        style = "green" if summary.caught == summary.total else "red"
        table.add_row(
            summary.category,
            Text(f"{summary.caught}/{summary.total}", style=style),
            str(summary.not_applicable),
            _duration(summary.run_s),
        )
    table.add_row(
        Text("all", style="bold"), Text(f"{caught}/{total}", style="bold"), str(skipped), ""
    )
    console.print(table)
    unfaulted = matrix.unfaulted
    console.print()
    if unfaulted is None:
        console.print(Text("unfaulted run: did not finish", style="bold red"), soft_wrap=True)
    else:
        label, style = LABELS[unfaulted.status]
        console.print(
            Text.assemble(
                "unfaulted run: ",
                (label, style),
                f" in {unfaulted.outcome.wall_s:.1f} s · ",
                row_detail(unfaulted),
            ),
            soft_wrap=True,
        )
    problems = [r for r in matrix.problems if r.spec.fault is not None]
    if problems:
        console.print(f"\nfaults not caught through their own ids ({len(problems)}):")
        width = min(NAME_WIDTH_LIMIT, max(len(r.name) for r in problems))
        for row in problems:
            label, style = LABELS[row.status]
            console.print(
                Text.assemble(
                    "  ",
                    (f"{label:<9}", style),
                    f"  {row.category:<11} {row.name:<{width}}  ",
                    row_detail(row),
                ),
                soft_wrap=True,
            )
    console.print()
    console.print(Text(timing_line(matrix), style="dim"), soft_wrap=True)
    console.print(verdict_text(matrix), soft_wrap=True)


def timing_line(matrix: Matrix) -> str:
    """Wall time, and per run with a verdict: the suite's own time and the overhead around it."""
    line = f"{len(matrix.rows)} runs in {_duration(matrix.wall_s)} with {matrix.options.jobs} jobs"
    timed = [r for r in matrix.rows if r.outcome.suite_s is not None]
    if timed:
        wall = sum(r.outcome.wall_s for r in timed) / len(timed)
        suite = sum(r.outcome.suite_s or 0.0 for r in timed) / len(timed)
        line += (
            f"; per run {wall:.1f} s: the suite {suite:.1f} s + {wall - suite:.1f} s "
            "process start, imports and reports"
        )
    first = matrix.median_first_failure_s
    if first is not None:
        line += f"; median time to the first failure {first:.1f} s"
    without = sum(r.status is not Status.NOT_APPLICABLE for r in matrix.rows) - len(timed)
    if without:
        line += f" ({without} without a verdict not counted)"
    return line


def verdict_text(matrix: Matrix) -> Text:
    faults = [r for r in matrix.rows if r.spec.fault is not None]
    caught = sum(r.status is Status.CAUGHT for r in faults)
    skipped = sum(bool(s.unmet) for s in matrix.specs)
    planned = len(matrix.specs) - 1 - skipped
    summary = f"{caught} of {planned} faults caught through the ids they name"
    if skipped:
        summary += f", {skipped} not applicable"
    summary += f" (profile {matrix.options.profile})"
    if matrix.interrupted:
        return Text(
            f"selftest: INTERRUPTED after {len(matrix.rows)} of {len(matrix.specs)} runs; "
            + summary,
            style="bold yellow",
        )
    unfaulted = matrix.unfaulted
    unfaulted_ok = unfaulted is not None and unfaulted.ok
    summary += "; unfaulted run " + ("conformant" if unfaulted_ok else "NOT conformant")
    if matrix.exit_code == 0:
        return Text(f"selftest: PASSED ({summary})", style="bold green")
    return Text(f"selftest: FAILED ({summary})", style="bold red")
