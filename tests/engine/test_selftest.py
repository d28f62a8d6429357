"""The selftest engine: which runs it plans, how it judges a run, and that it never hangs.

Runs are stand-in subprocesses (``fake_runs``) that take milliseconds, so every behaviour of
the scheduler (parallel jobs, crashes, timeouts, interrupts) is shown in a few seconds.
"""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest
from rich.console import Console

from conformance.engine.selftest import (
    UNFAULTED_NAME,
    Matrix,
    NullObserver,
    RunOutcome,
    RunSpec,
    SelftestError,
    SelftestOptions,
    Status,
    judge,
    plan,
    run_selftest,
    select_faults,
    suite_command,
)
from conformance.engine.selftest_display import SelftestDisplay
from conformance.reference.faults import Fault, catalogue
from tests.engine.fake_runs import FAULTS, fake_command, fault

CANCEL, EXPIRE, NONCE = FAULTS


def options(**overrides: object) -> SelftestOptions:
    values: dict[str, object] = {"jobs": 2, "seed": 7, "timeout_s": 30.0, **overrides}
    return SelftestOptions(**values)  # type: ignore[arg-type]


def finished(*failed: str, code: int = 1) -> RunOutcome:
    outcomes = {i: "failed" for i in failed}
    return RunOutcome(code, 3.0, failed, suite_s=2.5, has_results=True, outcomes=outcomes)


# -- judging one run ---------------------------------------------------------------------------
def test_a_fault_is_caught_through_the_ids_it_names_and_the_others_are_kept_apart() -> None:
    row = judge(RunSpec(CANCEL, True, 1), finished("SHAPE-001", "PAY-STATE-001"))
    assert row.status is Status.CAUGHT and row.ok
    assert row.named == ("PAY-STATE-001",)
    assert row.other == ("SHAPE-001",)
    assert row.overhead_s == pytest.approx(0.5)


def test_a_fault_caught_only_through_ids_it_does_not_name_is_a_problem() -> None:
    row = judge(RunSpec(CANCEL, True, 1), finished("SHAPE-001"))
    assert row.status is Status.OTHER_IDS and not row.ok
    assert row.other == ("SHAPE-001",)


def test_a_surviving_fault_says_what_became_of_the_ids_it_names() -> None:
    outcome = RunOutcome(0, 3.0, (), has_results=True, outcomes={"PAY-STATE-001": "not_exercised"})
    row = judge(RunSpec(CANCEL, True, 1), outcome)
    assert row.status is Status.SURVIVED and not row.ok
    assert row.note == "PAY-STATE-001 not exercised"


def test_a_survivor_under_only_names_the_narrowing() -> None:
    row = judge(RunSpec(CANCEL, True, 1, only=("AUTH-016",)), finished(code=0))
    assert row.status is Status.SURVIVED
    assert row.note == "PAY-STATE-001 not selected by --only"


def test_the_unfaulted_run_passes_only_with_no_failure() -> None:
    assert judge(RunSpec(None, True, 1), finished(code=0)).status is Status.PASSED
    failing = judge(RunSpec(None, True, 1), finished("SHAPE-001"))
    assert failing.status is Status.FAILED and failing.other == ("SHAPE-001",)


def test_a_run_without_a_verdict_is_an_error_or_a_timeout_never_a_catch() -> None:
    crashed = RunOutcome(3, 1.0, message="exited 3 without results: RuntimeError: boom")
    assert judge(RunSpec(CANCEL, True, 1), crashed).status is Status.ERROR
    usage = RunOutcome(2, 1.0, ("PAY-STATE-001",), has_results=True)
    assert judge(RunSpec(CANCEL, True, 1), usage).status is Status.ERROR
    killed = RunOutcome(None, 300.0, message="killed after 300 s", timed_out=True)
    assert judge(RunSpec(CANCEL, True, 1), killed).status is Status.TIMEOUT


