"""run_suite: runs the suite in-process and folds its checks into a RunResult."""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance import __version__
from conformance.core.catalogue import load_catalogue
from conformance.core.contract import document_sha256
from conformance.core.evidence import check_to_dict
from conformance.core.profile import load_profile
from conformance.core.results import CheckResult, Outcome, Target, Verdict, budget_reason, fold
from conformance.engine.collector import ResultCollector, phase_of, server_gone
from conformance.engine.options import RunError, RunOptions, _recorded_options, check_report_dir
from conformance.engine.preflight import PreflightReport, PreflightStep
from conformance.engine.progress import NullDisplay
from conformance.engine.runner import _profile, execute, run_suite
from conformance.engine.session import (
    INTERRUPTED_REASON,
    TERMINATED_REASON,
    _check_exit,
    pytest_args,
)
from conformance.engine.target import _auto_workers, _credentials_env
from conformance.suite.plugin.collection import SUITE_DIR, UNMARKED_MESSAGE
from conformance.suite.wire.check_properties import (
    CHECK_PROPERTY,
    FAMILY_PROPERTY,
    REQUESTS_PROPERTY,
)
from tests.engine.hostile import Behaviour, closed_port, hostile_server
from tests.markers import BUDGET_STOP_NOISE


# -- real runs against the embedded reference server -----------------------------------------
@pytest.mark.slow
def test_a_clean_run_passes_what_it_selects_and_writes_reports(tmp_path: Path) -> None:
    options = RunOptions(seed=42, only=("AUTH-001",), quick=True, report_dir=tmp_path / "out")
    finished = execute(options, NullDisplay())
    result = finished.result
    assert [r.requirement.id for r in result.requirements] == ["AUTH-001"]
    assert result.requirements[0].outcome is Outcome.PASSED
    assert result.exit_code == 0
    assert result.seed == 42
    assert result.suite_version == __version__
    assert result.contract_sha256 == document_sha256()
    assert result.profile_name == "default"
    assert result.profile_sha256 == load_profile().sha256
    assert result.target.embedded and result.target.base_url.startswith("http://127.0.0.1:")
    assert result.requests_sent > 0
    assert result.started_at.endswith("Z")
    assert result.options["quick"] == "true" and result.options["only"] == "AUTH-001"
    assert all(c.family for c in result.checks)
    assert {p.name for p in finished.report_paths} >= {"report.html", "junit.xml", "results.json"}
    assert all(p.is_file() for p in finished.report_paths)
    assert finished.preflight is not None and finished.preflight.ok


@pytest.mark.slow
def test_a_reference_fault_is_reported_against_the_requirement_it_breaks() -> None:
    result = run_suite(
        RunOptions(
            seed=7, only=("AUTH-010",), quick=True, embedded_fault="auth-accepts-stale-timestamp"
        )
    )
    (requirement,) = result.requirements
    assert requirement.requirement.id == "AUTH-010"
    assert requirement.outcome is Outcome.FAILED
    failure = requirement.failures[0]
    assert failure.message
    assert failure.evidence is not None and failure.evidence.status is not None
    assert result.target.fault == "auth-accepts-stale-timestamp"
    assert result.exit_code == 1


# -- runs that cannot happen -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (RunOptions(base_url="http://x.test", embedded_fault="f"), "cannot be combined"),
        (RunOptions(base_url="x.test"), "must start with http"),
        (RunOptions(profile="no-such-profile"), "--profile: no profile named"),
        (RunOptions(only=("NOPE",)), "--only/--skip"),
        (RunOptions(only=("AUTH",), skip=("AUTH",)), "leave no requirement"),
        (RunOptions(workers=0), "--workers must be at least 1"),
        (RunOptions(max_duration_s=0), "--max-duration must be positive"),
        (RunOptions(embedded_fault="no-such-fault"), "unknown fault no-such-fault"),
        (RunOptions(families=("auth", "nope")), "no check family nope; the families are auth, "),
    ],
)
def test_options_that_cannot_run_raise_run_error(options: RunOptions, message: str) -> None:
    with pytest.raises(RunError, match=message):
        run_suite(options)


