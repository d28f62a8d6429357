"""``payment-conformance run``: options, exit codes, what it prints and the reports it writes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.profile import load_profile
from tests.engine.hostile import Behaviour, closed_port, hostile_server
from tests.markers import BUDGET_STOP_NOISE


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["run", "--no-progress", *args], env=env)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--workers", "0"), "--workers"),
        (("--seed", "-1"), "--seed"),
        (("--max-examples", "0"), "--max-examples"),
        (("--no-such-option",), "No such option"),
        (("--profile", "no-such-profile"), "no profile named 'no-such-profile'"),
        (("--only", "NOPE"), "--only/--skip"),
        (
            ("--fault", "auth-nonce-not-checked", "--base-url", "http://x.test"),
            "cannot be combined",
        ),
        (("--fault", "no-such-fault"), "unknown fault"),
        (("--base-url", "localhost:8000"), "must start with http"),
        (("--max-duration", "0"), "--max-duration"),
        (("--server-rate-limit", "0"), "--server-rate-limit"),
        (("--server-rate-limit", "nan"), "--server-rate-limit"),
        (("--server-rate-limit", "5", "--base-url", "http://x.test"), "cannot be combined"),
    ],
)
def test_options_that_cannot_run_exit_2_with_a_message(args: tuple[str, ...], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_a_small_clean_run_exits_0_and_writes_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the caller's own pytest configuration and conftest.py must not leak into the run
    (tmp_path / "conftest.py").write_text("raise RuntimeError('user conftest loaded')\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --no-such-flag\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    result = run("--only", "AUTH-001", "--quick", "--seed", "5", "--report-dir", str(out))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("payment-conformance ")
    assert "· profile default · seed 5" in lines[0]
    assert lines[1].startswith("target: embedded reference server at http://127.0.0.1:")
    assert "preflight ✓ reachable ✓ signed request accepted ✓ fixtures present" in result.output
    # --workers auto: picked after preflight, at most 2 for the embedded server, and said why
    auto = re.search(
        r"^workers: ([12]) \(auto: (\d+ cores?, \d+ ms round trip)\)$", result.output, re.M
    )
    assert auto is not None, result.output
    assert (
        "verdict: CONFORMANT, 1 of 1 requirements exercised (1 passed, 0 failed, 0 not exercised;"
        in result.output
    )
    assert f"reports: {out}/" in result.output
    results = json.loads((out / "results.json").read_text())
    assert "AUTH-001" in json.dumps(results)
    assert results["options"]["workers"] == auto.group(1)
    assert results["options"]["workers_auto"] == auto.group(2)
    assert (out / "summary.md").is_file() and (out / "manifest.json").is_file()


@pytest.mark.slow
def test_a_partial_profile_that_extends_the_default_runs(tmp_path: Path) -> None:
    partial = tmp_path / "acme.toml"
    partial.write_text(
        'extends = "default"\n\n[status]\n'
        'unsupported_media_type = [{ status = 400, code = "validation_error" }]\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = run(
        *("--only", "AUTH-001,STATUS-021", "--quick", "--seed", "5", "--workers", "1"),
        *("--profile", str(partial), "--report-dir", str(out)),
    )
    assert result.exit_code == 0, result.output
    assert "· profile acme · seed 5" in result.output.splitlines()[0]
    assert "verdict: CONFORMANT, 2 of 2 requirements exercised" in result.output
    results = json.loads((out / "results.json").read_text())
    assert results["profile"]["name"] == "acme"


@pytest.mark.slow
def test_a_failing_run_exits_1_and_says_how_to_replay(tmp_path: Path) -> None:
    result = run(
        "--workers",
        "1",
        "--only",
        "AUTH-010",
        "--quick",
        "--seed",
        "9",
        "--fault",
        "auth-accepts-stale-timestamp",
        "--report-dir",
        str(tmp_path),
    )
    assert result.exit_code == 1, result.output
    assert "✗ AUTH-010 [your profile: fix the server or the profile]" in result.output
    assert (
        "replay: payment-conformance run --fault auth-accepts-stale-timestamp "
        "--only AUTH-010 --seed 9 --quick"
    ) in result.output
    assert "verdict: NOT CONFORMANT" in result.output


@pytest.mark.slow
def test_several_faults_are_all_applied_and_recorded(tmp_path: Path) -> None:
    """--fault is repeatable, as for serve: every fault given breaks its requirement, and the
    reports and the replay command name them all (not only the last)."""
    faults = ("auth-accepts-stale-timestamp", "auth-bad-signature-403")
    result = run(
        *("--workers", "1", "--only", "AUTH-010", "--only", "AUTH-013", "--quick"),
        *("--seed", "9", "--report-dir", str(tmp_path)),
        *("--fault", faults[0], "--fault", faults[1]),
    )
    assert result.exit_code == 1, result.output
    assert "✗ AUTH-010 " in result.output and "✗ AUTH-013 " in result.output
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert results["target"]["fault"] == ",".join(faults)
    assert f"--fault {faults[0]} --fault {faults[1]} " in results["rerun"]


@pytest.mark.slow
def test_the_api_secret_is_never_printed(tmp_path: Path) -> None:
    secret = load_profile().primary.api_secret
    env = {
        "PAYMENT_CONFORMANCE_API_KEY": "mk_test_alpha",
        "PAYMENT_CONFORMANCE_API_SECRET": secret,
    }
    result = run(
        *("--only", "AUTH-001", "--quick", "--workers", "1", "--report-dir", str(tmp_path)),
        env=env,
    )
    assert result.exit_code == 0, result.output
    assert secret not in result.output
    for path in tmp_path.iterdir():
        assert secret not in path.read_text(encoding="utf-8")


def test_the_default_report_directory_is_a_utc_timestamp() -> None:
    from conformance.cli.run import default_report_dir

    path = default_report_dir()
    assert path.parent == Path("reports")
    assert path.name.endswith("Z") and path.name[4] == "-" and "T" in path.name


@pytest.mark.parametrize("under", ["", "out", "out/deeper"])
def test_a_report_dir_that_cannot_be_written_is_refused_before_any_request(
    tmp_path: Path, under: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    report_dir = blocker / under if under else blocker
    started = time.monotonic()
    # a closed port: had the run started, preflight would have failed to connect
    result = run(
        *("--base-url", f"http://127.0.0.1:{closed_port()}", "--report-dir", str(report_dir))
    )
    assert result.exit_code == 2, result.output
    assert "error: " in result.output and str(blocker) in result.output
    assert "preflight" not in result.output and "cannot connect" not in result.output
    assert "Traceback" not in result.output
    assert time.monotonic() - started < 20


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_a_report_dir_the_system_refuses_is_refused_before_any_request() -> None:
    # /proc looks writable to root (os.access says yes), but nothing can be created in it
    started = time.monotonic()
    result = run(
        *("--base-url", f"http://127.0.0.1:{closed_port()}", "--report-dir", "/proc/forbidden")
    )
    assert result.exit_code == 2, result.output
    assert "error: cannot write the reports to /proc/forbidden: " in result.output
    assert "preflight" not in result.output and "cannot connect" not in result.output
    assert "Traceback" not in result.output
    assert time.monotonic() - started < 20


@pytest.mark.parametrize("only", ["", "   ", ",", " , "])
def test_an_empty_only_is_refused_not_read_as_everything(only: str) -> None:
    result = run("--only", only, "--base-url", f"http://127.0.0.1:{closed_port()}")
    assert result.exit_code == 2, result.output
    assert "error: --only: an empty selector selects nothing" in result.output
    assert "preflight" not in result.output and "Traceback" not in result.output


def test_an_empty_skip_is_refused_too() -> None:
    result = run("--skip", " ", "--base-url", f"http://127.0.0.1:{closed_port()}")
    assert result.exit_code == 2, result.output
    assert "error: --skip: an empty selector" in result.output


# -- credentials -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("--api-secret", "sk_only_a_secret"), {}),
        (("--api-key", "mk_only_a_key"), {}),
        ((), {"PAYMENT_CONFORMANCE_API_SECRET": "sk_only_a_secret"}),
        ((), {"PAYMENT_CONFORMANCE_API_KEY": "mk_only_a_key"}),
    ],
)
def test_a_key_or_a_secret_alone_is_accepted(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str]
) -> None:
    # accepted: the run goes on to preflight (which finds nothing listening)
    url = f"http://127.0.0.1:{closed_port()}"
    result = run(*args, "--base-url", url, "--report-dir", str(tmp_path), env=env)
    assert result.exit_code == 2, result.output
    assert "give both" not in result.output
    assert "preflight ✗ reachable" in result.output
    assert "sk_only_a_secret" not in result.output


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("--api-secret", "sk_test_wrong_secret_0123456789"), {}),
        ((), {"PAYMENT_CONFORMANCE_API_SECRET": "sk_test_wrong_secret_0123456789"}),
    ],
)
def test_a_secret_for_the_embedded_server_is_refused_before_it_starts(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str]
) -> None:
    # The embedded server would adopt it, so a wrong secret would pass: refused instead.
    started = time.monotonic()
    result = run(*args, "--quick", "--report-dir", str(tmp_path / "out"), env=env)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: --api-secret ")
    assert "--base-url" in result.output and "PAYMENT_CONFORMANCE_API_SECRET" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "sk_test_wrong_secret_0123456789" not in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()  # nothing ran
    assert time.monotonic() - started < 20


# -- runs that do not finish -----------------------------------------------------------------
@BUDGET_STOP_NOISE
@pytest.mark.slow
def test_a_run_that_outlasts_max_duration_writes_its_reports_and_exits_2(tmp_path: Path) -> None:
    started = time.monotonic()
    with hostile_server(Behaviour.PREFLIGHT_THEN_SILENT) as base_url:
        result = run(
            *("--base-url", base_url, "--only", "AUTH", "--quick", "--seed", "1"),
            *("--workers", "1", "--max-duration", "3", "--report-dir", str(tmp_path)),
        )
    elapsed = time.monotonic() - started
    assert result.exit_code == 2, result.output
    # three read timeouts (45 s and more) without the budget
    assert elapsed < 40, elapsed
    assert "verdict: INCOMPLETE" in result.output
    assert (
        "error: the run did not finish: the run's time budget (3 s) ran out; "
        f"the reports show what ran until then: {tmp_path}/"
    ) in result.output
    document = json.loads((tmp_path / "results.json").read_text())
    assert document["incomplete_reason"] == "the run's time budget (3 s) ran out"
    assert "Traceback" not in result.output


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "reason"),
    [
        (signal.SIGINT, "the run was interrupted (Ctrl-C)"),
        (signal.SIGTERM, "the run was stopped by SIGTERM"),
    ],
)
def test_a_run_stopped_by_a_signal_writes_partial_reports_and_exits_2(
    tmp_path: Path, signum: signal.Signals, reason: str
) -> None:
    reports = tmp_path / "reports"
    with hostile_server(Behaviour.PREFLIGHT_THEN_SILENT) as base_url:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "conformance", "run", "--no-progress"),
                *("--base-url", base_url, "--only", "AUTH", "--quick", "--workers", "1"),
                *("--report-dir", str(reports)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            # a test run started in the background inherits SIGINT ignored, and Python then
            # installs no Ctrl-C handler: give the run the terminal's default, as a user's has
            preexec_fn=_default_sigint,
        )
        try:
            assert process.stdout is not None
            lines = []
            for line in process.stdout:  # the server never answers: the run waits in a check
                lines.append(line)
                if line.startswith("running "):
                    break
            assert lines and lines[-1].startswith("running "), "".join(lines)
            process.send_signal(signum)
            rest, _ = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    output = "".join(lines) + rest
    assert process.returncode == 2, output
    assert "Traceback" not in output
    assert re.search(
        f"error: the run did not finish: {re.escape(reason)}; "
        f"the reports show what ran until then: {re.escape(str(reports))}/",
        output,
    ), output
    document = json.loads((reports / "results.json").read_text())
    assert document["incomplete_reason"] == reason and document["exit_code"] == 2


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_fail_fast_stops_at_the_first_failure_and_still_writes_every_report(
    tmp_path: Path, workers: str
) -> None:
    # With 2 workers pytest-xdist ends the session at --maxfail as an interruption: the
    # verdict is still the failure, exit 1, never "interrupted (Ctrl-C)" (issue 28).
    out = tmp_path / "out"
    result = run(
        *("--fail-fast", "--quick", "--workers", workers, "--seed", "1"),
        *("--fault", "shape-expires-at-not-date-time", "--report-dir", str(out)),
    )
    assert result.exit_code == 1, result.output
    assert "verdict: NOT CONFORMANT" in result.output
    assert "first failure after " in result.output
    results = json.loads((out / "results.json").read_text())
    assert results["exit_code"] == 1 and results["incomplete_reason"] is None
    assert 0 < results["first_failure_s"] <= results["duration_s"]
    assert results["rerun"].endswith("--fail-fast")
    stopped = [c for c in results["checks"] if c["check_id"] == "run: not reached"]
    assert stopped and stopped[0]["reason_not_exercised"] == (
        "the run stopped at its first failure (--fail-fast)"
    )
    # most of the quick run was never reached
    assert results["counts"]["requirements"]["not_exercised"] > 200
    for name in ("report.html", "junit.xml", "summary.md", "manifest.json"):
        assert (out / name).is_file()
    assert "first failure after" in (out / "summary.md").read_text()


def test_latency_is_for_the_embedded_server_only() -> None:
    result = run("--latency-ms", "50", "--base-url", "http://127.0.0.1:1")
    assert result.exit_code == 2
    assert "--latency-ms slows the embedded reference server down" in result.output


@pytest.mark.parametrize(
    ("value", "message"),
    [("0", "0 is not in the range 1 to 64"), ("many", "'many' is neither 'auto' nor a number")],
)
def test_workers_is_auto_or_a_number(value: str, message: str) -> None:
    result = run("--workers", value)
    assert result.exit_code == 2
    assert message in result.output


def test_auto_workers_suit_the_server() -> None:
    from conformance.engine.target import REMOTE_WORKERS, default_workers

    assert default_workers(None) == min(2, os.cpu_count() or 1)
    assert default_workers(None, 50) == REMOTE_WORKERS
    assert default_workers("https://staging.example.test") == REMOTE_WORKERS


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
