"""``validate``: check recorded traffic (HAR or JSON Lines) against the contract and a profile.

No server is called. Exit codes as for ``run``: 0 every exercised requirement passed; 1 at least
one failed; 2 the recording could not be read, the options are wrong or nothing was exercised.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from conformance.cli import exit_codes
from conformance.cli._common import fail, profile_option
from conformance.cli.run import default_report_dir
from conformance.core.catalogue import load_catalogue
from conformance.core.profile import (
    API_KEY_ENV,
    API_SECRET_ENV,
    ProfileError,
    load_profile,
    with_credential,
)
from conformance.core.results import Outcome, RunResult, Verdict
from conformance.core.untrusted import for_terminal
from conformance.engine.options import RunError, check_report_dir
from conformance.engine.progress import reports_line, section_rows, verdict_line
from conformance.engine.runner import write_run_reports
from conformance.reporting import step_summary

MAX_FAILURES_LISTED = 20


@click.command(epilog=exit_codes.VALIDATE)
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@profile_option
@click.option(
    "--report-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Where the reports go (default: reports/<UTC time>).",
)
@click.option(
    "--format",
    "recording_format",
    type=click.Choice(["har", "jsonl"]),
    help="The recording's format (default: by the file's suffix).",
)
@click.option(
    "--api-key",
    envvar=API_KEY_ENV,
    help=f"Replaces the API key of the profile's first credential, as for run [env {API_KEY_ENV}].",
)
@click.option(
    "--api-secret",
    envvar=API_SECRET_ENV,
    help="Replaces the API secret of the profile's first credential, as for run: with it the "
    "signatures of the recorded requests are checked [env "
    f"{API_SECRET_ENV}]; never printed.",
)
@click.option("--no-progress", is_flag=True, help="No progress lines while validating.")
def validate(
    file: Path,
    profile_name: str,
    report_dir: Path | None,
    recording_format: str | None,
    api_key: str | None,
    api_secret: str | None,
    no_progress: bool,
) -> None:
    """Check recorded traffic FILE (HAR, or JSON Lines as docs/validate.md describes) against
    the contract and the profile, without calling any server."""
    from conformance.validator.exchange import RecordingError
    from conformance.validator.recording_file import validate_file

    directory = report_dir if report_dir is not None else default_report_dir()
    try:
        check_report_dir(directory)
        loaded = with_credential(load_profile(profile_name), api_key or None, api_secret or None)
    except RunError as exc:
        fail(for_terminal(str(exc)))
    except ProfileError as exc:
        fail(for_terminal(f"--profile: {exc}"))
    console = Console(file=sys.stdout, highlight=False)

    def progress(count: int) -> None:
        click.echo(f"validated {count:,} exchanges ...", err=True)

    try:
        result = validate_file(
            file,
            loaded,
            format=recording_format,
            on_progress=None if no_progress else progress,
        )
    except RecordingError as exc:
        fail(for_terminal(str(exc)))
    except KeyboardInterrupt:
        fail("interrupted")
    try:
        paths = write_run_reports(result, directory, load_catalogue(), loaded)
    except RunError as exc:
        fail(for_terminal(str(exc)))
    render(console, result, paths)
    problem = step_summary.append(paths, os.environ)
    if problem is not None:
        click.echo(f"warning: {for_terminal(problem)}", err=True)
    if result.verdict is Verdict.NOT_TESTED:
        click.echo(
            "error: nothing was tested: no exchange of the recording exercised a requirement "
            "(see 'not exercised' in the reports for the reasons)",
            err=True,
        )
    raise SystemExit(result.exit_code)


def render(console: Console, result: RunResult, paths: list[Path]) -> None:
    """The section table, the failed requirements with their first failing exchange, the
    verdict line and where the reports are."""
    exchanges = result.options.get("exchanges", "0")
    console.print(f"validated {int(exchanges):,} exchanges of {result.options.get('recording')}")
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("section", "passed", "failed", "not exercised"):
        table.add_column(column, justify="left" if column == "section" else "right")
    for name, passed, failed, skipped in section_rows(result):
        table.add_row(escape(name), str(passed), str(failed), str(skipped))
    console.print(table)
    failures = [r for r in result.requirements if r.outcome is Outcome.FAILED]
    if failures:
        console.print()
        console.print(f"failed requirements ({len(failures)}):")
        for entry in failures[:MAX_FAILURES_LISTED]:
            first = entry.failures[0]
            message = for_terminal(first.message).splitlines()[0][:300] if first.message else ""
            console.print(
                Text.assemble(("✗ ", "red"), (entry.requirement.id, "bold"), " ", message),
                soft_wrap=True,
            )
        if len(failures) > MAX_FAILURES_LISTED:
            console.print(f"... and {len(failures) - MAX_FAILURES_LISTED} more (see the reports)")
        console.print()
    style = {"CONFORMANT": "green", "NOT CONFORMANT": "red"}.get(result.verdict.value, "yellow")
    console.print(Text(verdict_line(result), style=f"bold {style}"), soft_wrap=True)
    if paths:
        console.print(escape(reports_line(paths)), highlight=False, soft_wrap=True)
