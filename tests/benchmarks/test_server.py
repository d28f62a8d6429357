"""The server benchmark runs end to end and prints its table."""

from __future__ import annotations

import pytest

from benchmarks.server import main


def test_benchmark_prints_both_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--duration", "0.3", "--clients", "1"]) == 0
    output = capsys.readouterr().out
    lines = output.splitlines()
    assert lines[1].split()[:4] == ["scenario", "requests", "errors", "req/s"]
    for name in ("GET", "create"):
        row = next(line for line in lines if line.startswith(name))
        requests, errors = row.split()[1:3]
        assert int(requests) > 0
        assert errors == "0"


def test_bad_arguments_exit_2() -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--duration", "0"])
    assert caught.value.code == 2
