"""``payment-conformance serve`` and ``payment-conformance faults``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import httpx
from click.testing import CliRunner

from conformance.cli import main
from conformance.reference.faults import catalogue


def test_faults_lists_every_fault_with_category_and_requirements() -> None:
    result = CliRunner().invoke(main, ["faults"])
    assert result.exit_code == 0
    for fault in catalogue():
        assert fault.name in result.output
    assert f"{len(catalogue())} faults" in result.output


def test_faults_category_filter() -> None:
    result = CliRunner().invoke(main, ["faults", "--category", "auth"])
    assert result.exit_code == 0
    assert "auth-nonce-not-checked" in result.output
    assert "idem-scope-global" not in result.output
    bad = CliRunner().invoke(main, ["faults", "--category", "nonsense"])
    assert bad.exit_code == 2


def test_serve_rejects_an_unknown_fault_with_exit_2() -> None:
    result = CliRunner().invoke(main, ["serve", "--fault", "no-such-fault"])
    assert result.exit_code == 2
    assert "unknown fault no-such-fault" in result.output
    assert "Traceback" not in result.output


def test_serve_prints_url_and_key_ids_but_no_secret_and_stops_on_ctrl_c() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "conformance", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        lines = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            lines.append(line)
            if "Ctrl-C" in line:
                break
        output = "".join(lines)
        url = re.search(r"http://127\.0\.0\.1:[0-9]+", output)
        assert url is not None, output
        assert "mk_test_alpha" in output and "mk_test_beta" in output
        assert "sk_test" not in output
        assert httpx.get(url.group() + "/v1/payments").status_code == 401
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=15)
        assert process.returncode == 0
        assert "Traceback" not in rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
