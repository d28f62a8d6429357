"""``run`` against servers that are down, silent, not HTTP, not this API, or that break mid-run.

Whatever the server does, ``run`` ends in bounded time with a clear message and the right exit
code, never a traceback or a hang.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.jsonsafe import JsonTooComplex
from conformance.core.profile import load_profile
from conformance.reporting import REPORT_FILES
from conformance.suite.wire.client import SuiteClient
from tests.engine.hostile import Behaviour, canned, closed_port, hostile_server

# ~70,000 nested arrays: json.loads recursing this deep overflowed the C stack (py_ecc, imported
# through eth-account, raises the recursion limit to 100,000) and killed the run with SIGSEGV.
DEEP_JSON = canned("200 OK", b"[" * 70_000)


def run(base_url: str, tmp_path: Path, *args: str) -> Result:
    return CliRunner().invoke(
        main,
        [
            *("run", "--base-url", base_url, "--no-progress", "--workers", "1"),
            *("--report-dir", str(tmp_path), *args),
        ],
    )


def assert_clean(result: Result) -> None:
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_server_that_is_down(tmp_path: Path) -> None:
    result = run(f"http://127.0.0.1:{closed_port()}", tmp_path)
    assert result.exit_code == 2
    assert_clean(result)
    assert "preflight ✗ reachable" in result.output
    assert "error: preflight failed (reachable): cannot connect to 127.0.0.1" in result.output
    assert not list(tmp_path.iterdir())  # nothing ran, no reports


@pytest.mark.parametrize(
    ("behaviour", "expected"),
    [
        (Behaviour.HTML, "does not look like the Payment Service API"),
        (Behaviour.GARBAGE, "reply is not valid HTTP"),
        (Behaviour.CLOSE, "closed the connection"),
    ],
)
def test_servers_that_are_not_this_api(tmp_path: Path, behaviour: Behaviour, expected: str) -> None:
    with hostile_server(behaviour) as base_url:
        result = run(base_url, tmp_path)
    assert result.exit_code == 2
    assert_clean(result)
    assert "error: preflight failed" in result.output
    assert expected in result.output


@pytest.mark.slow
def test_a_server_that_never_answers(tmp_path: Path) -> None:
    started = time.monotonic()
    with hostile_server(Behaviour.SILENT) as base_url:
        result = run(base_url, tmp_path)
    assert result.exit_code == 2
    assert_clean(result)
    assert "no response in time" in result.output
    assert time.monotonic() - started < 30


@pytest.mark.slow
def test_a_server_that_breaks_after_preflight(tmp_path: Path) -> None:
    started = time.monotonic()
    with hostile_server(Behaviour.PREFLIGHT_ONLY) as base_url:
        result = run(base_url, tmp_path, "--quick", "--only", "AUTH,IDEM", "--seed", "1")
    assert result.exit_code == 1, result.output
    assert_clean(result)
    assert "preflight ✓ reachable ✓ signed request accepted ✓ fixtures present" in result.output
    assert "verdict: NOT CONFORMANT" in result.output
    assert "the server's reply is not valid HTTP" in result.output
    assert (tmp_path / "report.html").is_file()
    assert time.monotonic() - started < 120


@pytest.mark.slow
def test_a_server_that_stops_answering_after_preflight(tmp_path: Path) -> None:
    started = time.monotonic()
    with hostile_server(Behaviour.PREFLIGHT_THEN_SILENT) as base_url:
        result = run(base_url, tmp_path, "--quick", "--only", "AUTH", "--seed", "1")
    elapsed = time.monotonic() - started
    # no answer is no failure: three read timeouts, every other check not run, no verdict
    assert result.exit_code == 2, result.output
    assert_clean(result)
    assert "error: the run did not finish: the server stopped answering" in result.output
    assert "verdict: INCOMPLETE" in result.output
    assert (tmp_path / "report.html").is_file()
    assert elapsed < 90


def run_in_subprocess(base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``payment-conformance run`` in its own interpreter: a crash kills it, not the tests."""
    command = [sys.executable, "-c", "from conformance.cli import main; main()"]
    return subprocess.run(
        [*command, "run", "--base-url", base_url, "--no-progress", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.mark.slow
def test_a_server_that_answers_deeply_nested_json_after_preflight(tmp_path: Path) -> None:
    # every check of every family reads the answer, in the test processes and the run's own
    reports = tmp_path / "reports"
    with hostile_server(Behaviour.PREFLIGHT_THEN_CANNED, DEEP_JSON) as base_url:
        done = run_in_subprocess(
            base_url, "--quick", "--workers", "2", "--report-dir", str(reports)
        )
    output = done.stdout + done.stderr
    assert done.returncode >= 0, f"killed by signal {-done.returncode}\n{output[-3000:]}"
    assert done.returncode == 1, output[-3000:]
    assert "Traceback" not in output
    assert "verdict: NOT CONFORMANT" in done.stdout
    for name in REPORT_FILES:
        assert (reports / name).is_file(), name


def test_preflight_refuses_deeply_nested_json_with_a_clear_message(tmp_path: Path) -> None:
    with hostile_server(Behaviour.CANNED, DEEP_JSON) as base_url:
        done = run_in_subprocess(base_url, "--report-dir", str(tmp_path / "r"))
    output = done.stdout + done.stderr
    assert done.returncode == 2, output[-3000:]
    assert "Traceback" not in output
    assert "error: preflight failed (signed request accepted)" in done.stderr
    assert "nests deeper than 256 levels" in done.stderr


def test_the_suite_clients_responses_refuse_deeply_nested_json() -> None:
    with (
        hostile_server(Behaviour.CANNED, DEEP_JSON) as base_url,
        SuiteClient(base_url, load_profile()) as client,
    ):
        response = client.get("/v1/payments")
    with pytest.raises(JsonTooComplex, match="nests deeper than 256 levels"):
        response.json()


@pytest.mark.slow
@pytest.mark.parametrize("behaviour", [Behaviour.TRICKLE_HEADERS, Behaviour.TRICKLE_BODY])
def test_a_server_that_trickles_after_preflight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behaviour: Behaviour
) -> None:
    # One byte every 0.2 s never trips a per-read timeout: only the per-request deadline ends
    # each request (2 s here instead of 30 s, to keep the test short).
    from conformance.suite.wire import transport

    monkeypatch.setattr(transport, "DEFAULT_LIMITS", transport.Limits(deadline_s=2.0))
    started = time.monotonic()
    with hostile_server(behaviour) as base_url:
        result = run(base_url, tmp_path, "--quick", "--only", "AUTH", "--seed", "1")
    assert result.exit_code == 1, result.output
    assert_clean(result)
    assert "verdict: NOT CONFORMANT" in result.output
    assert "no complete response within 2 s" in result.output
    for name in REPORT_FILES:
        assert (tmp_path / name).is_file(), name
    assert time.monotonic() - started < 300


# The run's own peak, /proc's VmHWM written at exit: ru_maxrss would not do, since Linux carries
# it over exec from the forking process, so a test process grown large by earlier tests would
# show as the run's peak.
_REPORT_PEAK_AT_EXIT = """
import atexit, os, re
from pathlib import Path

def _write_peak():
    status = Path("/proc/self/status").read_text()
    peak = re.search(r"VmHWM:\\s*(\\d+)", status)
    Path(os.environ["PEAK_KIB_FILE"]).write_text(peak.group(1) if peak else "")

atexit.register(_write_peak)
from conformance.cli import main
main()
"""


def run_measuring_memory(base_url: str, tmp_path: Path, *args: object) -> tuple[int, str, int]:
    """``run`` in its own interpreter: exit code, output and its peak RSS in bytes (Linux)."""
    out, peak_file = tmp_path / "output.txt", tmp_path / "peak-kib.txt"
    command = [sys.executable, "-c", _REPORT_PEAK_AT_EXIT, "run"]
    with out.open("w") as sink:
        process = subprocess.Popen(
            [*command, "--base-url", base_url, "--no-progress", "--workers", "1", *map(str, args)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PEAK_KIB_FILE": str(peak_file)},
        )
        try:
            process.wait(timeout=600)
        except subprocess.TimeoutExpired:
            process.kill()
            pytest.fail("run did not finish within 600 s")
    return process.returncode, out.read_text(), int(peak_file.read_text()) * 1024


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="measures RSS in /proc")
def test_a_server_that_answers_huge_bodies_after_preflight(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    with hostile_server(Behaviour.HUGE) as base_url:
        code, output, peak = run_measuring_memory(
            base_url, tmp_path, "--quick", "--only", "AUTH", "--seed", "1", "--report-dir", reports
        )
    assert code == 1, output[-3000:]
    assert "Traceback" not in output
    assert "verdict: NOT CONFORMANT" in output
    for name in REPORT_FILES:
        assert (reports / name).is_file(), name
    # Each answer is ~60 MB; only the first 8 MiB of each is read.
    assert peak < 400 * 1024 * 1024, f"peak RSS {peak / 2**20:.0f} MiB"
    assert "response cut at 8 MiB" in (reports / "results.json").read_text()
