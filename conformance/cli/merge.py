"""``merge``: the report directories of a run's shards (``run --shard i/N``) as one run's reports.

Exit codes: 0 every exercised requirement passed; 1 at least one failed; 2 the directories are
not every shard of one run (one missing, given twice, of another run or options, unreadable,
not as its manifest lists it, or not signed with the key given by ``--public-key`` or
``--sign-key``), the reports could not be written, or a shard did not finish
(``reporting.merge``).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import click

from conformance.cli import exit_codes
from conformance.cli._common import fail
from conformance.cli.run import default_report_dir
from conformance.cli.waivers import echo_waivers, gate_options, load_option
from conformance.core.catalogue import load_catalogue
from conformance.core.results import RunResult
from conformance.core.untrusted import for_terminal
from conformance.reporting import ReportError, step_summary, write_reports
from conformance.reporting.load import LoadError
from conformance.reporting.merge import MergeError, gated, merge_shards
from conformance.reporting.outcomes import read_outcomes
from conformance.reporting.signing import SigningError, load_private_key, load_public_key


@click.command(epilog=exit_codes.MERGE)
@click.argument(
    "directories",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path),
    metavar="DIR...",
)
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write the merged reports (default: reports/<UTC timestamp>/).",
)
@click.option(
    "--sign-key",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="KEY.pem",
    help="Sign the merged reports' manifest with this Ed25519 private key (PEM), as run does. "
    "Every shard must then be signed, with --public-key or else with this key.",
)
@click.option(
    "--public-key",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="KEY.pub.pem",
    help="Merge only shards signed with this Ed25519 public key (PEM): an unsigned shard, or "
    "one signed with another key, is refused (exit 2).",
)
@gate_options("Applied to the merged run (a shard sees only its part).")
def merge(
    directories: tuple[Path, ...],
    report_dir: Path | None,
    sign_key: Path | None,
    public_key: Path | None,
    waivers_file: Path | None,
    strict_waivers: bool,
    baseline: Path | None,
) -> None:
    """Merge the report directories of every shard of one run (run --shard i/N) into one."""
    waivers = load_option(waivers_file, strict_waivers, fail_fast=False)
    try:
        baseline_outcomes = None if baseline is None else read_outcomes(baseline)
    except LoadError as exc:
        fail(for_terminal(f"--baseline: {exc}"))
    signer = None
    shard_key = None
    try:
        if sign_key is not None:
            signer = load_private_key(sign_key)
            # a signed merge vouches for its shards: they must be signed too
            shard_key = signer.public_key
        if public_key is not None:
            shard_key = load_public_key(public_key)
    except SigningError as exc:
        fail(for_terminal(str(exc)))
    try:
        catalogue = load_catalogue()
        merged = merge_shards(directories, catalogue, shard_key)
        today = datetime.now(UTC).date()  # the merge's clock, not a shard's started_at
        result = gated(merged, waivers, strict_waivers, baseline_outcomes, today)
    except MergeError as exc:
        fail(for_terminal(str(exc)))
    except (OSError, ValueError) as exc:
        fail(for_terminal(f"the requirement catalogue cannot be read: {exc}"))
    target = report_dir if report_dir is not None else default_report_dir()
    try:
        paths = write_reports(result, target, catalogue, signer=signer)
    except ReportError as exc:
        fail(for_terminal(str(exc)))
    _say(result, len(directories), target)
    problem = step_summary.append(paths, os.environ)
    if problem is not None:
        click.echo(f"warning: {for_terminal(problem)}", err=True)
    if result.waivers is not None:
        echo_waivers(result.waivers)
        if result.waivers.strict_failure is not None:
            click.echo(f"error: {for_terminal(result.waivers.strict_failure)}", err=True)
    raise SystemExit(result.exit_code)


def _say(result: RunResult, shards: int, target: Path) -> None:
    click.echo(f"merged {shards} shards: {result.verdict_summary}")
    if result.incomplete_reason is not None:
        reason = for_terminal(result.incomplete_reason)
        click.echo(f"error: a shard did not finish: {reason}", err=True)
    click.echo(f"reports: {target}/")
