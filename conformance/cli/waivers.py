"""``run --waivers FILE`` and ``--strict-waivers``: the options, loading the file before the run,
and the console lines of what each waiver did."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from conformance.cli._common import fail
from conformance.core.catalogue import CatalogueError, load_catalogue
from conformance.core.untrusted import for_terminal
from conformance.core.waivers import WaiverError, WaiverFile, WaiverReport, load_waivers

WAIVERS_HELP = (
    "Known deviations (TOML, docs/waivers.md): a failure a live waiver names is reported "
    "waived, not failed, and the verdict reads CONFORMANT WITH N WAIVERS; every report lists "
    "each waiver, and the manifest holds the file's SHA-256."
)
STRICT_HELP = "Fail the run (exit 1) when a waiver covered nothing this run (a stale waiver)."
BASELINE_HELP = (
    "An earlier run's results.json (or its report directory): only requirements failed now but "
    "not in it fail the run; the verdict and every report say what changed (docs/reports.md)."
)

F = TypeVar("F", bound=Callable[..., Any])


def gate_options(note: str = "") -> Callable[[F], F]:
    """``--waivers FILE``, ``--strict-waivers`` and ``--baseline RESULTS`` (``run`` and
    ``merge``), their help followed by ``note``."""
    extra = f" {note}" if note else ""

    def decorate(command: F) -> F:
        for option in reversed(
            (
                click.option(
                    "--waivers",
                    "waivers_file",
                    type=click.Path(path_type=Path, dir_okay=False),
                    metavar="FILE.toml",
                    help=WAIVERS_HELP + extra,
                ),
                click.option("--strict-waivers", is_flag=True, help=STRICT_HELP),
                click.option(
                    "--baseline",
                    type=click.Path(path_type=Path),
                    metavar="RESULTS",
                    help=BASELINE_HELP + extra,
                ),
            )
        ):
            command = option(command)
        return command

    return decorate


def load_option(path: Path | None, strict: bool, fail_fast: bool) -> WaiverFile | None:
    """The waivers file of ``--waivers``, checked against the catalogue; exit 2 on a problem."""
    if path is None:
        if strict:
            fail("--strict-waivers needs --waivers FILE")
        return None
    if fail_fast:
        # the test processes stop at a failing check before any waiver is looked at: a waived
        # failure would end the run early and its verdict would rest on almost nothing
        fail(
            "--fail-fast stops at the first failing check, waived or not: it cannot be "
            "combined with --waivers"
        )
    try:
        catalogue = load_catalogue()
    except (CatalogueError, OSError, ValueError) as exc:
        fail(f"the requirement catalogue cannot be read: {exc}")
    operations = {op for r in catalogue.requirements for op in r.operations}
    try:
        return load_waivers(path, {r.id for r in catalogue.requirements}, operations)
    except WaiverError as exc:
        fail(for_terminal(str(exc)))


def echo_waivers(report: WaiverReport) -> None:
    """What each waiver did, one line each, below the verdict."""
    click.echo(
        f"waivers: {for_terminal(report.file)} (sha256 {report.sha256}): {report.used} used, "
        f"{len(report.expired)} expired, {len(report.stale)} stale"
    )
    for result in report.results:
        click.echo(f"  {for_terminal(result.describe())}")
        click.echo(f"    reason: {for_terminal(result.waiver.reason)}")
        for covered in result.covered:
            click.echo(f"    {result.covered_label}: {for_terminal(covered.describe())}")


def manifest_lines(manifest: dict[str, object]) -> list[str]:
    """``verify``'s lines for the waivers a manifest records ([] when it records none).

    The manifest may come from anyone: every value is checked for its type and shown escaped.
    """
    recorded = manifest.get("waivers")
    if not isinstance(recorded, dict):
        return []
    entries = recorded.get("entries")
    entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    lines = [
        f"waivers: {for_terminal(str(recorded.get('file', '?')))} "
        f"(sha256 {for_terminal(str(recorded.get('sha256', '?')))}), {len(entries)} waiver(s), "
        f"{for_terminal(str(recorded.get('used', '?')))} used"
    ]
    for entry in entries:
        where = "".join(
            f" {word} {entry[key]}"
            for key, word in (("check", "check"), ("operation", "on"))
            if isinstance(entry.get(key), str)
        )
        lines.append(
            for_terminal(
                f"  {entry.get('requirement', '?')}{where} (expires {entry.get('expires', '?')}):"
                f" {entry.get('state', '?')}: {entry.get('reason', '?')}"
            )
        )
        if isinstance(entry.get("note"), str) and entry["note"]:
            lines.append(f"    {for_terminal(entry['note'])}")
        covered = entry.get("covered")
        label = "named, not waived" if entry.get("state") == "expired" else "covered"
        for item in covered if isinstance(covered, list) else []:
            if isinstance(item, dict):
                on = f" on {item['operation']}" if isinstance(item.get("operation"), str) else ""
                lines.append(
                    for_terminal(f"    {label}: {item.get('requirement')}: {item.get('check')}{on}")
                )
    return lines
