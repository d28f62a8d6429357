"""The validator benchmark generates its recording, validates it and prints the figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.validate import main


def test_benchmark_validates_a_generated_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = tmp_path / "traffic.jsonl"
    # the rate is the machine's: only the 5,000/s run of the closing note judges it
    assert main(["--exchanges", "1000", "--min-rate", "0", "--keep", str(kept)]) == 0
    output = capsys.readouterr().out
    figures = dict(line.split(":", 1) for line in output.splitlines())
    assert figures["exchanges"].split()[0] == "1,000"
    assert "exchanges/s" in figures["throughput"]
    assert figures["peak RSS"].strip().endswith("MiB)")
    assert figures["verdict"].strip().startswith("CONFORMANT, ")
    lines = kept.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1000
    nonces = [
        value
        for line in lines
        for name, value in json.loads(line)["request"]["headers"]
        if name.lower() == "x-nonce"
    ]
    assert len(set(nonces)) == len(nonces)  # every copy signed with its own nonce


def test_bad_arguments_exit_2() -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--exchanges", "0"])
    assert caught.value.code == 2
