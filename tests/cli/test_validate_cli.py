"""``payment-conformance validate FILE``: recorded traffic judged without calling a server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.benchmarks.validate import reference_traffic
from conformance.cli import main
from conformance.core.profile import load_profile
from conformance.reference.server import ReferenceServer
from tests.validator.samples import write_har, write_jsonl


def validate(*args: str) -> Result:
    return CliRunner().invoke(main, ["validate", *args])


def _record(path: Path, faults: tuple[str, ...] = ()) -> Path:
    profile = load_profile("default")
    with ReferenceServer(profile=profile, faults=faults) as server:
        traffic = reference_traffic(server.base_url, profile)
    return write_har(path, traffic) if path.suffix == ".har" else write_jsonl(path, traffic)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("recordings")
    return {
        "good": _record(where / "good.har"),
        "faulted": _record(where / "faulted.jsonl", ("idem-replay-missing-header",)),
    }


def test_traffic_of_the_reference_server_is_conformant(
    recordings: dict[str, Path], tmp_path: Path
) -> None:
    result = validate(str(recordings["good"]), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 0, result.output
    assert "verdict: CONFORMANT, " in result.output
    assert "requirements exercised" in result.output
    written = {p.name for p in (tmp_path / "r").iterdir()}
    assert {"results.json", "report.html", "manifest.json"} <= written
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert "sk_test_alpha" not in json.dumps(results)


def test_a_faulted_server_is_not_conformant_and_named(
    recordings: dict[str, Path], tmp_path: Path
) -> None:
    result = validate(
        str(recordings["faulted"]), "--report-dir", str(tmp_path / "r"), "--profile", "default"
    )
    assert result.exit_code == 1, result.output
    assert "verdict: NOT CONFORMANT, " in result.output
    assert "IDEM-008" in result.output
    assert "faulted.jsonl line " in result.output


def test_an_unreadable_recording_is_an_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"request": \n', encoding="utf-8")
    result = validate(str(broken), "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 2
    assert result.output.startswith("error: ")
    assert "Traceback" not in result.output


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    result = validate(str(tmp_path / "nothing.har"), "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 2 and result.output.startswith("error: ")


def test_the_format_option_overrides_the_suffix(
    recordings: dict[str, Path], tmp_path: Path
) -> None:
    copy = tmp_path / "traffic.txt"
    copy.write_bytes(recordings["good"].read_bytes())
    result = validate(str(copy), "--format", "har", "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 0, result.output


def test_an_unknown_profile_is_an_error(recordings: dict[str, Path], tmp_path: Path) -> None:
    result = validate(
        str(recordings["good"]), "--profile", "nope", "--report-dir", str(tmp_path / "r")
    )
    assert result.exit_code == 2 and result.output.startswith("error: --profile")


def test_an_empty_recording_tests_nothing(tmp_path: Path) -> None:
    result = validate(
        str(write_jsonl(tmp_path / "empty.jsonl", [])), "--report-dir", str(tmp_path / "r")
    )
    assert result.exit_code == 2
    assert "NOT TESTED" in result.output


# -- traffic recorded by `run --record` --------------------------------------------------------
def _run_recorded(where: Path, only: tuple[str, ...], fault: str | None = None) -> Path:
    from conformance.engine.progress import NullDisplay
    from conformance.engine.runner import RunOptions, execute

    har = where / "run.har"
    execute(
        RunOptions(
            quick=True,
            only=only,
            seed=1,
            workers=1,
            embedded_fault=fault,
            record=har,
            report_dir=where / "run-reports",
        ),
        NullDisplay(),
    )
    return har


@pytest.mark.slow
def test_a_run_recorded_from_a_faulted_server_is_not_conformant(tmp_path: Path) -> None:
    har = _run_recorded(tmp_path, ("IDEM-008",), "idem-replay-missing-header")
    result = validate(str(har), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 1, result.output
    assert "✗ IDEM-008 " in result.output
    assert "header Idempotent-Replayed missing" in result.output


@pytest.mark.slow
def test_a_run_recorded_from_the_reference_server_is_conformant(tmp_path: Path) -> None:
    har = _run_recorded(tmp_path, ("PAY-STATE-003", "AUTH-016"))
    result = validate(str(har), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 0, result.output
    assert "verdict: CONFORMANT, " in result.output


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.symlink_to(p), "traffic.har: a symbolic link loop"),
        (lambda p: p.mkdir(), "traffic.har' is a directory"),
        (lambda p: p.symlink_to("/dev/zero"), "traffic.har is a character device, not a file"),
    ],
    ids=["symbolic link loop", "directory", "device"],
)
def test_a_recording_that_is_not_a_file_is_named_for_what_it_is(
    tmp_path: Path, make: Callable[[Path], None], message: str
) -> None:
    path = tmp_path / "traffic.har"
    make(path)
    result = validate(str(path), "--report-dir", str(tmp_path / "r"), "--no-progress")
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and message in result.output
    assert "Traceback" not in result.output