# -- how pytest is invoked -------------------------------------------------------------------
def test_pytest_arguments(tmp_path: Path) -> None:
    options = RunOptions(
        only=("AUTH", "spec 5"),
        skip=("AUTH-002",),
        families=("auth", "schema"),
        workers=3,
        quick=True,
        max_examples=4,
        api_key="mk_key",
        api_secret="sk_secret",
    )
    target = Target("http://127.0.0.1:5000", embedded=True, fault="some-fault")
    args = pytest_args(options, target, 11, tmp_path / "pytest.ini")
    joined = " ".join(args)
    assert args[0] == str(SUITE_DIR)
    for expected in (
        "-n 3",
        "--only AUTH --only spec 5",
        "--skip AUTH-002",
        "--conformance-family auth --conformance-family schema",
        "--conformance-seed 11",
        "--max-examples 4",
        "--quick",
        "--embedded-url http://127.0.0.1:5000",
        "--embedded-fault some-fault",
        "-p no:cacheprovider",
    ):
        assert expected in joined
    assert "sk_secret" not in joined and "mk_key" not in joined
    assert "-n" not in pytest_args(RunOptions(), target, 11, tmp_path / "pytest.ini")


def test_tls_paths_go_in_argv_and_gateway_headers_do_not(tmp_path: Path) -> None:
    options = RunOptions(
        base_url="https://api.test",
        cacert=Path("ca.pem"),
        client_cert=Path("/certs/client.pem"),
        client_key=Path("/certs/client.key"),
        headers=(("X-Gateway-Key", "gwk-secret-value"),),
    )
    args = pytest_args(
        options, Target("https://api.test", embedded=False), 1, tmp_path / "pytest.ini"
    )
    joined = " ".join(args)
    assert f"--cacert {Path('ca.pem').absolute()}" in joined  # the workers' cwd may differ
    assert "--client-cert /certs/client.pem --client-key /certs/client.key" in joined
    assert "gwk-secret-value" not in joined and "X-Gateway-Key" not in joined
    assert pytest_args(
        RunOptions(insecure=True),
        Target("https://api.test", embedded=False),
        1,
        tmp_path / "pytest.ini",
    )[-1:] == ["--insecure"]


def test_recorded_options_name_the_tls_options_and_the_headers_without_values() -> None:
    options = RunOptions(
        base_url="https://api.test",
        insecure=True,
        headers=(("X-Gateway-Key", "gwk-secret-value"), ("X-Tenant", "t1")),
    )
    recorded = _recorded_options(options, load_profile())
    assert recorded["insecure"] == "true"
    assert recorded["headers"] == "X-Gateway-Key,X-Tenant"
    assert "gwk-secret-value" not in json.dumps(recorded)
    assert "insecure" not in _recorded_options(RunOptions(), load_profile())


def test_bad_tls_files_and_headers_stop_the_run_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"--cacert .*: no such file"):
        execute(RunOptions(cacert=tmp_path / "none.pem"), NullDisplay())
    with pytest.raises(RunError, match="the API or HTTP itself uses this header"):
        execute(RunOptions(headers=(("Content-Type", "text/plain"),)), NullDisplay())


def test_credentials_travel_in_the_environment_only_during_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PAYMENT_CONFORMANCE_API_KEY", "outer")
    monkeypatch.delenv("PAYMENT_CONFORMANCE_API_SECRET", raising=False)
    with _credentials_env(RunOptions(api_key="mk_inner", api_secret="sk_inner")):
        assert os.environ["PAYMENT_CONFORMANCE_API_KEY"] == "mk_inner"
        assert os.environ["PAYMENT_CONFORMANCE_API_SECRET"] == "sk_inner"
    assert os.environ["PAYMENT_CONFORMANCE_API_KEY"] == "outer"
    assert "PAYMENT_CONFORMANCE_API_SECRET" not in os.environ
    with _credentials_env(RunOptions()):
        assert "PAYMENT_CONFORMANCE_API_KEY" not in os.environ  # the profile's key applies


# -- collecting results ----------------------------------------------------------------------
class FakeReport:
    def __init__(
        self, nodeid: str, when: str, properties: list[tuple[str, Any]], failed: bool = False
    ) -> None:
        self.nodeid = nodeid
        self.when = when
        self.user_properties = properties
        self.failed = failed
        self.longreprtext = "worker 'gw0' crashed while running" if failed else ""


class CountingDisplay(NullDisplay):
    def __init__(self) -> None:
        self.phases: dict[str, int] = {}
        self.done: list[tuple[str, str, bool, int]] = []

    def collected(self, phases: dict[str, int]) -> None:
        self.phases = phases

    def test_done(self, phase: str, family: str, failed: bool, requests: int) -> None:
        self.done.append((phase, family, failed, requests))


