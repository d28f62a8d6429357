"""``payment-conformance run``: options, exit codes, what it prints and the reports it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.profile import load_profile


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
        (("--api-key", "mk_only_a_key"), "give both --api-key and --api-secret"),
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
    assert "verdict: CONFORMANT (1 requirements passed, 0 failed, 0 not exercised)" in result.output
    assert f"reports: {out}/" in result.output
    results = json.loads((out / "results.json").read_text())
    assert "AUTH-001" in json.dumps(results)
    assert (out / "summary.md").is_file() and (out / "manifest.json").is_file()


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


@pytest.mark.slow
def test_reports_that_cannot_be_written_still_show_the_verdict_and_exit_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = run(
        *("--only", "AUTH-001", "--quick", "--workers", "1", "--report-dir", str(blocker / "out"))
    )
    assert result.exit_code == 2, result.output
    assert "verdict: CONFORMANT" in result.output
    assert "error: cannot write the reports" in result.output
    assert "Traceback" not in result.output
