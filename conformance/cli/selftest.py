"""``selftest``: run the suite against the reference server once per catalogue fault.

Exit codes: 0 every selected fault was caught through a requirement it names and the unfaulted
run passed; 1 a fault survived, was caught only through other requirements, a run crashed or
timed out, or the unfaulted run failed; 2 it could not run (bad options, unknown category or
fault); 130 interrupted (every run is stopped).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import FrameType

import click
from rich.console import Console

from conformance.cli import exit_codes
from conformance.cli._common import (
    SEED,
    fail,
    latency_option,
    refuse_empty_selectors,
    server_rate_limit_option,
    split_selectors,
)
from conformance.core.untrusted import for_terminal
from conformance.engine.selftest import (
    SelftestError,
    SelftestOptions,
    default_jobs,
    run_selftest,
)
from conformance.engine.selftest_display import SelftestDisplay
from conformance.reference.faults import CATEGORIES, FaultCatalogueError

INTERRUPTED = 130


@click.command(epilog=exit_codes.SELFTEST)
@click.option("--quick", is_flag=True, help="Each run in quick mode (what every commit runs).")
@click.option(
    "--category",
    "categories",
    multiple=True,
    metavar="NAME",
    help=f"Only the faults of these categories ({', '.join(CATEGORIES)}). "
    "Repeatable or comma-separated.",
)
@click.option(
    "--fault",
    "faults",
    multiple=True,
    metavar="NAME",
    help="Only these faults (added to --category's). Repeatable or comma-separated.",
)
@click.option(
    "--jobs",
    type=int,
    default=default_jobs(),
    show_default="the number of CPUs",
    help="Suite runs at a time, each with one test worker.",
)
@click.option(
    "--seed",
    type=SEED,
    help="Seed of every run (default: random, printed; all runs share it).",
)
@click.option(
    "--only",
    callback=refuse_empty_selectors,
    multiple=True,
    metavar="ID|SECTION",
    help="Passed to every run: test only these requirements. A speed aid for trying a few "
    "faults; it weakens the check, since ids outside the selection cannot fail.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=float,
    help="Seconds after which a run is stopped and reported as timed out "
    "(default: 600 with --quick, 1800 without).",
)
@click.option(
    "--report",
    "report_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the kill matrix as JSON to this file.",
)
@click.option(
    "--fail-fast",
    is_flag=True,
    help="Each faulted run stops at its first failure (run --fail-fast): a fault is caught or "
    "not as before, in a fraction of the time.",
)
@latency_option("Each run's embedded server answers this much later (run --latency-ms).")
@server_rate_limit_option(
    "Each run's embedded server answers 429 past N requests a second per API key "
    "(run --server-rate-limit): is every fault still caught behind a rate limit?"
)
@click.option(
    "--profile",
    "profile_name",
    default="default",
    show_default=True,
    help="Every run, and its embedded reference server, under this profile (a shipped name or "
    "a .toml path). A fault whose needs the profile does not meet is shown not applicable.",
)
@click.option("--no-progress", is_flag=True, help="No live footer (plain lines only).")
def selftest(
    quick: bool,
    categories: tuple[str, ...],
    faults: tuple[str, ...],
    jobs: int,
    seed: int | None,
    only: tuple[str, ...],
    timeout_s: float | None,
    report_file: Path | None,
    fail_fast: bool,
    latency_ms: int,
    server_rate_limit: float | None,
    profile_name: str,
    no_progress: bool,
) -> None:
    """Run the suite against the reference server once per catalogue fault: the kill matrix."""
    options = SelftestOptions(
        quick=quick,
        categories=split_selectors(categories),
        faults=split_selectors(faults),
        jobs=jobs,
        seed=seed,
        only=split_selectors(only),
        timeout_s=timeout_s,
        fail_fast=fail_fast,
        latency_ms=latency_ms,
        server_rate_limit=server_rate_limit,
        profile=profile_name,
    )
    console = Console(file=sys.stdout, highlight=False)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        matrix = run_selftest(options, SelftestDisplay(console, live=not no_progress))
    except (SelftestError, FaultCatalogueError) as exc:
        fail(for_terminal(str(exc)))
    finally:
        signal.signal(signal.SIGTERM, previous)
    if report_file is not None:
        try:
            matrix.write_json(report_file)
        except OSError as exc:
            fail(f"--report: cannot write {report_file}: {exc}")
        console.print(f"kill matrix: {report_file}", soft_wrap=True)
    if matrix.interrupted:
        click.echo("error: interrupted; every run was stopped", err=True)
    raise SystemExit(matrix.exit_code)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM stops the selftest the way Ctrl-C does: every child run is stopped."""
    raise KeyboardInterrupt