def check(check_id: str, ids: tuple[str, ...], outcome: Outcome) -> CheckResult:
    return CheckResult(check_id, "auth", ids, outcome, message="m" if outcome == "failed" else "")


def test_the_collector_reads_teardown_reports_and_feeds_the_display() -> None:
    display = CountingDisplay()
    collector = ResultCollector(display)
    collector.pytest_xdist_node_collection_finished(
        None, ["a/conformance/suite/test_auth.py::t1", "x/test_auth.py::t2", "test_schema.py::s"]
    )
    passed = check("t1", ("AUTH-001",), Outcome.PASSED)
    failed = check("t2", ("AUTH-002",), Outcome.FAILED)
    properties: list[tuple[str, Any]] = [
        (CHECK_PROPERTY, check_to_dict(failed)),
        (REQUESTS_PROPERTY, 4),
        (FAMILY_PROPERTY, "auth headers"),
    ]
    for when in ("setup", "call", "teardown"):  # only teardown carries the final results
        collector.pytest_runtest_logreport(FakeReport("x/test_auth.py::t2", when, properties))  # type: ignore[arg-type]
    collector.pytest_runtest_logreport(
        FakeReport("test_auth.py::t1", "teardown", [(CHECK_PROPERTY, check_to_dict(passed))])  # type: ignore[arg-type]
    )
    assert display.phases == {"auth": 2, "schema": 1}
    assert collector.checks == [failed, passed]
    assert collector.requests_sent == 4
    assert display.done == [("auth", "auth headers", True, 4), ("auth", "auth", False, 0)]


def test_requirements_no_check_exercised_are_not_exercised() -> None:
    selected = list(load_catalogue().select(("AUTH-001", "AUTH-002", "AUTH-003"), ()))
    skipped = CheckResult(
        "t3", "auth", ("AUTH-003",), Outcome.NOT_EXERCISED, reason_not_exercised="no helpers"
    )
    folded = fold(selected, [check("t1", ("AUTH-001",), Outcome.PASSED), skipped])
    outcomes = {r.requirement.id: r.outcome for r in folded}
    assert outcomes == {
        "AUTH-001": Outcome.PASSED,
        "AUTH-002": Outcome.NOT_EXERCISED,
        "AUTH-003": Outcome.NOT_EXERCISED,
    }
    assert folded[2].checks[0].reason_not_exercised == "no helpers"


def test_phase_names_come_from_module_names() -> None:
    assert phase_of("conformance/suite/test_idempotency.py::test_x[createPayment]") == "idempotency"
    assert phase_of("../../site-packages/conformance/suite/test_auth.py::t") == "auth"
    assert phase_of("conformance/suite/boundaries/test_parameters.py::t[cancelPayment]") == (
        "boundaries"
    )
    assert phase_of("boundaries/test_parameters.py::t[cancelPayment]") == "boundaries"
    assert phase_of("test_auth.py::t") == "auth"


def test_a_crashed_test_process_leaves_the_run_incomplete() -> None:
    collector = ResultCollector(NullDisplay())
    crash = FakeReport("test_auth.py::t1", "???", [], failed=True)
    collector.pytest_runtest_logreport(crash)  # type: ignore[arg-type]
    reason = _check_exit(int(pytest.ExitCode.TESTS_FAILED), collector, "")
    assert reason is not None
    assert reason.startswith("a test process crashed: test_auth.py::t1: worker 'gw0' crashed")


def test_an_interrupted_session_leaves_the_run_incomplete_and_says_why() -> None:
    collector = ResultCollector(NullDisplay())
    interrupted = int(pytest.ExitCode.INTERRUPTED)
    assert _check_exit(interrupted, collector, "") == INTERRUPTED_REASON
    assert _check_exit(interrupted, collector, "", budget_reason(5)) == budget_reason(5)
    assert _check_exit(int(pytest.ExitCode.OK), collector, "") is None


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (pytest.ExitCode.NO_TESTS_COLLECTED, "no check of the suite covers"),
        (pytest.ExitCode.INTERNAL_ERROR, "could not run .pytest exit code 3.:\nboom"),
    ],
)
def test_pytest_exit_codes_that_mean_the_run_did_not_happen(
    code: pytest.ExitCode, message: str
) -> None:
    with pytest.raises(RunError, match=message):
        _check_exit(int(code), ResultCollector(NullDisplay()), "boom")


