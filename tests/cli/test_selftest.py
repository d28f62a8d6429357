"""``payment-conformance selftest``: options, exit codes, the matrix it prints and the JSON report.

Most tests replace the suite runs by stand-ins (``tests/engine/fake_runs.py``); one runs the
real suite on one fault, narrowed with ``--only`` to the requirement that catches it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.engine import selftest as engine
from tests.engine.fake_runs import fake_command

NONCE = "auth-nonce-not-checked"  # breaks AUTH-016
STALE = "auth-accepts-stale-timestamp"  # breaks AUTH-010, AUTH-011


def selftest(*args: str) -> Result:
    return CliRunner().invoke(main, ["selftest", "--no-progress", *args])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--category", "states"), "unknown category 'states': choose from auth, idempotency"),
        (("--fault", "auth-nonce-not-checkd"), "did you mean auth-nonce-not-checked"),
        (("--jobs", "0"), "--jobs must be at least 1"),
        (("--timeout", "0"), "--timeout must be positive"),
        (("--only", "NOPE"), "--only: unknown requirement selector 'NOPE'"),
        (("--jobs", "many"), "'many' is not a valid integer"),
    ],
)
def test_what_cannot_run_exits_2_with_a_message_and_no_traceback(
    args: tuple[str, ...], message: str
) -> None:
    result = selftest(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.fixture
def fake_runs(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    behaviours: dict[str, str] = {}
    monkeypatch.setattr(engine, "suite_command", fake_command(behaviours))
    return behaviours


def test_every_fault_caught_exits_0(fake_runs: dict[str, str]) -> None:
    fake_runs.update({NONCE: "fail:AUTH-016", STALE: "fail:AUTH-010,SHAPE-001"})
    result = selftest("--fault", f"{NONCE},{STALE}", "--seed", "4", "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert (
        "selftest: 3 runs (unfaulted + 2 faults: auth 2) · profile default · default mode · seed 4"
        in result.output
    )
    assert "AUTH-010 · also SHAPE-001" in result.output
    assert "auth         2/2" in result.output
    assert "selftest: PASSED (2 of 2 faults caught through the ids they name" in result.output


def test_a_survivor_exits_1_and_the_report_says_why(
    fake_runs: dict[str, str], tmp_path: Path
) -> None:
    fake_runs.update({STALE: "fail:SHAPE-001"})
    report = tmp_path / "out" / "matrix.json"
    result = selftest("--fault", NONCE, "--fault", STALE, "--quick", "--report", str(report))
    assert result.exit_code == 1, result.output
    assert "faults not caught through their own ids (2):" in result.output
    assert f"kill matrix: {report}" in result.output
    data = json.loads(report.read_text())
    assert data["quick"] is True and data["exit_code"] == 1
    statuses = {f["fault"]: f["status"] for f in data["faults"]}
    assert statuses == {NONCE: "survived", STALE: "caught-through-other-ids"}


def test_a_failing_unfaulted_run_exits_1(fake_runs: dict[str, str]) -> None:
    fake_runs.update({"(unfaulted)": "fail:SHAPE-001", NONCE: "fail:AUTH-016"})
    result = selftest("--fault", NONCE)
    assert result.exit_code == 1, result.output
    assert "unfaulted run: FAILED" in result.output
    assert "unfaulted run NOT conformant" in result.output


def test_the_command_is_listed_in_the_help() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert "selftest" in result.output


@pytest.mark.slow
def test_end_to_end_one_fault_is_caught_by_the_real_suite(tmp_path: Path) -> None:
    report = tmp_path / "matrix.json"
    result = selftest(
        "--quick",
        "--fault",
        NONCE,
        "--only",
        "AUTH-016",
        "--jobs",
        "2",
        "--seed",
        "1",
        "--report",
        str(report),
    )
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert data["unfaulted"]["status"] == "passed"
    (row,) = data["faults"]
    assert (row["fault"], row["status"], row["named_ids"]) == (NONCE, "caught", ["AUTH-016"])
    assert row["requests"] > 0 and row["suite_s"] < row["wall_s"]


def test_under_a_profile_without_a_replay_marker_the_missing_marker_fault_is_not_applicable(
    tmp_path: Path,
) -> None:
    result = selftest(
        "--profile",
        "divergent",
        "--fault",
        "idem-replay-missing-header",
        "--only",
        "AUTH-001",  # the unfaulted run: a short one, under the same profile
        "--quick",
        "--seed",
        "3",
        "--report",
        str(tmp_path / "m.json"),
    )
    assert result.exit_code == 0, result.output
    assert "not applicable: the profile declares a replay marker" in result.output
    assert "0 of 0 faults caught through the ids they name, 1 not applicable" in result.output
    report = json.loads((tmp_path / "m.json").read_text())
    assert report["profile"] == "divergent"
    assert report["unfaulted"]["status"] == "passed"
    assert report["faults"][0]["status"] == "not-applicable"
