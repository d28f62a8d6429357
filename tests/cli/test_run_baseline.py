"""``run --baseline``: only a failure new since the baseline fails the run, every report shows
the comparison; and ``run`` appends summary.md to the GitHub step summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main

# AUTH-013 fails under the first fault, AUTH-016 under the second; each passes under the other.
SELECTION = ("--only", "AUTH-013,AUTH-016", "--quick", "--seed", "5", "--workers", "1")
FIRST_FAULT = "auth-bad-signature-403"
SECOND_FAULT = "auth-nonce-not-checked"


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["run", "--no-progress", *SELECTION, *args], env=env)


def verdict_line(result: Result) -> str:
    return next(line for line in result.output.splitlines() if line.startswith("verdict: "))


@pytest.mark.slow
def test_only_a_failure_new_since_the_baseline_fails_the_run(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline"
    first = run("--fault", FIRST_FAULT, "--report-dir", str(baseline))
    assert first.exit_code == 1, first.output

    # the same fault again: its failure is known, the run passes the gate but is not conformant
    summary_file = tmp_path / "github-step-summary.md"
    again = run(
        "--fault",
        FIRST_FAULT,
        "--baseline",
        str(baseline),
        "--report-dir",
        str(tmp_path / "again"),
        env={"GITHUB_STEP_SUMMARY": str(summary_file)},
    )
    assert again.exit_code == 0, again.output
    assert verdict_line(again).startswith(
        "verdict: NOT CONFORMANT (no new failures against the baseline), 2 of 2 requirements"
    )
    assert "unchanged failures: 1\n  AUTH-013\n" in again.output
    assert "gate: no new failures against the baseline" in again.output
    results = json.loads((tmp_path / "again" / "results.json").read_text(encoding="utf-8"))
    assert (results["verdict"], results["exit_code"]) == ("NOT CONFORMANT", 0)
    assert results["baseline"]["unchanged_failures"] == [{"id": "AUTH-013", "was": "failed"}]
    # the command repeating the run keeps the gate
    assert results["options"]["baseline"] == str(baseline)
    assert f"--baseline {baseline}" in results["rerun"]
    written = (tmp_path / "again" / "summary.md").read_text(encoding="utf-8")
    assert summary_file.read_text(encoding="utf-8") == written
    assert "### Against the baseline: ✅ no new failures against the baseline" in written
    assert "ctrf.json" in json.loads((tmp_path / "again" / "manifest.json").read_text())["files"]

    # another fault: AUTH-016 fails for the first time, and the run fails naming it
    other = run(
        "--fault",
        SECOND_FAULT,
        "--baseline",
        str(baseline / "results.json"),
        "--report-dir",
        str(tmp_path / "other"),
    )
    assert other.exit_code == 1, other.output
    assert verdict_line(other).startswith(
        "verdict: NOT CONFORMANT (1 new failure against the baseline), "
    )
    assert "newly failed: 1\n  AUTH-016 (was passed)\n" in other.output
    assert "newly passed: 1\n  AUTH-013 (was failed)\n" in other.output
    page = (tmp_path / "other" / "report.html").read_text(encoding="utf-8")
    assert '<a href="#req-AUTH-016" class="mono">AUTH-016</a> (was passed)' in page


@pytest.mark.parametrize(
    ("baseline", "message"),
    [
        ("missing.json", "--baseline: cannot read"),
        ("not-json.json", "is not JSON"),
    ],
)
def test_a_baseline_that_cannot_be_read_stops_the_run_before_it_starts(
    baseline: str, message: str, tmp_path: Path
) -> None:
    (tmp_path / "not-json.json").write_text("{", encoding="utf-8")
    result = run("--baseline", str(tmp_path / baseline), "--report-dir", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: --baseline: ")
    assert message in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_step_summary_that_cannot_be_written_is_a_warning_not_a_failure(
    tmp_path: Path,
) -> None:
    target = tmp_path / "no-such-dir" / "summary.md"
    result = run("--report-dir", str(tmp_path / "out"), env={"GITHUB_STEP_SUMMARY": str(target)})
    assert result.exit_code == 0, result.output
    assert (
        f"warning: cannot append summary.md to GITHUB_STEP_SUMMARY ({target}): "
        "No such file or directory"
    ) in result.output
