"""``run`` against servers that are down, silent, not HTTP, not this API, or that break mid-run.

Whatever the server does, ``run`` ends in bounded time with a clear message and the right exit
code, never a traceback or a hang.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from tests.engine.hostile import Behaviour, closed_port, hostile_server


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
    assert result.exit_code == 1, result.output
    assert_clean(result)
    assert "sent no response in time" in result.output
    # three read timeouts, then every other check is reported as not run at once
    assert elapsed < 90
