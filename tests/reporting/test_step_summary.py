"""The GitHub step summary: summary.md appended to the file ``GITHUB_STEP_SUMMARY`` names, and a
warning (never a failure) when it cannot be."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.core.results import RunResult
from conformance.reporting import step_summary, summary, write_reports


@pytest.fixture
def paths(passing_run: RunResult, report_dir: Path) -> list[Path]:
    return write_reports(passing_run, report_dir)


def test_summary_md_is_appended_after_what_the_file_held(paths: list[Path], tmp_path: Path) -> None:
    target = tmp_path / "step-summary.md"
    target.write_text("earlier step\n", encoding="utf-8")
    assert step_summary.append(paths, {"GITHUB_STEP_SUMMARY": str(target)}) is None
    written = (paths[0].parent / summary.FILENAME).read_text(encoding="utf-8")
    assert target.read_text(encoding="utf-8") == "earlier step\n" + written


def test_nothing_happens_without_the_variable_or_a_summary(
    paths: list[Path], tmp_path: Path
) -> None:
    target = tmp_path / "step-summary.md"
    assert step_summary.append(paths, {}) is None
    assert step_summary.append(paths, {"GITHUB_STEP_SUMMARY": ""}) is None
    assert step_summary.append([], {"GITHUB_STEP_SUMMARY": str(target)}) is None
    assert not target.exists()


def test_a_file_that_cannot_be_written_gives_a_warning(paths: list[Path], tmp_path: Path) -> None:
    target = tmp_path / "no-such-dir" / "step-summary.md"
    warning = step_summary.append(paths, {"GITHUB_STEP_SUMMARY": str(target)})
    assert warning == (
        f"cannot append summary.md to GITHUB_STEP_SUMMARY ({target}): No such file or directory"
    )