def test_a_server_that_stopped_answering_leaves_the_run_incomplete() -> None:
    gone = "the server stopped answering (3 requests in a row got no complete response in time)"
    answered = CheckResult("t1", "auth", ("AUTH-001",), Outcome.PASSED)
    refused = CheckResult(
        "t2", "auth", ("AUTH-002",), Outcome.NOT_EXERCISED, reason_not_exercised="no answer"
    )
    skipped = CheckResult(
        "t3", "auth", ("AUTH-003",), Outcome.NOT_EXERCISED, reason_not_exercised=f"not run: {gone}"
    )
    assert server_gone([answered, refused]) is None
    assert server_gone([answered, refused, skipped]) == gone


def test_auto_workers_are_picked_after_preflight_and_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("conformance.engine.workers.usable_cores", lambda: 2)
    auto = RunOptions(base_url="http://api.example", workers=8, auto_workers=True)
    measured = PreflightReport((PreflightStep("reachable", True),), 3, round_trip_ms=21.0)
    picked = _auto_workers(auto, Target("http://api.example", embedded=False), measured)
    assert (picked.workers, picked.auto_why) == (6, "2 cores, 21 ms round trip")
    recorded = _recorded_options(picked, load_profile())
    assert (recorded["workers"], recorded["workers_auto"]) == ("6", "2 cores, 21 ms round trip")
    local = PreflightReport((PreflightStep("reachable", True),), 3, round_trip_ms=1.0)
    assert _auto_workers(auto, Target("http://127.0.0.1:1", embedded=False), local).workers == 2
    # with --rate-limit, no more processes than it takes to send that many requests a second
    limited = replace(auto, rate_limit=25.0)
    far = Target("http://api.example", embedded=False)
    assert _auto_workers(limited, far, measured).workers == 2
    # the embedded server's round trip is its --latency-ms, with or without preflight: on
    # loopback a slow measure is the machine's load (a loaded CI runner measured 10 ms and got 4)
    embedded = RunOptions(embedded_latency_ms=50, workers=8, auto_workers=True)
    assert _auto_workers(embedded, Target("http://127.0.0.1:1", embedded=True), None).workers == 8
    loaded = PreflightReport((PreflightStep("reachable", True),), 3, round_trip_ms=12.0)
    plain = RunOptions(workers=8, auto_workers=True)
    assert _auto_workers(plain, Target("http://127.0.0.1:1", embedded=True), loaded).workers == 2
    unmeasured = _auto_workers(auto, Target("http://api.example", embedded=False), None)
    assert (unmeasured.workers, unmeasured.auto_why) == (
        8,
        "no round trip measured (preflight off)",
    )


def test_a_check_without_requirements_means_a_broken_suite() -> None:
    collector = ResultCollector(NullDisplay())
    message = f"error while preparing the check: {UNMARKED_MESSAGE}"
    collector.checks.append(CheckResult("test_x.py::t", "x", (), Outcome.FAILED, message))
    collector.checks.append(CheckResult("sub-check", "x", (), Outcome.PASSED))
    with pytest.raises(RunError, match=r"name no requirement[^,]*test_x\.py::t$"):
        _check_exit(int(pytest.ExitCode.TESTS_FAILED), collector, "")


# -- runs that do not finish -----------------------------------------------------------------
@BUDGET_STOP_NOISE
@pytest.mark.slow
def test_a_run_that_outlasts_its_time_budget_ends_with_incomplete_reports(tmp_path: Path) -> None:
    # preflight is answered, then every request waits forever: without a budget this run takes
    # three read timeouts (45 s and more); with one it ends at the budget, reports written
    budget = 3.0
    started = time.monotonic()
    with hostile_server(Behaviour.PREFLIGHT_THEN_SILENT) as base_url:
        options = RunOptions(
            base_url=base_url,
            seed=1,
            only=("AUTH",),
            quick=True,
            workers=1,
            report_dir=tmp_path,
            max_duration_s=budget,
        )
        finished = execute(options, NullDisplay())
    elapsed = time.monotonic() - started
    result = finished.result
    assert result.incomplete_reason == "the run's time budget (3 s) ran out"
    assert result.verdict is Verdict.INCOMPLETE and result.exit_code == 2
    assert elapsed < 40, elapsed
    assert all(r.outcome is Outcome.NOT_EXERCISED for r in result.requirements)
    assert {r.reason_not_exercised for r in result.requirements} == {budget_reason(3)}
    document = json.loads((tmp_path / "results.json").read_text())
    assert document["verdict"] == "INCOMPLETE" and document["exit_code"] == 2
    assert document["incomplete_reason"] == budget_reason(3)
    assert finished.report_error is None and (tmp_path / "report.html").is_file()


