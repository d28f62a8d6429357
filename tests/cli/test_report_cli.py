"""``payment-conformance report``: re-render a stored run's reports from its results.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.engine.options import RunOptions
from conformance.engine.progress import NullDisplay
from conformance.engine.runner import execute
from conformance.reporting import load, write_reports
from tests.reporting.runs import FAILED, check, make_run

FORMATS = {
    "html": "report.html",
    "junit": "junit.xml",
    "ctrf": "ctrf.json",
    "markdown": "summary.md",
}


def report(*args: str) -> Result:
    return CliRunner().invoke(main, ["report", *args])


@pytest.fixture(scope="module")
def failing_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run against the embedded server with a fault: one requirement fails, one passes."""
    directory = tmp_path_factory.mktemp("run") / "reports"
    finished = execute(
        RunOptions(
            quick=True,
            only=("AUTH-001", "AUTH-013"),
            seed=1,
            embedded_fault="auth-bad-signature-403",
            report_dir=directory,
        ),
        NullDisplay(),
    )
    assert finished.result.exit_code == 1, finished.result.verdict_summary
    return directory


@pytest.mark.slow
@pytest.mark.parametrize(("output_format", "filename"), FORMATS.items())
def test_re_rendering_a_real_failing_run_gives_the_same_bytes(
    failing_run_dir: Path, output_format: str, filename: str, tmp_path: Path
) -> None:
    out = tmp_path / filename
    result = report(
        str(failing_run_dir / "results.json"), "--format", output_format, "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == (failing_run_dir / filename).read_bytes()


@pytest.mark.slow
def test_without_out_the_report_goes_to_standard_output(failing_run_dir: Path) -> None:
    result = report(str(failing_run_dir / "results.json"), "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == (failing_run_dir / "summary.md").read_bytes()


@pytest.mark.slow
def test_an_edited_results_json_is_refused_with_exit_2(
    failing_run_dir: Path, tmp_path: Path
) -> None:
    document = json.loads((failing_run_dir / "results.json").read_text(encoding="utf-8"))
    document["requirements"][0]["outcome"] = "passed-ish"
    edited = tmp_path / "results.json"
    edited.write_text(json.dumps(document), encoding="utf-8")
    result = report(str(edited), "--format", "html")
    assert result.exit_code == 2
    assert result.output.startswith("error: ")
    assert "requirements/0/outcome" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"log": {"version": "1.2", "entries": []}}', "not a valid results.json"),
        ("{not json", "is not JSON"),
    ],
)
def test_a_foreign_file_is_refused_with_exit_2(content: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "traffic.har"
    path.write_text(content, encoding="utf-8")
    result = report(str(path), "--format", "junit")
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and message in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("missing.json", "--format", "html"), "cannot read missing.json"),
        (("x.json", "--format", "pdf"), "'pdf' is not one of"),
        (("x.json",), "Missing option '--format'"),
    ],
)
def test_bad_arguments_exit_2(args: tuple[str, ...], message: str) -> None:
    result = report(*args)
    assert result.exit_code == 2
    assert message in result.output


def test_a_deeply_nested_results_json_is_refused_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    result = report(str(path), "--format", "markdown")
    assert result.exit_code == 2, result.output
    assert result.output == f"error: {path}: JSON text nests deeper than 256 levels\n"


def test_a_named_pipe_never_hangs_report(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    os.mkfifo(path)
    result = subprocess.run(
        [sys.executable, "-m", "conformance", "report", str(path), "--format", "junit"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"error: {path} is a named pipe, not a regular file\n"


def test_a_device_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.symlink_to("/dev/zero")  # a symbolic link given by the user is followed
    result = report(str(path), "--format", "html")
    assert result.exit_code == 2, result.output
    assert result.output == f"error: {path} is a character device, not a regular file\n"


def test_a_results_json_of_more_values_than_a_run_writes_is_refused_before_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(load, "MAX_VALUES", 1000)  # 2,000,000 in use: a file of 6 MB
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"checks": [{}] * 1000}), encoding="utf-8")
    result = report(str(path), "--format", "html")
    assert result.exit_code == 2, result.output
    assert result.output == f"error: {path}: JSON text holds more than 1,000 values\n"


def test_out_is_never_written_through_a_planted_link(tmp_path: Path) -> None:
    results = tmp_path / "run"
    write_reports(make_run([check("c1", FAILED, "IDEM-004", message="replayed")]), results)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    out = tmp_path / "report.html"
    out.symlink_to("victim.txt")
    result = report(str(results / "results.json"), "--format", "html", "--out", str(out))
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: cannot write {out}: a symbolic link where a report")
    assert victim.read_text(encoding="utf-8") == "precious"


def test_out_replaces_a_file_already_there(tmp_path: Path) -> None:
    results = tmp_path / "run"
    write_reports(make_run([check("c1", FAILED, "IDEM-004", message="replayed")]), results)
    out = tmp_path / "summary.md"
    out.write_text("old", encoding="utf-8")
    result = report(str(results / "results.json"), "--format", "markdown", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == (results / "summary.md").read_bytes()
