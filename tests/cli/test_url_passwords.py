"""A password in a URL (``http://user:password@host``) with a failed check: reports, no crash.

The masked form of such a URL (``user:[redacted]@``) is no valid URL to ``urlsplit``; a report
that parsed it again crashed with "'redacted' does not appear to be an IPv4 or IPv6 address"
(exit 1, no reports). The password itself never appears in any output or report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from benchmarks.validate import reference_traffic
from conformance.cli import main
from conformance.core.profile import load_profile
from conformance.reference.server import ReferenceServer
from tests.validator.samples import write_har, write_jsonl

PASSWORD = "pw-4f1c9e2b7d"
# fail IDEM-004 (run --only IDEM-004) and IDEM-008 (in the recorded reference traffic)
FAULTS = ("idem-key-128-rejected", "idem-replay-missing-header")


def with_password(base_url: str) -> str:
    return base_url.replace("http://", f"http://user:{PASSWORD}@", 1)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def assert_no_password(result: Result, *directories: Path) -> None:
    assert PASSWORD not in result.output
    for directory in directories:
        for path in directory.rglob("*"):
            if path.is_file():
                assert PASSWORD.encode() not in path.read_bytes(), path


@pytest.fixture(scope="module")
def faulted() -> Iterator[ReferenceServer]:
    with ReferenceServer(profile=load_profile(), faults=FAULTS) as server:
        yield server


def test_run_with_a_password_in_base_url_reports_a_failure(
    faulted: ReferenceServer, tmp_path: Path
) -> None:
    reports, har = tmp_path / "reports", tmp_path / "run.har"
    result = invoke(
        *("run", "--base-url", with_password(faulted.base_url), "--only", "IDEM-004"),
        *("--quick", "--seed", "1", "--workers", "1", "--no-progress"),
        *("--report-dir", str(reports), "--record", str(har)),
    )
    assert result.exit_code == 1, result.output  # before: ValueError, exit 1, no reports
    assert "Traceback" not in result.output and not isinstance(result.exception, ValueError)
    assert "✗ IDEM-004 " in result.output
    assert {"results.json", "report.html", "junit.xml", "summary.md"} <= {
        p.name for p in reports.iterdir()
    }
    assert "user:[redacted]@127.0.0.1" in (reports / "results.json").read_text()
    assert_no_password(result, reports)
    assert PASSWORD.encode() not in har.read_bytes()

    # the results' masked base URL is read back by `report`
    html = tmp_path / "again.html"
    rendered = invoke(
        "report", str(reports / "results.json"), "--format", "html", "--out", str(html)
    )
    assert rendered.exit_code == 0, rendered.output
    assert PASSWORD not in html.read_text() + rendered.output

    # the recording's masked URLs are read back as well
    again = invoke("validate", str(har), "--report-dir", str(tmp_path / "again"))
    assert again.exit_code == 1, again.output
    assert "✗ IDEM-008 " in again.output
    assert_no_password(again, tmp_path / "again")


def test_validate_a_recording_whose_urls_carry_a_password(
    faulted: ReferenceServer, tmp_path: Path
) -> None:
    traffic = reference_traffic(with_password(faulted.base_url), load_profile())
    har = write_har(tmp_path / "traffic.har", traffic)
    assert PASSWORD in har.read_text()
    reports = tmp_path / "reports"
    result = invoke("validate", str(har), "--report-dir", str(reports), "--no-progress")
    assert result.exit_code == 1, result.output  # before: ValueError, exit 1, no reports
    assert not isinstance(result.exception, ValueError)
    assert "✗ IDEM-008 " in result.output
    assert (reports / "results.json").is_file()
    assert_no_password(result, reports)

    # the same traffic as another tool may record it, the password masked
    masked = [dataclasses.replace(ex, url=ex.url.replace(PASSWORD, "[redacted]")) for ex in traffic]
    lines = write_jsonl(tmp_path / "masked.jsonl", masked)
    assert "user:[redacted]@127.0.0.1" in lines.read_text()
    result = invoke("validate", str(lines), "--report-dir", str(tmp_path / "again"))
    assert result.exit_code == 1, result.output  # before: "request.url is not a valid URL"
    assert "✗ IDEM-008 " in result.output


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        (
            ("--base-url", f"http://user:{PASSWORD}@[::1/"),
            "error: --base-url 'http://user:[redacted]@[::1/' is not a valid URL",
        ),
        (("--webhook-url", "http://[::1:8088"), "error: --webhook-url must be an absolute"),
    ],
)
def test_a_url_that_cannot_be_parsed_is_refused_before_the_run(
    args: tuple[str, ...], refused: str, tmp_path: Path
) -> None:
    result = invoke("run", *args, "--report-dir", str(tmp_path / "reports"))
    assert result.exit_code == 2, result.output  # before: a ValueError traceback
    assert result.output.startswith(refused), result.output
    assert PASSWORD not in result.output
