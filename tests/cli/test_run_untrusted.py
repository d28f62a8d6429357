"""``run`` prints server text as text and never prints the password of ``--base-url``.

A server's answer reaches the error messages (a Content-Type, a transport error); escape
sequences in it must be shown escaped, not obeyed by the terminal. A ``--base-url`` of the
form ``http://user:password@host`` must show its password nowhere: console, reports, manifest.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.profile import load_profile
from conformance.reference.server import ReferenceServer
from tests.engine.hostile import Behaviour, canned, hostile_server

PASSWORD = "s3cr3tpass"
# no ";": the Content-Type shown is what stands before its parameters
ESCAPES = "\x1b[2J\x1b[31mpwned\x07"
SHOWN = "\\x1b[2J\\x1b[31mpwned\\x07"


def run(base_url: str, *args: str) -> Result:
    return CliRunner().invoke(
        main, ["run", "--base-url", base_url, "--no-progress", "--workers", "1", *args]
    )


def with_password(base_url: str) -> str:
    return base_url.replace("http://", f"http://user:{PASSWORD}@", 1)


def test_escape_sequences_in_a_server_answer_are_printed_escaped(tmp_path: Path) -> None:
    answer = canned("200 OK", b"<html></html>", content_type=f"text/{ESCAPES}html")
    with hostile_server(Behaviour.CANNED, answer) as base_url:
        result = run(base_url, "--report-dir", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert "error: preflight failed (signed request accepted)" in result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert f"text/{SHOWN}html" in result.output


def test_workflow_commands_in_a_server_answer_reach_no_ci_runner(tmp_path: Path) -> None:
    # GitHub Actions obeys "##[add-mask]" anywhere in a line of a step's output
    answer = canned("200 OK", b"<html></html>", content_type="text/##[add-mask]html")
    with hostile_server(Behaviour.CANNED, answer) as base_url:
        result = run(base_url, "--report-dir", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert "##[" not in result.output
    assert "text/#\\x23[add-mask]html" in result.output


def test_the_password_of_the_base_url_is_not_in_a_transport_error(tmp_path: Path) -> None:
    with hostile_server(Behaviour.CLOSE) as base_url:
        result = run(with_password(base_url), "--report-dir", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert "closed the connection" in result.output
    assert PASSWORD not in result.output
    assert "user:[redacted]@127.0.0.1" in result.output


@pytest.mark.slow
def test_the_password_of_the_base_url_is_in_no_output_and_no_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with ReferenceServer(profile=load_profile("default")) as server:
        result = run(
            with_password(server.base_url),
            "--quick",
            "--only",
            "AUTH-001",
            "--report-dir",
            str(out),
        )
    assert result.exit_code == 0, result.output
    assert PASSWORD not in result.output
    assert "target: http://user:[redacted]@127.0.0.1:" in result.output
    written = sorted(out.iterdir())
    assert {p.name for p in written} >= {"report.html", "results.json", "manifest.json"}
    for path in written:
        assert PASSWORD.encode() not in path.read_bytes(), path.name
    assert "user:[redacted]@127.0.0.1" in (out / "results.json").read_text(encoding="utf-8")