# -- planning ----------------------------------------------------------------------------------
def test_the_plan_runs_unfaulted_first_then_the_faults_grouped_by_category() -> None:
    seed, specs = plan(options(), FAULTS)
    assert seed == 7
    assert [s.name for s in specs] == [
        UNFAULTED_NAME,
        "auth-nonce-not-checked",
        "pay-cancel-after-paid",
        "pay-expire-twice",
    ]
    assert {s.seed for s in specs} == {7}


def test_categories_and_named_faults_add_up() -> None:
    chosen = select_faults(["auth"], ["pay-expire-twice"], FAULTS)
    assert [f.name for f in chosen] == ["auth-nonce-not-checked", "pay-expire-twice"]


def test_the_plan_covers_the_real_catalogue_by_default() -> None:
    _, specs = plan(options(seed=None))
    assert len(specs) == len(catalogue()) + 1
    assert len({s.seed for s in specs}) == 1


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"categories": ("states",)}, "unknown category 'states': choose from auth"),
        ({"faults": ("pay-cancel-after-pay",)}, "did you mean pay-cancel-after-paid"),
        ({"jobs": 0}, "--jobs must be at least 1"),
        ({"timeout_s": 0.0}, "--timeout must be positive"),
        ({"seed": -1}, "--seed must not be negative"),
        ({"only": ("NOPE",)}, "--only: unknown requirement selector 'NOPE'"),
    ],
)
def test_what_cannot_run_is_refused_before_any_run(
    overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(SelftestError, match=message.replace("(", r"\(")):
        plan(options(**overrides), FAULTS)


def test_each_run_is_a_one_worker_run_command() -> None:
    args = suite_command(RunSpec(NONCE, True, 5, ("AUTH",)), Path("/tmp/r"))
    assert args[1:] == [
        "-m",
        "conformance",
        "run",
        "--workers",
        "1",
        "--no-progress",
        "--seed",
        "5",
        "--report-dir",
        "/tmp/r",
        "--quick",
        "--fault",
        "auth-nonce-not-checked",
        "--only",
        "AUTH",
    ]
    assert "--fault" not in suite_command(RunSpec(None, False, 5), Path("/tmp/r"))


# -- running -----------------------------------------------------------------------------------
def run(behaviours: dict[str, str], **overrides: object) -> Matrix:
    return run_selftest(options(**overrides), command=fake_command(behaviours), faults=FAULTS)


def test_every_fault_caught_and_a_conformant_unfaulted_run_pass() -> None:
    matrix = run(
        {
            "pay-cancel-after-paid": "fail:PAY-STATE-001",
            "pay-expire-twice": "fail:PAY-STATE-002,SHAPE-001",
            "auth-nonce-not-checked": "fail:AUTH-016",
        }
    )
    assert [r.status for r in matrix.fault_rows] == [Status.CAUGHT] * 3
    assert matrix.unfaulted is not None and matrix.unfaulted.status is Status.PASSED
    assert matrix.exit_code == 0
    assert [(c.category, c.caught, c.total) for c in matrix.categories()] == [
        ("auth", 1, 1),
        ("state", 2, 2),
    ]


def test_a_survivor_a_crash_and_a_failing_unfaulted_run_each_fail_the_selftest() -> None:
    matrix = run(
        {
            UNFAULTED_NAME: "fail:SHAPE-001",
            "pay-cancel-after-paid": "crash",
            "pay-expire-twice": "usage",
            "auth-nonce-not-checked": "pass",
        }
    )
    by_name = {r.name: r for r in matrix.rows}
    assert by_name[UNFAULTED_NAME].status is Status.FAILED
    assert by_name["auth-nonce-not-checked"].status is Status.SURVIVED
    crashed = by_name["pay-cancel-after-paid"]
    assert crashed.status is Status.ERROR
    assert crashed.outcome.message == "exited 3 without results: RuntimeError: boom"
    assert "Traceback (most recent call last):" in crashed.outcome.log_tail
    usage = by_name["pay-expire-twice"]
    assert usage.status is Status.ERROR
    assert usage.outcome.message == (
        "could not run: error: the embedded reference server cannot start: port taken"
    )
    assert matrix.exit_code == 1
    assert matrix.problems[0].name == UNFAULTED_NAME


def test_runs_go_in_parallel_up_to_jobs() -> None:
    # every run waits until three runs are under way at once: only true with three jobs
    barrier = dict.fromkeys([UNFAULTED_NAME, *(f.name for f in FAULTS)], "barrier:3")
    matrix = run(barrier, jobs=3)
    assert [r.status for r in matrix.rows].count(Status.PASSED) == 1
    assert [r.status for r in matrix.fault_rows] == [Status.SURVIVED] * 3
    assert all(r.outcome.failed_ids == () for r in matrix.rows)


def test_a_hung_run_is_killed_at_its_timeout_and_reported(tmp_path: Path) -> None:
    started = time.monotonic()
    matrix = run({"pay-expire-twice": "hang"}, timeout_s=1.5, jobs=4)
    assert time.monotonic() - started < 15
    row = next(r for r in matrix.rows if r.name == "pay-expire-twice")
    assert row.status is Status.TIMEOUT
    assert row.outcome.message.startswith("killed after")
    assert row.outcome.message.endswith("its last line: no output")
    assert matrix.exit_code == 1


class InterruptOnceThreeRun(NullObserver):
    """Ctrl-C once three runs are under way (each has written its pid)."""

    def __init__(self, pids: Path) -> None:
        self.pids = pids
        self.starts = 0

    def started(self, spec: RunSpec) -> None:
        self.starts += 1
        if self.starts < 3:
            return
        deadline = time.monotonic() + 10
        while len(list(self.pids.glob("*.pid"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        raise KeyboardInterrupt


def test_an_interrupt_stops_every_child_and_keeps_what_finished(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()

    def command(spec: RunSpec, report_dir: Path) -> list[str]:
        # every run hangs; each leaves its pid where the test can see it
        args = fake_command({spec.name: "hang"})(spec, report_dir)
        args[3] = str(pids / spec.name)
        return args

    observer = InterruptOnceThreeRun(pids)
    started = time.monotonic()
    matrix = run_selftest(options(jobs=3), observer, command=command, faults=FAULTS)
    assert time.monotonic() - started < 15
    assert matrix.interrupted and matrix.exit_code == 130
    assert matrix.rows == []
    assert len(list(pids.glob("*.pid"))) == 3
    for pid_file in pids.glob("*.pid"):
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid_file.read_text()), 0)


def test_the_json_report_holds_the_matrix_grouped_by_category(tmp_path: Path) -> None:
    matrix = run({"pay-cancel-after-paid": "fail:PAY-STATE-001,SHAPE-001"})
    matrix.write_json(tmp_path / "matrix.json")
    report = json.loads((tmp_path / "matrix.json").read_text())
    assert report["schema"] == "payment-conformance-selftest/4"
    assert report["profile"] == "default"
    assert (report["quick"], report["seed"], report["jobs"], report["exit_code"]) == (
        False,
        7,
        2,
        1,
    )
    assert report["unfaulted"]["status"] == "passed"
    assert [(f["category"], f["fault"], f["status"]) for f in report["faults"]] == [
        ("auth", "auth-nonce-not-checked", "survived"),
        ("state", "pay-cancel-after-paid", "caught"),
        ("state", "pay-expire-twice", "survived"),
    ]
    caught = report["faults"][1]
    assert (caught["named_ids"], caught["other_ids"]) == (["PAY-STATE-001"], ["SHAPE-001"])
    assert report["categories"] == [
        {
            "category": "auth",
            "caught": 0,
            "total": 1,
            "not_applicable": 0,
            "run_s": report["categories"][0]["run_s"],
        },
        {
            "category": "state",
            "caught": 1,
            "total": 2,
            "not_applicable": 0,
            "run_s": report["categories"][1]["run_s"],
        },
    ]


# -- display -----------------------------------------------------------------------------------
def test_the_plain_display_streams_one_row_per_run_then_the_summary() -> None:
    output = io.StringIO()
    display = SelftestDisplay(Console(file=output, width=200), live=True)  # not a terminal
    matrix = run_selftest(
        options(jobs=1),
        display,
        command=fake_command(
            {
                "pay-cancel-after-paid": "fail:PAY-STATE-001,SHAPE-001",
                "pay-expire-twice": "fail:SHAPE-001",
            }
        ),
        faults=FAULTS,
    )
    lines = output.getvalue().splitlines()
    assert lines[0].startswith("selftest: 4 runs (unfaulted + 3 faults: auth 1, state 2)")
    rows = [line for line in lines if line[:4].strip().endswith("/4")]
    assert len(rows) == 4
    caught = next(line for line in rows if "pay-cancel-after-paid" in line)
    assert " caught " in caught and "state" in caught
    assert caught.endswith("PAY-STATE-001 · also SHAPE-001")
    other = next(line for line in rows if "pay-expire-twice" in line)
    assert "OTHER IDS" in other and other.endswith(
        "failed SHAPE-001 · not its own: PAY-STATE-002 passed"
    )
    survivor = next(line for line in rows if "auth-nonce-not-checked" in line)
    assert "SURVIVED" in survivor and survivor.endswith("its own: AUTH-016 passed")
    text = output.getvalue()
    assert "unfaulted run: passed" in text
    assert "faults not caught through their own ids (2):" in text
    assert "selftest: FAILED (1 of 3 faults caught through the ids they name" in text
    assert matrix.exit_code == 1


def test_within_a_category_the_catalogue_order_is_kept() -> None:
    extra = fault("pay-refund-twice", "state", "PAY-STATE-003")
    chosen = select_faults(["state"], [], (*FAULTS, extra))
    assert [f.name for f in chosen] == ["pay-cancel-after-paid", "pay-expire-twice", extra.name]


def test_fail_fast_and_latency_reach_every_faulted_run_and_the_unfaulted_run_runs_whole() -> None:
    _, specs = plan(options(fail_fast=True, latency_ms=50), FAULTS)
    unfaulted, faulted = suite_command(specs[0], Path("/r")), suite_command(specs[1], Path("/r"))
    assert "--fail-fast" in faulted and "--fail-fast" not in unfaulted
    for args in (faulted, unfaulted):
        assert args[args.index("--latency-ms") + 1] == "50"
    assert "--latency-ms" not in suite_command(plan(options(), FAULTS)[1][1], Path("/r"))


def test_a_server_rate_limit_reaches_every_run_faulted_or_not() -> None:
    _, specs = plan(options(server_rate_limit=25.0), FAULTS)
    for spec in specs:
        args = suite_command(spec, Path("/r"))
        assert args[args.index("--server-rate-limit") + 1] == "25"
    assert "--server-rate-limit" not in suite_command(plan(options(), FAULTS)[1][1], Path("/r"))


def test_the_header_names_the_server_s_latency_and_rate_limit() -> None:
    output = io.StringIO()
    display = SelftestDisplay(Console(file=output, width=300), live=True)
    run_selftest(
        options(jobs=1, quick=True, latency_ms=50, server_rate_limit=25.0),
        display,
        command=fake_command({}),
        faults=FAULTS,
    )
    assert (
        "· quick mode, server latency 50 ms, server rate limit 25 requests/s per API key · seed"
        in output.getvalue().splitlines()[0]
    )


def test_a_latency_out_of_range_is_refused_before_any_run() -> None:
    with pytest.raises(SelftestError, match="--latency-ms must be 0 to 10000"):
        plan(options(latency_ms=20_000), FAULTS)


def test_the_matrix_gives_the_median_time_to_the_first_failure_of_the_caught_faults(
    tmp_path: Path,
) -> None:
    matrix = run({f.name: "fail:" + ",".join(f.breaks) for f in FAULTS})
    assert matrix.median_first_failure_s == 0.02  # the fake runs' first failure
    matrix.write_json(tmp_path / "matrix.json")
    report = json.loads((tmp_path / "matrix.json").read_text())
    assert report["median_first_failure_s"] == 0.02
    assert {f["first_failure_s"] for f in report["faults"]} == {0.02}
    assert run({}).median_first_failure_s is None  # nothing caught: no first failure


def test_under_fail_fast_a_first_failure_through_other_ids_is_a_catch() -> None:
    spec = RunSpec(NONCE, False, 1, fail_fast=True)
    row = judge(spec, finished("PAY-STATE-001"))
    assert row.status is Status.CAUGHT and row.other == ("PAY-STATE-001",)
    assert "stopped at its first failure (--fail-fast) before AUTH-016" in row.note
    assert judge(RunSpec(NONCE, False, 1), finished("PAY-STATE-001")).status is Status.OTHER_IDS


# -- profiles and the needs of faults -----------------------------------------------------------
NEEDS_MARKER = Fault(
    "replay-unmarked", "idempotency", "the replay bug", ("IDEM-008",), "t.yaml", ("replay-header",)
)


def test_every_run_is_a_run_of_the_selftest_s_profile() -> None:
    args = suite_command(RunSpec(NONCE, True, 5, profile="divergent"), Path("/tmp/r"))
    assert args[args.index("--profile") + 1] == "divergent"
    assert "--profile" not in suite_command(RunSpec(NONCE, True, 5), Path("/tmp/r"))


def test_an_unknown_profile_is_refused_before_any_run() -> None:
    with pytest.raises(SelftestError, match="--profile"):
        plan(options(profile="no-such-profile"), FAULTS)


def test_a_fault_whose_needs_the_profile_does_not_meet_is_not_applicable(tmp_path: Path) -> None:
    faults = (*FAULTS, NEEDS_MARKER)
    ran: list[str] = []
    command = fake_command({})

    def recording(spec: RunSpec, report_dir: Path) -> list[str]:
        ran.append(spec.name)
        return command(spec, report_dir)

    behaviours = {f.name: f"fail:{f.breaks[0]}" for f in FAULTS}
    matrix = run_selftest(
        options(profile="divergent"), command=fake_command(behaviours), faults=faults
    )
    row = next(r for r in matrix.rows if r.name == "replay-unmarked")
    assert row.status is Status.NOT_APPLICABLE and row.ok
    assert row.note.startswith("not applicable: the profile declares a replay marker")
    assert matrix.exit_code == 0
    assert [(c.category, c.caught, c.total, c.not_applicable) for c in matrix.categories()][1] == (
        "idempotency",
        0,
        0,
        1,
    )
    run_selftest(options(profile="divergent"), command=recording, faults=faults)
    assert "replay-unmarked" not in ran and UNFAULTED_NAME in ran
    under_default = run_selftest(options(), command=fake_command({}), faults=(NEEDS_MARKER,))
    assert under_default.fault_rows[0].status is Status.SURVIVED  # run, and its bug not seen
    matrix.write_json(tmp_path / "m.json")
    report = json.loads((tmp_path / "m.json").read_text())
    assert report["profile"] == "divergent"
    shown = next(f for f in report["faults"] if f["fault"] == "replay-unmarked")
    assert (shown["status"], shown["needs"]) == ("not-applicable", ["replay-header"])
    output = io.StringIO()
    SelftestDisplay(Console(file=output, width=200), live=False).end(matrix)
    assert "1 not applicable (profile divergent)" in output.getvalue()
