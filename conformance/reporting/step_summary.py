"""The GitHub Actions step summary: ``run`` appends summary.md to the file GitHub names.

GitHub sets ``GITHUB_STEP_SUMMARY`` to a file for each step and renders what the step appended
to it on the run's page. Appending is a courtesy: when it fails, the run says so in a warning
line and its verdict and exit code stay what they were.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from conformance.reporting import summary

ENV = "GITHUB_STEP_SUMMARY"


def append(report_paths: Sequence[Path], environ: Mapping[str, str]) -> str | None:
    """Append the summary.md among ``report_paths`` to the file ``environ`` names in
    ``GITHUB_STEP_SUMMARY``; return a warning when it could not (None: appended, or nothing
    to do: the variable is unset or empty, or no summary.md was written)."""
    target = environ.get(ENV, "")
    written = [p for p in report_paths if p.name == summary.FILENAME]
    if not target or not written:
        return None
    try:
        text = written[0].read_bytes()
        with open(target, "ab") as handle:
            handle.write(text)
    except OSError as exc:
        return f"cannot append summary.md to {ENV} ({target}): {exc.strerror or exc}"
    return None
