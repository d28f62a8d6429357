"""``payment-conformance diff OLD NEW``: each list, text and Markdown, and the exit codes (1 on
a new failure, 0 otherwise, 2 when a file cannot be used)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.results import RunResult
from conformance.reporting import write_reports
from tests.reporting.runs import FAILED, PASSED, SKIPPED, check, make_run

OLD = [
    check("a", PASSED, "OPS-001"),
    check("b", FAILED, "OPS-002", message="bad body"),
    check("c", FAILED, "AUTH-001"),
    check("d", SKIPPED, "ERR-001", reason="off"),
    check("e", PASSED, "IDEM-004"),
]


def diff(*args: str) -> Result:
    return CliRunner().invoke(main, ["diff", *args], prog_name="payment-conformance")


def write(run: RunResult, directory: Path) -> Path:
    write_reports(run, directory)
    return directory


@pytest.fixture
def old(tmp_path: Path) -> Path:
    return write(make_run(OLD), tmp_path / "old")


@pytest.fixture
def regressed(tmp_path: Path) -> Path:
    """OPS-001 now fails, OPS-002 still fails, AUTH-001 and ERR-001 now pass, IDEM-004 was not
    reached."""
    return write(
        make_run(
            [
                check("a", FAILED, "OPS-001", message="now broken"),
                check("b", FAILED, "OPS-002", message="bad body"),
                check("c", PASSED, "AUTH-001"),
                check("d", PASSED, "ERR-001"),
                check("e", SKIPPED, "IDEM-004", reason="off"),
            ]
        ),
        tmp_path / "new",
    )


def test_a_new_failure_exits_1_and_every_list_is_printed(old: Path, regressed: Path) -> None:
    result = diff(str(old), str(regressed))
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[1:] == [
        "newly failed: 1",
        "  OPS-001 (was passed)",
        "newly passed: 2",
        "  AUTH-001 (was failed)",
        "  ERR-001 (was not exercised)",
        "newly not exercised: 1",
        "  IDEM-004 (was passed)",
        "unchanged failures: 1",
        "  OPS-002",
        "gate: 1 new failure against the baseline",
    ]
    assert result.output.startswith(f"{regressed} (NOT CONFORMANT, started ")
    assert f"against the baseline {old} (NOT CONFORMANT, started " in result.output


def test_failures_already_in_the_old_run_exit_0(old: Path, tmp_path: Path) -> None:
    same = write(make_run([check("b", FAILED, "OPS-002")]), tmp_path / "same")
    result = diff(str(old / "results.json"), str(same / "results.json"))
    assert result.exit_code == 0, result.output
    assert "unchanged failures: 1\n  OPS-002\n" in result.output
    assert result.output.endswith("gate: no new failures against the baseline\n")


def test_fixing_everything_exits_0(old: Path, tmp_path: Path) -> None:
    fixed = write(make_run([check("a", PASSED, "OPS-001", "OPS-002")]), tmp_path / "fixed")
    result = diff(str(old), str(fixed))
    assert result.exit_code == 0, result.output
    assert "newly passed: 1\n  OPS-002 (was failed)\n" in result.output


def test_markdown_is_for_a_pull_request_comment(old: Path, regressed: Path) -> None:
    result = diff(str(old), str(regressed), "--format", "markdown")
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0] == "## payment-conformance diff: ❌ 1 new failure against the baseline"
    assert f"baseline: `{old}` (NOT CONFORMANT, started 2026-11-22T10:04:11Z)" in lines
    assert f"now: `{regressed}` (NOT CONFORMANT, started 2026-11-22T10:04:11Z)" in lines
    assert "1 newly failed, 2 newly passed, 1 newly not exercised, 1 unchanged failures." in lines
    text = result.output
    assert "**Newly failed (1)**\n\n- `OPS-001` (was passed)\n" in text
    assert "**Newly not exercised (1)**\n\n- `IDEM-004` (was passed)\n" in text
    assert "**Unchanged failures (1)**\n\n- `OPS-002`\n" in text


def test_another_profile_or_contract_is_compared_with_a_warning_line(
    old: Path, tmp_path: Path
) -> None:
    other = write(make_run(OLD, profile_name="strict"), tmp_path / "other")
    result = diff(str(old), str(other))
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        "warning: the runs used different profiles (default sha256 a1b2ffffffff in the "
        "baseline, strict sha256 a1b2ffffffff now)"
    ]
    markdown = diff(str(old), str(other), "--format", "markdown").output
    assert "**Warning**: the runs used different profiles" in markdown


def _edited(directory: Path, **changes: object) -> Path:
    path = directory / "results.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**document, **changes}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("make_bad", "message"),
    [
        (lambda d: d / "missing.json", "cannot read"),
        (lambda d: d / "empty-dir", "cannot read"),
        (lambda d: _edited(d, schema_version="2.0"), "schema version 2.0"),
        (lambda d: d / "summary.md", "is not JSON"),
        (lambda d: d / "manifest.json", "not a valid results.json"),
    ],
    ids=["missing", "directory-without-results", "major-2", "markdown", "manifest"],
)
def test_a_file_that_cannot_be_used_exits_2_with_one_line(
    make_bad: Callable[[Path], Path], message: str, old: Path, tmp_path: Path
) -> None:
    new = write(make_run(OLD), tmp_path / "bad")
    (new / "empty-dir").mkdir()
    bad = make_bad(new)
    for args in ((str(old), str(bad)), (str(bad), str(old))):
        result = diff(*args)
        assert result.exit_code == 2, result.output
        assert result.output.startswith("error: ")
        assert message in result.output
        assert len(result.output.splitlines()) == 1
        assert "Traceback" not in result.output


def test_a_wrong_format_is_a_usage_error(old: Path) -> None:
    result = diff(str(old), str(old), "--format", "html")
    assert result.exit_code == 2
    assert "Invalid value for '--format'" in result.output


def test_help_lists_the_exit_codes() -> None:
    result = CliRunner().invoke(main, ["diff", "--help"])
    assert "0    no requirement failed in NEW that did not fail in OLD" in result.output
    assert "1    at least one new failure" in result.output
    assert "2    a file could not be read" in result.output
