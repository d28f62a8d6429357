"""``run``: run the conformance suite against a server (or the embedded reference server).

Exit codes: 0 every exercised requirement passed; 1 at least one failed; 2 the run could not
happen or tested nothing (bad options, preflight failure, nothing selected).
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import click
from rich.console import Console

from conformance.cli._common import fail, profile_option, split_selectors
from conformance.core.results import Verdict
from conformance.engine.progress import ConsoleDisplay, render_summary
from conformance.engine.runner import RunError, RunOptions, execute
from conformance.suite.plugin import API_KEY_ENV, API_SECRET_ENV

# Two processes halve the default run on two cores (measured: 53 s -> 30 s); more cores help
# less, since the embedded server is a single process.
DEFAULT_WORKERS = min(2, os.cpu_count() or 1)


def default_report_dir() -> Path:
    return Path("reports") / datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%SZ")


@click.command()
@click.option("--base-url", help="The server to test (default: the embedded reference server).")
@profile_option
@click.option(
    "--api-key",
    envvar=API_KEY_ENV,
    help=f"Replaces the profile's first API key [{API_KEY_ENV}].",
)
@click.option(
    "--api-secret",
    envvar=API_SECRET_ENV,
    help=f"Replaces the profile's first API secret [env {API_SECRET_ENV}]; never printed.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    help="Seed of the generated cases (default: random; printed on every run).",
)
@click.option("--max-examples", type=click.IntRange(min=1), help="Generated examples per property.")
@click.option(
    "--only",
    multiple=True,
    metavar="ID|SECTION",
    help="Test only these requirement id prefixes or sections, e.g. IDEM, AUTH-003, 'spec 5'. "
    "Repeatable or comma-separated.",
)
@click.option(
    "--skip", multiple=True, metavar="ID|SECTION", help="Leave these requirements out (as --only)."
)
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write the reports (default: reports/<UTC timestamp>/).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1, max=64),
    default=DEFAULT_WORKERS,
    show_default=True,
    help="Parallel test processes.",
)
@click.option("--quick", is_flag=True, help="A short run covering every operation and family.")
@click.option(
    "--fault",
    metavar="NAME",
    help="Switch on a reference-server fault (embedded server only; list: `faults`).",
)
@click.option(
    "--webhook-url",
    metavar="URL",
    help="The url at which the server reaches the suite's webhook receiver (for a remote "
    "server; default: http://127.0.0.1:<port>).",
)
@click.option(
    "--webhook-bind",
    metavar="HOST:PORT",
    help="Where the webhook receiver listens (default: 127.0.0.1 on the port of --webhook-url, "
    "or a free port).",
)
@click.option("--no-progress", is_flag=True, help="No live progress display (plain lines only).")
def run(
    base_url: str | None,
    profile_name: str,
    api_key: str | None,
    api_secret: str | None,
    seed: int | None,
    max_examples: int | None,
    only: tuple[str, ...],
    skip: tuple[str, ...],
    report_dir: Path | None,
    workers: int,
    quick: bool,
    fault: str | None,
    webhook_url: str | None,
    webhook_bind: str | None,
    no_progress: bool,
) -> None:
    """Run the conformance suite and write the reports."""
    if fault is not None and base_url is not None:
        fail(
            "--fault switches on a fault of the embedded reference server; "
            "it cannot be combined with --base-url"
        )
    options = RunOptions(
        base_url=base_url,
        profile=profile_name,
        seed=seed,
        only=split_selectors(only),
        skip=split_selectors(skip),
        embedded_fault=fault,
        quick=quick,
        max_examples=max_examples,
        report_dir=report_dir if report_dir is not None else default_report_dir(),
        progress=not no_progress,
        workers=workers,
        api_key=api_key or None,
        api_secret=api_secret or None,
        webhook_url=webhook_url,
        webhook_bind=webhook_bind,
    )
    console = Console(file=sys.stdout, highlight=False)
    try:
        finished = execute(options, ConsoleDisplay(console, live=not no_progress))
    except RunError as exc:
        fail(str(exc))
        return
    except KeyboardInterrupt:
        fail("interrupted")
        return
    result = finished.result
    render_summary(console, result, finished.report_paths)
    if finished.report_error is not None:
        fail(finished.report_error)
    if result.verdict is Verdict.NOT_TESTED:
        click.echo(
            "error: nothing was tested: no selected requirement was exercised "
            "(see 'not exercised' in the reports for the reasons)",
            err=True,
        )
    raise SystemExit(result.exit_code)