@pytest.mark.slow
def test_a_budget_spent_before_the_tests_start_runs_none_of_them(tmp_path: Path) -> None:
    options = RunOptions(seed=1, only=("AUTH-001",), quick=True, max_duration_s=0.001)
    result = run_suite(options)
    assert result.incomplete_reason == budget_reason(0.001)
    assert result.requirements[0].outcome is Outcome.NOT_EXERCISED
    assert result.exit_code == 2


# -- the report directory is checked before the run ------------------------------------------
def test_a_report_directory_that_cannot_be_written_stops_the_run_before_it_starts(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    closed = f"http://127.0.0.1:{closed_port()}"  # preflight would fail: it must not get there
    for report_dir, message in [
        (blocker, "it is a file, not a directory"),
        (blocker / "out", f"it cannot be created, {blocker} is a file"),
        (blocker / "deeper" / "out", f"it cannot be created, {blocker} is a file"),
    ]:
        with pytest.raises(RunError, match=f"cannot write the reports to {report_dir}: {message}"):
            execute(RunOptions(base_url=closed, report_dir=report_dir), NullDisplay())
    check_report_dir(tmp_path / "new" / "deeper")  # creatable: fine, and not created yet
    assert not (tmp_path / "new").exists()


def test_the_report_directory_check_really_writes_and_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    existing = tmp_path / "existing"
    existing.mkdir()
    check_report_dir(existing)
    assert list(existing.iterdir()) == []  # the probe file is gone
    check_report_dir(tmp_path / "new" / "deeper")
    assert list(tmp_path.iterdir()) == [existing]  # the directories it made are gone too


def test_a_report_directory_holding_a_link_where_a_report_goes_is_refused_before_the_run(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "summary.md").symlink_to("../victim.txt")
    refused = f"cannot write the reports to {reports}: {reports / 'summary.md'}: a symbolic link"
    with pytest.raises(RunError, match=refused):
        execute(RunOptions(base_url="http://127.0.0.1:9", report_dir=reports), NullDisplay())
    assert victim.read_text(encoding="utf-8") == "precious"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
@pytest.mark.parametrize("directory", ["/proc/forbidden", "/proc/forbidden/deeper", "/proc/self"])
def test_a_report_directory_the_system_refuses_is_refused(directory: str) -> None:
    with pytest.raises(RunError, match=f"cannot write the reports to {directory}: "):
        check_report_dir(Path(directory))


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_report_directory_without_write_permission_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(RunError, match="the directory is not writable"):
        check_report_dir(locked)
    with pytest.raises(RunError, match=f"{locked} is not writable"):
        check_report_dir(locked / "out")


# -- credentials -----------------------------------------------------------------------------
def test_an_api_secret_alone_replaces_only_the_first_secret() -> None:
    profile = load_profile()
    replaced = _profile(RunOptions(base_url="http://x.test", api_secret="sk_other"))
    assert replaced.primary.api_secret == "sk_other"
    assert replaced.primary.api_key == profile.primary.api_key
    assert replaced.secondary == profile.secondary


def test_an_api_key_alone_replaces_only_the_first_key() -> None:
    profile = load_profile()
    replaced = _profile(RunOptions(base_url="http://x.test", api_key="mk_other"))
    assert replaced.primary.api_key == "mk_other"
    assert replaced.primary.api_secret == profile.primary.api_secret


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (RunOptions(api_secret="sk_given_7f3a"), "--api-secret"),
        (RunOptions(api_key="mk_given_7f3a"), "--api-key"),
        (
            RunOptions(api_key="mk_given_7f3a", api_secret="sk_given_7f3a"),
            "--api-key and --api-secret",
        ),
    ],
)
def test_credentials_other_than_the_embedded_servers_own_are_refused(
    options: RunOptions, named: str
) -> None:
    # The embedded server would adopt them, so a wrong secret could never fail.
    with pytest.raises(RunError, match=f"^{named} .*--base-url") as refused:
        _profile(options)
    assert "given_7f3a" not in str(refused.value)  # the values are never printed


def test_the_embedded_servers_own_credentials_may_be_given() -> None:
    own = load_profile().primary
    assert _profile(RunOptions(api_key=own.api_key, api_secret=own.api_secret)).primary == own


