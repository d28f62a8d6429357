"""The comparison with plain schemathesis: how runs are planned, judged and summed up.

The tools are replaced by a fake runner here (a real comparison takes an hour); the hooks that
make plain schemathesis sign its requests are tested against a real reference server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis

from benchmarks import compare
from benchmarks.compare_signing import fresh_key, refresh_idempotency_key
from benchmarks.compare_tools import (
    OPENAPI,
    Children,
    EventTail,
    Job,
    Record,
    failure_signatures,
    schemathesis_argv,
    suite_argv,
)
from conformance.core.profile import load_profile
from conformance.reference.server import ReferenceServer
from conformance.suite.schema.checks import OUR_CHECKS

FAULTS = ["auth-nonce-not-checked", "idem-key-not-required", "shape-expires-at-not-date-time"]


class FakeTools:
    """Our tools catch every fault; schemathesis catches the shape fault and raises one false
    alarm on the unfaulted server, which it raises again on every fault."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Job, frozenset[str] | None]] = []

    def __call__(self, job: Job, children: Children, known: frozenset[str] | None) -> Record:
        self.jobs.append((job, known))
        if job.tool == "schemathesis":
            failures = ["ignored_auth GET /v1/payments"]
            if job.fault == "shape-expires-at-not-date-time":
                failures = ["response_schema_conformance POST /v1/payments"]
            elif job.fault is not None:
                failures = []  # the false alarm is known: it catches nothing
            first = 2.0 if failures else None
            return Record(
                job.tool, job.fault, job.category, job.seed, "ok", 1, 30.0, first, failures
            )
        if job.fault is None:
            wall = {"quick": 10.0, "default": 40.0 + job.seed}[job.tool]
            return Record(job.tool, None, "", job.seed, "ok", 0, wall, None, [])
        return Record(job.tool, job.fault, job.category, job.seed, "ok", 1, 5.0, 5.0, ["X-001"])


def run(tmp_path: Path, *args: str, runner: compare.Runner | None = None) -> int:
    return compare.main(
        ["--faults", ",".join(FAULTS), "--seeds", "3", "--out", str(tmp_path), *args],
        runner=runner or FakeTools(),
    )


def test_schemathesis_gets_the_median_time_of_our_default_run_and_its_known_failures(
    tmp_path: Path,
) -> None:
    tools = FakeTools()
    assert run(tmp_path, runner=tools) == 0
    st_jobs = [(job, known) for job, known in tools.jobs if job.tool == "schemathesis"]
    # unfaulted: the median of our default runs (41, 42, 43); each fault: our default's time on it
    assert {job.budget_s for job, _ in st_jobs if job.fault is None} == {42.0}
    assert {job.budget_s for job, _ in st_jobs if job.fault is not None} == {5.0}
    last_ours = max(i for i, (job, _) in enumerate(tools.jobs) if job.tool == "default")
    first_st_fault = min(
        i for i, (job, _) in enumerate(tools.jobs) if job.tool == "schemathesis" and job.fault
    )
    assert last_ours < first_st_fault  # their budgets come from our faulted runs
    faulted = [known for job, known in st_jobs if job.fault is not None]
    assert faulted and all(k == frozenset({"ignored_auth GET /v1/payments"}) for k in faulted)
    # every unfaulted run comes before any faulted one
    order = [job.fault is None for job, _ in tools.jobs]
    assert order == sorted(order, reverse=True)


def test_the_summary_counts_catches_per_category_false_alarms_and_median_times(
    tmp_path: Path,
) -> None:
    assert run(tmp_path) == 0
    data = json.loads((tmp_path / "comparison.json").read_text())
    st = data["summary"]["schemathesis"]
    assert st["caught"] == 1 and st["faults"] == 3
    assert st["per_category"]["shape"] == {"caught": 1, "total": 1}
    assert st["per_category"]["auth"] == {"caught": 0, "total": 1}
    assert st["false_alarms_per_seed"] == {"1": 1, "2": 1, "3": 1}
    assert st["median_first_failure_s"] == 2.0
    ours = data["summary"]["default"]
    assert ours["caught"] == 3 and ours["false_alarms_per_seed"] == {"1": 0, "2": 0, "3": 0}
    assert ours["median_wall_s"] == 42.0 and ours["median_first_failure_s"] == 5.0
    assert len(data["records"]) == 3 * 3 + 3 * 3  # unfaulted per seed, then one per fault
    table = (tmp_path / "comparison.md").read_text()
    assert "| faults caught (of the catalogue) | **3** / 3 | **3** / 3 | **1** / 3 |" in table
    assert "Schemathesis ran 42 s on the unfaulted server" in table


def test_a_run_without_a_result_is_counted_and_fails_the_command(tmp_path: Path) -> None:
    tools = FakeTools()

    def broken(job: Job, children: Children, known: frozenset[str] | None) -> Record:
        if job.fault == "auth-nonce-not-checked" and job.tool == "quick":
            return Record(job.tool, job.fault, job.category, job.seed, "timeout", None, 9.0, None)
        return tools(job, children, known)

    assert run(tmp_path, runner=broken) == 1
    summary = json.loads((tmp_path / "comparison.json").read_text())["summary"]
    assert summary["quick"]["runs_without_result"] == 1
    assert summary["quick"]["caught"] == 2  # a timeout is never counted as a catch


