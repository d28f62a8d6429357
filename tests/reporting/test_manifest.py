"""manifest.json: the SHA-256 of every report file, which an auditor can recompute."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from conformance.core.results import RunResult
from conformance.reporting import REPORT_FILES, manifest, write_reports


def test_it_hashes_each_file_as_written(failing_run: RunResult, report_dir: Path) -> None:
    write_reports(failing_run, report_dir)
    document = json.loads((report_dir / manifest.FILENAME).read_text(encoding="utf-8"))
    assert sorted(document["files"]) == sorted(REPORT_FILES)
    for name, entry in document["files"].items():
        data = (report_dir / name).read_bytes()
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def test_it_states_what_the_run_checked_against(failing_run: RunResult, report_dir: Path) -> None:
    write_reports(failing_run, report_dir)
    document = json.loads((report_dir / manifest.FILENAME).read_text(encoding="utf-8"))
    assert document["contract_sha256"] == failing_run.contract_sha256
    assert document["profile"] == {"name": "default", "sha256": failing_run.profile_sha256}
    assert document["seed"] == 42
    assert document["verdict"] == "NOT CONFORMANT"


def test_verify_finds_an_intact_directory_intact(passing_run: RunResult, report_dir: Path) -> None:
    write_reports(passing_run, report_dir)
    assert manifest.verify(report_dir) == []


def test_verify_names_an_altered_file(passing_run: RunResult, report_dir: Path) -> None:
    write_reports(passing_run, report_dir)
    summary = report_dir / "summary.md"
    summary.write_text(summary.read_text(encoding="utf-8").replace("CONFORMANT", "FINE"))
    problems = manifest.verify(report_dir)
    assert len(problems) == 1
    assert problems[0].startswith("summary.md: SHA-256 ")


def test_verify_names_a_missing_file_and_a_missing_manifest(
    passing_run: RunResult, report_dir: Path
) -> None:
    write_reports(passing_run, report_dir)
    (report_dir / "junit.xml").unlink()
    assert [p.split(":")[0] for p in manifest.verify(report_dir)] == ["junit.xml"]
    (report_dir / manifest.FILENAME).unlink()
    (problem,) = manifest.verify(report_dir)
    assert "not a readable manifest" in problem


def test_verify_refuses_names_outside_the_directory(tmp_path: Path) -> None:
    (tmp_path / manifest.FILENAME).write_text(
        json.dumps({"files": {"../etc/passwd": {"sha256": "0" * 64}}}), encoding="utf-8"
    )
    assert manifest.verify(tmp_path) == ["../etc/passwd: not a plain file name"]


def test_verify_names_a_file_that_is_not_a_regular_file_and_never_blocks(tmp_path: Path) -> None:
    (tmp_path / manifest.FILENAME).write_text(
        json.dumps({"files": {"summary.md": {"sha256": "0" * 64}}}), encoding="utf-8"
    )
    os.mkfifo(tmp_path / "summary.md")
    assert manifest.verify(tmp_path) == [
        f"summary.md: cannot be read ({tmp_path / 'summary.md'} is a named pipe, not a regular "
        "file)"
    ]
