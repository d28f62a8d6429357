"""Waivers: loading a file (and refusing a malformed one), which failures they waive, when they
have expired or covered nothing, and the verdict and exit code they give."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from conformance.core.catalogue import Layer, Requirement, Section
from conformance.core.results import (
    CheckResult,
    Outcome,
    RunResult,
    Target,
    Verdict,
    fold,
)
from conformance.core.waivers import (
    WaiverError,
    WaiverFile,
    WaiverState,
    apply_waivers,
    load_waivers,
)

SPEC_5 = Section("spec", "5", "Authentication")
REQUIREMENTS = [
    Requirement(rid, SPEC_5, Layer.CONTRACT, "MUST", f"{rid} text", ("createPayment",))
    for rid in ("AUTH-001", "AUTH-002", "AUTH-003", "AUTH-004")
]
IDS = {r.id for r in REQUIREMENTS}
OPERATIONS = {"createPayment", "getPayment"}
TODAY = date(2026, 11, 25)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "waivers.toml"
    path.write_text(text, encoding="utf-8")
    return path


def load(tmp_path: Path, text: str) -> WaiverFile:
    return load_waivers(write(tmp_path, text), IDS, OPERATIONS)


def entry(
    requirement: str = "AUTH-001",
    *,
    reason: str = "known: fixed in 2.4 (TICKET-1)",
    expires: str = "2026-12-31",
    operation: str | None = None,
    check: str | None = None,
) -> str:
    text = f'[[waiver]]\nrequirement = "{requirement}"\nreason = "{reason}"\nexpires = {expires}\n'
    if operation is not None:
        text += f'operation = "{operation}"\n'
    if check is not None:
        text += f'check = "{check}"\n'
    return text + "\n"


def check(
    check_id: str, outcome: Outcome, *ids: str, operation: str = "createPayment"
) -> CheckResult:
    return CheckResult(check_id, "auth", ids, outcome, operation_id=operation)


FAIL, PASS = Outcome.FAILED, Outcome.PASSED


def run_of(
    checks: list[CheckResult],
    waivers: str,
    tmp_path: Path,
    *,
    today: date = TODAY,
    strict: bool = False,
    incomplete: str | None = None,
) -> RunResult:
    folded, report = apply_waivers(
        fold(REQUIREMENTS, checks), load(tmp_path, waivers), today, strict=strict
    )
    return RunResult(
        suite_version="0.1.0",
        contract_sha256="c" * 64,
        profile_name="default",
        profile_sha256="p" * 64,
        seed=1,
        target=Target("http://127.0.0.1:1", embedded=True),
        started_at="2026-11-25T10:00:00Z",
        duration_s=1.0,
        requests_sent=3,
        requirements=folded,
        checks=tuple(checks),
        incomplete_reason=incomplete,
        waivers=report,
    )


def outcome(run: RunResult, rid: str) -> Outcome:
    return next(r.outcome for r in run.requirements if r.requirement.id == rid)


# -- loading ---------------------------------------------------------------------------------


def test_a_waivers_file_names_a_requirement_and_optionally_an_operation_and_a_check(
    tmp_path: Path,
) -> None:
    loaded = load(
        tmp_path,
        entry("AUTH-001")
        + entry("AUTH-002", operation="createPayment", check="missing key", expires='"2027-01-31"'),
    )
    first, second = loaded.waivers
    assert (first.requirement_id, first.operation_id, first.check_id) == ("AUTH-001", None, None)
    assert first.expires == date(2026, 12, 31)  # a TOML date
    assert second.expires == date(2027, 1, 31)  # or the same as a string
    assert second.label == "AUTH-002 check missing key on createPayment"
    assert len(loaded.sha256) == 64


def test_the_sha256_is_of_the_files_bytes(tmp_path: Path) -> None:
    import hashlib

    path = write(tmp_path, entry())
    assert load_waivers(path, IDS).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[waiver]\n", "is not valid TOML"),
        (entry("AUTH-999"), "waiver 1 (AUTH-999): unknown requirement id 'AUTH-999'"),
        (entry(operation="noSuchOperation"), "unknown operation id 'noSuchOperation'"),
        (entry(reason=""), "waiver 1 (AUTH-001): reason must be a non-empty string"),
        ('[[waiver]]\nrequirement = "AUTH-001"\nexpires = 2026-12-31\n', "waiver 1: no reason"),
        ('[[waiver]]\nrequirement = "AUTH-001"\nreason = "r"\n', "waiver 1: no expires"),
        ('[[waiver]]\nreason = "r"\nexpires = 2026-12-31\n', "waiver 1: no requirement"),
        (entry(expires='"31/12/2026"'), "expires must be a date written YYYY-MM-DD"),
        (entry(expires='"2026-13-01"'), "expires must be a date written YYYY-MM-DD"),
        (entry(expires="2026-12-31T10:00:00Z"), "expires must be a date written YYYY-MM-DD"),
        (entry(expires="20261231"), "expires must be a date written YYYY-MM-DD"),
        (entry() + entry(), "waiver 2 repeats waiver 1 (AUTH-001)"),
        (
            entry(operation="createPayment") + entry(operation="createPayment"),
            "waiver 2 repeats waiver 1 (AUTH-001 on createPayment)",
        ),
        (entry().replace("reason", "reasn"), "unknown key(s) reasn"),
        ('requirement = "AUTH-001"\n', "unknown top-level key(s) requirement"),
        ("waiver = 3\n", "must be [[waiver]] tables"),
    ],
)
def test_a_malformed_file_is_refused_with_what_is_wrong(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(WaiverError) as caught:
        load(tmp_path, text)
    assert message in str(caught.value)


def test_the_same_requirement_on_two_operations_is_two_entries_not_a_duplicate(
    tmp_path: Path,
) -> None:
    loaded = load(tmp_path, entry(operation="createPayment") + entry(operation="getPayment"))
    assert len(loaded.waivers) == 2


def test_a_missing_or_binary_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WaiverError, match=r"cannot read the waivers file .*missing\.toml"):
        load_waivers(tmp_path / "missing.toml", IDS)
    binary = tmp_path / "image.toml"
    binary.write_bytes(b"\x89PNG\xff\xfe")
    with pytest.raises(WaiverError, match="is not UTF-8 text"):
        load_waivers(binary, IDS)


def test_an_empty_file_has_no_waivers(tmp_path: Path) -> None:
    assert load(tmp_path, "").waivers == ()


# -- applying --------------------------------------------------------------------------------


def test_a_failure_a_live_waiver_names_is_waived_and_says_which_waiver(tmp_path: Path) -> None:
    run = run_of(
        [check("missing key", FAIL, "AUTH-001"), check("ok", PASS, "AUTH-002")],
        entry("AUTH-002") + entry("AUTH-001"),
        tmp_path,
    )
    waived = next(r for r in run.requirements if r.requirement.id == "AUTH-001")
    assert waived.outcome is Outcome.WAIVED
    assert waived.waived_by == (1,)  # the second entry of the file
    assert waived.failures  # the failing check itself is kept, as failed, with its evidence
    assert run.waivers is not None
    applied = run.waivers.results[1]
    assert applied.state is WaiverState.APPLIED
    assert applied.waived == ("AUTH-001",)
    assert [c.describe() for c in applied.covered] == ["AUTH-001: missing key on createPayment"]


def test_a_requirement_with_a_failure_no_waiver_names_stays_failed(tmp_path: Path) -> None:
    run = run_of(
        [
            check("missing key", FAIL, "AUTH-001", operation="createPayment"),
            check("missing key", FAIL, "AUTH-001", operation="getPayment"),
        ],
        entry(operation="createPayment"),
        tmp_path,
    )
    assert outcome(run, "AUTH-001") is Outcome.FAILED
    assert run.verdict is Verdict.NOT_CONFORMANT
    assert run.waivers is not None
    partial = run.waivers.results[0]
    assert partial.state is WaiverState.APPLIED and partial.waived == ()
    assert "failed all the same" in partial.note


def test_a_waiver_naming_a_check_waives_that_check_only(tmp_path: Path) -> None:
    checks = [check("missing key", FAIL, "AUTH-001"), check("bad signature", FAIL, "AUTH-001")]
    one = run_of(checks, entry(check="missing key"), tmp_path)
    assert outcome(one, "AUTH-001") is Outcome.FAILED
    both = run_of(checks, entry(check="missing key") + entry(check="bad signature"), tmp_path)
    assert outcome(both, "AUTH-001") is Outcome.WAIVED
    assert both.verdict_text == "CONFORMANT WITH 2 WAIVERS"


def test_a_check_failing_two_requirements_is_waived_for_the_one_named(tmp_path: Path) -> None:
    run = run_of([check("shared", FAIL, "AUTH-001", "AUTH-002")], entry("AUTH-001"), tmp_path)
    assert outcome(run, "AUTH-001") is Outcome.WAIVED
    assert outcome(run, "AUTH-002") is Outcome.FAILED


def test_an_expired_waiver_waives_nothing_and_says_it_expired(tmp_path: Path) -> None:
    run = run_of(
        [check("missing key", FAIL, "AUTH-001")],
        entry(expires="2026-11-24"),
        tmp_path,
        today=date(2026, 11, 25),
    )
    assert outcome(run, "AUTH-001") is Outcome.FAILED
    assert run.verdict is Verdict.NOT_CONFORMANT and run.exit_code == 1
    assert run.waivers is not None
    expired = run.waivers.results[0]
    assert expired.state is WaiverState.EXPIRED
    assert (
        expired.note == "expired on 2026-11-24: the 1 failing check(s) it names count as failures"
    )
    assert [c.check_id for c in expired.covered] == ["missing key"]
    assert expired.covered_label == "named, not waived"


def test_a_waiver_is_live_through_its_expiry_date(tmp_path: Path) -> None:
    run = run_of(
        [check("missing key", FAIL, "AUTH-001")],
        entry(expires="2026-11-25"),
        tmp_path,
        today=date(2026, 11, 25),
    )
    assert outcome(run, "AUTH-001") is Outcome.WAIVED


@pytest.mark.parametrize(
    ("checks", "note"),
    [
        ([check("ok", PASS, "AUTH-001")], "covered nothing: its requirement passed"),
        ([], "covered nothing: its requirement was not exercised"),
        (
            [check("missing key", FAIL, "AUTH-001", operation="getPayment")],
            "covered nothing: its requirement failed, but on no check and operation it names",
        ),
    ],
)
def test_a_waiver_that_covered_nothing_is_stale_and_says_why(
    tmp_path: Path, checks: list[CheckResult], note: str
) -> None:
    run = run_of(checks, entry(operation="createPayment"), tmp_path)
    assert run.waivers is not None
    stale = run.waivers.results[0]
    assert stale.state is WaiverState.STALE
    assert stale.note == note


def test_a_waiver_of_a_requirement_the_run_did_not_select_is_stale(tmp_path: Path) -> None:
    _, report = apply_waivers(fold(REQUIREMENTS[1:], []), load(tmp_path, entry("AUTH-001")), TODAY)
    assert report.results[0].state is WaiverState.STALE
    assert "not selected in this run" in report.results[0].note


# -- verdict and exit code -------------------------------------------------------------------


def test_every_failure_waived_reads_conformant_with_n_waivers_and_exits_0(tmp_path: Path) -> None:
    run = run_of(
        [check("missing key", FAIL, "AUTH-001"), check("ok", PASS, "AUTH-002")],
        entry(),
        tmp_path,
    )
    assert run.verdict is Verdict.CONFORMANT_WITH_WAIVERS
    assert run.verdict_text == "CONFORMANT WITH 1 WAIVER"
    assert run.verdict_summary == "CONFORMANT WITH 1 WAIVER, 2 of 4 requirements exercised"
    assert run.exit_code == 0


def test_a_waiver_that_waived_nothing_leaves_plain_conformant(tmp_path: Path) -> None:
    run = run_of([check("ok", PASS, "AUTH-001")], entry(), tmp_path)
    assert run.verdict_text == "CONFORMANT" and run.exit_code == 0


def test_strict_waivers_fails_the_run_on_a_stale_waiver_and_says_why(tmp_path: Path) -> None:
    checks = [check("missing key", FAIL, "AUTH-001"), check("ok", PASS, "AUTH-002")]
    lenient = run_of(checks, entry() + entry("AUTH-002"), tmp_path)
    assert lenient.exit_code == 0
    strict = run_of(checks, entry() + entry("AUTH-002"), tmp_path, strict=True)
    assert strict.exit_code == 1
    assert strict.verdict_text == "CONFORMANT WITH 1 WAIVER"  # what was found stays as it was
    assert strict.waivers is not None
    assert strict.waivers.strict_failure == (
        "--strict-waivers: 1 stale waiver (AUTH-002: covered nothing: its requirement passed)"
    )
    assert run_of(checks, entry(), tmp_path, strict=True).exit_code == 0


def test_waivers_never_hide_an_unfinished_run(tmp_path: Path) -> None:
    run = run_of(
        [check("missing key", FAIL, "AUTH-001")],
        entry(),
        tmp_path,
        incomplete="the server stopped answering",
    )
    assert run.verdict is Verdict.INCOMPLETE
    assert run.exit_code == 2


def test_only_waived_requirements_is_not_not_tested(tmp_path: Path) -> None:
    run = run_of([check("missing key", FAIL, "AUTH-001")], entry(), tmp_path)
    assert run.verdict_text == "CONFORMANT WITH 1 WAIVER"
    assert run.exercised == 1


def test_the_rerun_command_keeps_the_waivers_options(tmp_path: Path) -> None:
    run = run_of([], "", tmp_path)
    options = {"waivers": "ci/waivers.toml", "strict_waivers": "true"}
    rerun = RunResult(**{**run.__dict__, "options": options}).rerun_command()
    assert rerun.endswith("--waivers ci/waivers.toml --strict-waivers")