def test_resume_runs_only_what_is_not_recorded_yet(tmp_path: Path) -> None:
    assert run(tmp_path) == 0
    again = FakeTools()
    assert run(tmp_path, "--resume", runner=again) == 0
    assert again.jobs == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tools", "quick,zap"], "--tools: choose from"),
        (["--faults", "no-such-fault"], "unknown fault 'no-such-fault'"),
        (["--seeds", "0"], "--seeds must be at least 1"),
        (["--budget", "-3"], "--budget must be positive"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert compare.main([*args, "--out", str(tmp_path)], runner=FakeTools()) == 2
    assert message in capsys.readouterr().out


def test_our_faulted_runs_stop_at_their_first_failure_and_unfaulted_runs_do_not(
    tmp_path: Path,
) -> None:
    faulted = suite_argv(Job("quick", "auth-nonce-not-checked", "auth", 1), tmp_path)
    assert faulted[-3:] == ["--fault", "auth-nonce-not-checked", "--fail-fast"]
    assert "--quick" in faulted and faulted[faulted.index("--workers") + 1] == "1"
    assert "--fail-fast" not in suite_argv(Job("default", None, "", 1), tmp_path)


def test_plain_schemathesis_runs_every_check_and_phase_within_its_budget(tmp_path: Path) -> None:
    argv = schemathesis_argv(Job("schemathesis", None, "", 2, 41.6), "http://h:1", tmp_path / "e")
    assert argv[argv.index("--checks") + 1] == "all"
    assert argv[argv.index("--phases") + 1] == "examples,coverage,fuzzing,stateful"
    assert argv[argv.index("--max-time") + 1] == "42"
    assert argv[argv.index("--generation-with-security-parameters") + 1] == "false"


def test_failure_signatures_are_read_from_the_event_stream_a_line_at_a_time(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.ndjson"
    event = {
        "ScenarioFinished": {
            "timestamp": 1.0,
            "recorder": {
                "label": "POST /v1/payments",
                "checks": {"a": [{"name": "not_a_server_error", "status": "failure"}]},
            },
        }
    }
    line = json.dumps(event)
    tail = EventTail(path)
    assert tail.read() == []  # not written yet
    path.write_text(line[:10])
    assert tail.read() == []  # half a line
    with path.open("a") as stream:
        stream.write(line[10:] + "\n" + "[" * 100_000 + "\n")  # then a hostile line
    events = tail.read()
    assert [failure_signatures(e) for e in events] == [["not_a_server_error POST /v1/payments"]]


def test_a_valid_idempotency_key_is_replaced_by_a_fresh_one_and_an_invalid_one_is_kept() -> None:
    headers: dict[str, object] = {"Idempotency-Key": "0"}
    refresh_idempotency_key(headers)
    assert headers["Idempotency-Key"] != "0" and len(str(headers["Idempotency-Key"])) == 32
    for invalid in ("", "k" * 129, 7):
        kept: dict[str, object] = {"Idempotency-Key": invalid}
        refresh_idempotency_key(kept)
        assert kept == {"Idempotency-Key": invalid}
    assert len(fresh_key(100)) == 100 and fresh_key(5) != fresh_key(5)


@pytest.fixture
def signing_hooks() -> Iterator[None]:
    """The hooks registered for one test: importing the module registers them globally, and
    other tests in this process call schemathesis too."""
    from schemathesis.hooks import GLOBAL_HOOK_DISPATCHER

    from benchmarks.compare_signing import before_call

    GLOBAL_HOOK_DISPATCHER.register_hook_with_name(before_call, "before_call")
    try:
        yield
    finally:
        GLOBAL_HOOK_DISPATCHER.unregister(before_call)


@pytest.mark.usefixtures("signing_hooks")
def test_the_hooks_sign_every_call_and_repeated_keys_make_new_payments() -> None:
    schema = schemathesis.openapi.from_path(str(OPENAPI))
    operation = schema["/v1/payments"]["POST"]
    with ReferenceServer(profile=load_profile()) as server:
        ids = set()
        for order in ("compare-hooks-1", "compare-hooks-2"):
            case = operation.Case(
                body={"merchant_order_no": order, "quotes": {"eth": {"amount": "0.015"}}},
                headers={"Idempotency-Key": "00000000"},
            )
            response = case.call(base_url=server.base_url)
            assert response.status_code == 201, response.text  # signed: not 401
            ids.add(response.json()["id"])
    assert len(ids) == 2  # the repeated generated key was replaced: no replay


def test_the_hooks_add_none_of_the_suites_checks_to_plain_schemathesis() -> None:
    """``--checks all`` in the compared run must mean schemathesis' own checks only."""
    probe = (
        "import schemathesis.checks as c, benchmarks.compare_hooks;"
        "print('\\n'.join(c.CHECKS.get_all_names()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    registered = set(done.stdout.split())
    assert not registered & set(OUR_CHECKS)
