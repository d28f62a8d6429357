"""``report``: re-render report.html, junit.xml, ctrf.json or summary.md from a results.json.

The output is byte for byte what the run wrote in that format, except the directory summary.md
names on its last line: the one holding RESULTS.json, as given (``reporting.load`` says what
results.json keeps and how the rest is recovered).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from conformance.cli import exit_codes
from conformance.cli._common import fail
from conformance.core.file_writes import links_refused, write_replacing
from conformance.core.untrusted import for_terminal
from conformance.reporting import ctrf, html, junit, summary
from conformance.reporting.load import LoadError, load_view
from conformance.reporting.view import RunView

FORMATS: dict[str, Callable[[RunView], str]] = {
    "html": html.render,
    "junit": junit.render,
    "ctrf": ctrf.render,
    "markdown": summary.render,
}


@click.command(epilog=exit_codes.REPORT)
@click.argument("results", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(list(FORMATS)),
    required=True,
    help="html (report.html), junit (junit.xml), ctrf (ctrf.json) or markdown (summary.md).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write to this file (default: standard output).",
)
def report(results: Path, output_format: str, out: Path | None) -> None:
    """Render a report from the results.json of an earlier run, without running anything."""
    try:
        view = load_view(results)
    except LoadError as exc:
        fail(for_terminal(str(exc)))
    data = FORMATS[output_format](view).encode("utf-8")
    if out is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    if out.is_symlink():  # planted where the report goes: never written through
        fail(for_terminal(f"cannot write {links_refused([out])}"))
    try:
        write_replacing(out, data)
    except OSError as exc:
        fail(for_terminal(f"cannot write {out}: {exc.strerror or exc}"))
