"""``run --waivers`` and ``--strict-waivers`` end to end: a malformed file stops the run before it
starts; against the reference server with a fault switched on, the fault's failure waived gives
CONFORMANT WITH 1 WAIVER and exit 0, and the same run without the waiver exits 1."""

from __future__ import annotations

import json
from datetime import datetime, tzinfo
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.engine import runner

FAULT = ("--fault", "auth-accepts-stale-timestamp")  # fails AUTH-010
SMALL = ("--only", "AUTH-010", "--quick", "--seed", "9", "--workers", "1")
LIVE = (
    '[[waiver]]\nrequirement = "AUTH-010"\n'
    'reason = "stale timestamps accepted until the clock service ships (TICKET-42)"\n'
    "expires = 2099-12-31\n"
)
STALE = '\n[[waiver]]\nrequirement = "AUTH-001"\nreason = "fixed in 2.1"\nexpires = 2099-12-31\n'


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def run(*args: str) -> Result:
    return cli("run", "--no-progress", *args)


def waivers(tmp_path: Path, text: str) -> str:
    path = tmp_path / "waivers.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[waiver]\n", "is not valid TOML"),
        (LIVE.replace("AUTH-010", "AUTH-999"), "unknown requirement id 'AUTH-999'"),
        (LIVE.replace("reason", "# reason"), "waiver 1: no reason"),
        (LIVE.replace("2099-12-31", '"12/31/2099"'), "expires must be a date written YYYY-MM-DD"),
        (LIVE + "\n" + LIVE, "waiver 2 repeats waiver 1 (AUTH-010)"),
    ],
)
def test_a_malformed_waivers_file_exits_2_before_anything_runs(
    tmp_path: Path, text: str, message: str
) -> None:
    out = tmp_path / "out"
    result = run(*FAULT, *SMALL, "--waivers", waivers(tmp_path, text), "--report-dir", str(out))
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert "preflight" not in result.output and not out.exists()


def test_a_missing_waivers_file_exits_2(tmp_path: Path) -> None:
    result = run("--waivers", str(tmp_path / "nope.toml"))
    assert result.exit_code == 2
    assert "error: cannot read the waivers file" in result.output


def test_fail_fast_is_refused_with_waivers(tmp_path: Path) -> None:
    # a waived failure would stop the run at once and leave a verdict resting on nothing
    result = run("--fail-fast", "--waivers", waivers(tmp_path, LIVE))
    assert result.exit_code == 2
    assert "error: --fail-fast stops at the first failing check, waived or not" in result.output


def test_strict_waivers_needs_a_waivers_file() -> None:
    result = run("--strict-waivers")
    assert result.exit_code == 2
    assert "error: --strict-waivers needs --waivers FILE" in result.output


@pytest.mark.slow
def test_a_waived_fault_is_conformant_with_1_waiver_and_the_same_run_without_it_fails(
    tmp_path: Path,
) -> None:
    out = tmp_path / "waived"
    file = waivers(tmp_path, LIVE + STALE)
    waived = run(*FAULT, *SMALL, "--waivers", file, "--report-dir", str(out))
    assert waived.exit_code == 0, waived.output
    assert "verdict: CONFORMANT WITH 1 WAIVER, 1 of 1 requirements exercised" in waived.output
    assert "0 failed, 1 waived, 0 not exercised" in waived.output
    assert "  AUTH-010 (expires 2099-12-31): applied: covered 3 failing checks" in waived.output
    assert "reason: stale timestamps accepted until the clock service ships" in waived.output
    assert "covered: AUTH-010: auth createPayment timestamp just outside" in waived.output
    assert "AUTH-001 (expires 2099-12-31): stale; covered nothing" in waived.output
    results = json.loads((out / "results.json").read_text())
    assert results["verdict"] == "CONFORMANT WITH 1 WAIVER"
    assert [r["outcome"] for r in results["requirements"]] == ["waived"]

    verified = cli("verify", "--allow-unsigned", str(out))
    assert verified.exit_code == 0, verified.output
    assert "verdict: CONFORMANT WITH 1 WAIVER" in verified.output
    assert f"waivers: {file} (sha256 {results['waivers']['sha256']}), 2 waiver(s), 1 used" in (
        verified.output
    )
    assert "  AUTH-010 (expires 2099-12-31): applied: stale timestamps accepted" in (
        verified.output
    )

    unwaived = run(*FAULT, *SMALL, "--report-dir", str(tmp_path / "unwaived"))
    assert unwaived.exit_code == 1, unwaived.output
    assert "verdict: NOT CONFORMANT" in unwaived.output


@pytest.mark.slow
def test_strict_waivers_fails_the_run_on_a_stale_waiver_with_the_reason(tmp_path: Path) -> None:
    file = waivers(tmp_path, LIVE + STALE)
    result = run(*FAULT, *SMALL, "--waivers", file, "--strict-waivers")
    assert result.exit_code == 1, result.output
    assert "verdict: CONFORMANT WITH 1 WAIVER" in result.output
    assert (
        "error: --strict-waivers: 1 stale waiver (AUTH-001: covered nothing: its requirement "
        "was not selected in this run)"
    ) in result.output


@pytest.mark.slow
def test_an_expired_waiver_lets_the_failure_count_and_says_it_expired(tmp_path: Path) -> None:
    file = waivers(tmp_path, LIVE.replace("2099-12-31", "2020-01-31"))
    result = run(*FAULT, *SMALL, "--waivers", file)
    assert result.exit_code == 1, result.output
    assert "verdict: NOT CONFORMANT" in result.output
    assert "AUTH-010 (expires 2020-01-31): expired; expired on 2020-01-31: the 3 failing" in (
        result.output
    )


class _July1st2030(datetime):
    """The clock of a run started on 2030-07-01 (UTC)."""

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> _July1st2030:
        return cls(2030, 7, 1, 0, 0, 5, tzinfo=tz)


@pytest.mark.slow
def test_today_is_the_day_the_run_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "datetime", _July1st2030)
    on_the_day = run(
        *FAULT, *SMALL, "--waivers", waivers(tmp_path, LIVE.replace("2099-12-31", "2030-07-01"))
    )
    assert on_the_day.exit_code == 0, on_the_day.output
    assert "verdict: CONFORMANT WITH 1 WAIVER" in on_the_day.output
    the_day_before = run(
        *FAULT, *SMALL, "--waivers", waivers(tmp_path, LIVE.replace("2099-12-31", "2030-06-30"))
    )
    assert the_day_before.exit_code == 1, the_day_before.output
    assert "AUTH-010 (expires 2030-06-30): expired" in the_day_before.output