def test_a_single_credential_part_travels_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAYMENT_CONFORMANCE_API_KEY", raising=False)
    with _credentials_env(RunOptions(api_secret="sk_inner")):
        assert os.environ["PAYMENT_CONFORMANCE_API_SECRET"] == "sk_inner"
        assert "PAYMENT_CONFORMANCE_API_KEY" not in os.environ


def test_a_stop_that_breaks_pytests_own_interrupt_report_still_ends_the_run_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen in CI: SIGTERM landing inside a context manager's ``__enter__`` made pytest's report
    of the interruption raise TypeError, which escaped as a traceback with exit 1."""

    def main_whose_interrupt_report_fails(*args: Any, **kwargs: Any) -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises at once; the sleep is never finished
        except KeyboardInterrupt:
            raise TypeError("unsupported operand type(s) for -: 'NoneType' and 'int'") from None
        raise AssertionError("SIGTERM was not turned into a stop")

    monkeypatch.setattr(pytest, "main", main_whose_interrupt_report_fails)
    finished = execute(
        RunOptions(only=("AUTH-001",), quick=True, seed=1, report_dir=tmp_path / "r"),
        NullDisplay(),
    )
    assert finished.result.exit_code == 2
    assert "SIGTERM" in (finished.result.incomplete_reason or "")
    assert (tmp_path / "r" / "results.json").exists()


def test_ctrl_c_that_breaks_pytests_own_interrupt_report_still_ends_the_run_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def main_whose_interrupt_report_fails(*args: Any, **kwargs: Any) -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise TypeError("unsupported operand type(s) for -: 'NoneType' and 'int'")  # noqa: B904

    monkeypatch.setattr(pytest, "main", main_whose_interrupt_report_fails)
    finished = execute(
        RunOptions(only=("AUTH-001",), quick=True, seed=1, report_dir=tmp_path / "r"),
        NullDisplay(),
    )
    assert finished.result.exit_code == 2
    assert finished.result.incomplete_reason == INTERRUPTED_REASON


def test_the_collector_notes_when_the_first_failed_check_was_recorded() -> None:
    collector = ResultCollector(NullDisplay(), started=time.perf_counter() - 2.0)
    passed = check("t1", ("AUTH-001",), Outcome.PASSED)
    collector.pytest_runtest_logreport(
        FakeReport("test_auth.py::t1", "teardown", [(CHECK_PROPERTY, check_to_dict(passed))])  # type: ignore[arg-type]
    )
    assert collector.first_failure_s is None
    for name in ("t2", "t3"):
        failed = check(name, ("AUTH-002",), Outcome.FAILED)
        collector.pytest_runtest_logreport(
            FakeReport(
                f"test_auth.py::{name}", "teardown", [(CHECK_PROPERTY, check_to_dict(failed))]
            )  # type: ignore[arg-type]
        )
        if name == "t2":
            first = collector.first_failure_s
    assert first is not None and 2.0 <= first < 60.0
    assert collector.first_failure_s == first  # the first one, not the latest


def test_fail_fast_asks_pytest_to_stop_at_its_first_failed_test(tmp_path: Path) -> None:
    target = Target("http://127.0.0.1:9", embedded=False)
    args = pytest_args(RunOptions(fail_fast=True), target, 1, tmp_path / "pytest.ini")
    assert "--maxfail=1" in args
    assert "--maxfail=1" not in pytest_args(RunOptions(), target, 1, tmp_path / "pytest.ini")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_an_interruption_pytest_reports_as_its_internal_error_is_an_interruption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    # Seen with two workers: SIGTERM landed in pytest-xdist's loop, inside a lock's bookkeeping;
    # pytest printed INTERNALERROR (RuntimeError: release unlocked lock) and exited 3.
    def main(args: list[str], plugins: list[object]) -> int:
        try:
            os.kill(os.getpid(), signum)
        except KeyboardInterrupt:
            print("INTERNALERROR> RuntimeError: release unlocked lock")
        return int(pytest.ExitCode.INTERNAL_ERROR)

    monkeypatch.setattr(pytest, "main", main)
    options = RunOptions(seed=1, only=("AUTH-001",), quick=True, report_dir=tmp_path / "out")
    # as in a terminal: Python's own Ctrl-C handling (a test worker may have left another)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        finished = execute(options, NullDisplay())
    finally:
        signal.signal(signal.SIGINT, previous)
    assert finished.result.exit_code == 2
    expected = TERMINATED_REASON if signum == signal.SIGTERM else INTERRUPTED_REASON
    assert finished.result.incomplete_reason == expected
