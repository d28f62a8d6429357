"""``diff``: what changed between two runs, from their results.json; exit 1 on a new failure.

The comparison is ``core.diff.compare``; the files are read as ``report`` reads them
(``reporting.outcomes``). Text suits the console, Markdown a pull-request comment.
"""

from __future__ import annotations

from pathlib import Path

import click

from conformance.cli import exit_codes
from conformance.cli._common import fail
from conformance.core.diff import compare, describe, run_line
from conformance.core.untrusted import for_terminal
from conformance.reporting import diff as diff_report
from conformance.reporting.load import LoadError
from conformance.reporting.outcomes import read_outcomes


@click.command(epilog=exit_codes.DIFF)
@click.argument("old", type=click.Path(path_type=Path), metavar="OLD_RESULTS")
@click.argument("new", type=click.Path(path_type=Path), metavar="NEW_RESULTS")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "markdown"]),
    default="text",
    show_default=True,
    help="text for the console, markdown for a pull-request comment.",
)
def diff(old: Path, new: Path, output_format: str) -> None:
    """Compare two runs (results.json files or report directories): requirements newly failed,
    newly passed, newly not exercised, and failures both share."""
    try:
        before = read_outcomes(old)
        after = read_outcomes(new)
    except LoadError as exc:
        fail(for_terminal(str(exc)))
    changes = compare(before, after)
    if output_format == "markdown":
        lines = diff_report.markdown(changes, heading="## payment-conformance diff:", now=after)
    else:
        lines = describe(changes, subject=run_line(after))
    # texts of the files (ids, paths) are someone else's: escaped, never obeyed
    click.echo(for_terminal("\n".join(lines).rstrip("\n")))
    raise SystemExit(changes.exit_code)
