"""``payment-conformance run`` stopped by a signal cleans up as Ctrl-C does."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.processes import CommandProcess, leftovers

# When the signal comes: while the embedded server starts and preflight runs, or once the
# checks run (pytest, two worker processes).
MOMENTS: dict[str, Callable[[str], bool]] = {
    "during-preflight": lambda line: line.startswith("target:"),
    "during-the-checks": lambda line: line.startswith("running"),
}


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_sigterm_stops_the_run_and_removes_every_temporary_file(
    tmp_path: Path, moment: str
) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    args = ["run", "--quick", "--no-progress", "--seed", "1", "--workers", "2"]
    args += ["--report-dir", str(tmp_path / "reports")]
    with CommandProcess(args, tmpdir=tmpdir) as proc:
        proc.wait_for_line(MOMENTS[moment])
        proc.send_signal(signal.SIGTERM)
        assert proc.wait() == 2, proc.describe()
    assert "Traceback" not in proc.stderr, proc.stderr
    assert leftovers(tmpdir) == []
