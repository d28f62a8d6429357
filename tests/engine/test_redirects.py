"""``run`` against a server that redirects every request to another host.

No HTTP stack of the run follows a redirect: a ``307`` is the server's answer, judged like any
other (the contract documents none), and the other host never sees the signed requests.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance.cli import main
from tests.engine.redirecting import counting_server, redirecting_server


@pytest.mark.slow
def test_a_server_redirecting_every_request_to_another_host_sends_it_none(
    tmp_path: Path,
) -> None:
    with counting_server() as (other_host, seen), redirecting_server(other_host) as hostile:
        result = CliRunner().invoke(
            main,
            [
                *("run", "--base-url", hostile, "--quick", "--seed", "1", "--workers", "1"),
                *("--no-progress", "--report-dir", str(tmp_path)),
            ],
        )
    assert seen.requests == []  # before: 392 requests, 273 of them POSTs with their bodies
    assert result.exit_code == 1, result.output
    assert "verdict: NOT CONFORMANT" in result.output
    assert "-> 307" in result.output  # failures name the redirect they got
    requirements = json.loads((tmp_path / "results.json").read_text())["requirements"]
    outcomes = {r["id"]: r["outcome"] for r in requirements}
    # before: it passed on the other host's answers
    assert outcomes["SHAPE-001"] != "passed"
