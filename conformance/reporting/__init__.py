"""The reports of a run: report.html, junit.xml, ctrf.json, results.json, summary.md and
manifest.json.

``write_reports`` renders a ``RunResult`` in every format (one module per format) into one
directory. The same run always gives the same bytes. Every text is redacted again on the way
out (``scrub``), so no secret reaches a report even if the evidence carried one. Each file is
written beside its name and renamed over it (``file_writes``): a symbolic link planted in the
directory is never written through, and a directory holding one is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from conformance.core.file_writes import links_refused, symbolic_links, write_replacing
from conformance.core.results import RunResult
from conformance.reporting import ctrf, html, json_report, junit, manifest, signing, summary
from conformance.reporting.view import HasSections, build_view

__all__ = ["ALL_FILES", "REPORT_FILES", "ReportError", "planted_links", "write_reports"]

REPORT_FILES = (
    html.FILENAME,
    junit.FILENAME,
    ctrf.FILENAME,
    json_report.FILENAME,
    summary.FILENAME,
)
# Every file a run may write into its report directory.
ALL_FILES = (*REPORT_FILES, manifest.FILENAME, signing.SIGNATURE_FILENAME)


class ReportError(Exception):
    """The reports could not be written; the message names the path and the reason."""


def planted_links(directory: Path) -> str | None:
    """Why ``directory`` cannot take the reports: a symbolic link where one goes (None: none)."""
    links = symbolic_links(directory, ALL_FILES)
    return links_refused(links) if links else None


def write_reports(
    run: RunResult,
    directory: Path,
    catalogue: HasSections | None = None,
    *,
    secrets: Iterable[str] = (),
    signer: signing.SigningKey | None = None,
) -> list[Path]:
    """Write every report of ``run`` into ``directory`` (created if needed); return the paths.

    ``catalogue`` (optional) orders the sections as the documents do; ``secrets`` are values
    to redact wherever they appear (e.g. the API secrets of the profile's credentials), on top
    of those the run reveals itself. With ``signer`` the manifest is signed (manifest.sig).
    """
    view = build_view(run, catalogue, secrets=secrets, reports_dir=str(directory))
    rendered = {
        html.FILENAME: html.render(view),
        junit.FILENAME: junit.render(view),
        ctrf.FILENAME: ctrf.render(view),
        json_report.FILENAME: json_report.render(view),
        summary.FILENAME: summary.render(view),
    }
    contents = {name: text.encode("utf-8") for name, text in rendered.items()}
    contents[manifest.FILENAME] = manifest.render(view, contents, signer).encode("utf-8")
    if signer is not None:
        signature = signing.signature_text(signer, contents[manifest.FILENAME])
        contents[signing.SIGNATURE_FILENAME] = signature.encode("ascii")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if (refusal := planted_links(directory)) is not None:
            raise ReportError(f"cannot write the reports to {directory}: {refusal}")
        paths = []
        for name, data in contents.items():
            path = directory / name
            write_replacing(path, data)
            paths.append(path)
    except OSError as exc:
        where = exc.filename or directory
        raise ReportError(f"cannot write the reports to {where}: {exc.strerror or exc}") from exc
    return paths
