"""The engine's side of rate limits: ``--rate-limit`` reaches every test process with one shared
file, is recorded with the run's options, and the per-test counts are summed into the result."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import RateLimitCounts, Target
from conformance.engine.collector import ResultCollector
from conformance.engine.options import RunError, RunOptions, _check_options, _recorded_options
from conformance.engine.preflight import preflight
from conformance.engine.session import pytest_args
from conformance.reference.server import ReferenceServer
from conformance.suite.wire.check_properties import RATE_LIMITS_PROPERTY
from tests.engine.test_runner import FakeReport
from tests.rate_limiting_proxy import RateLimitingProxy


def test_the_rate_limit_and_one_shared_file_reach_the_test_processes(tmp_path: Path) -> None:
    options = RunOptions(base_url="http://h", rate_limit=25.0, workers=4)
    args = pytest_args(options, Target("http://h", embedded=False), 1, tmp_path / "pytest.ini")
    at = args.index("--rate-limit")
    assert args[at + 1] == "25.0"
    assert args[args.index("--conformance-rate-file") + 1] == str(tmp_path / "rate-limit")
    assert "--rate-limit" not in pytest_args(
        RunOptions(), Target("http://h", embedded=False), 1, tmp_path / "pytest.ini"
    )
    assert _recorded_options(options, load_profile())["rate_limit"] == "25/s"


@pytest.mark.parametrize("rate", [0.0, -1.0, float("inf"), float("nan")])
def test_a_rate_that_is_not_positive_cannot_run(rate: float) -> None:
    with pytest.raises(RunError, match="--rate-limit must be a positive number"):
        _check_options(RunOptions(rate_limit=rate))


def test_the_collector_sums_each_tests_rate_limit_counts() -> None:
    collector = ResultCollector(_Silent())
    for waited in (1.0, 2.5):
        counts = RateLimitCounts(received_429=1, waited_s=waited).as_dict()
        report = FakeReport("test_auth.py::t", "teardown", [(RATE_LIMITS_PROPERTY, counts)])
        collector.pytest_runtest_logreport(report)  # type: ignore[arg-type]
    assert collector.rate_limits == RateLimitCounts(received_429=2, waited_s=3.5)


def test_preflight_waits_out_a_rate_limit_and_counts_it() -> None:
    server = ReferenceServer(profile=load_profile()).start()
    try:
        proxy = RateLimitingProxy(server.base_url, first=2, retry_after="0")
        with proxy.running():
            # 4 a second: each request comes well within 250 ms of the last, loaded CI or not
            report = preflight(proxy.base_url, load_profile(), rate_limit=4.0)
    finally:
        server.stop()
    assert report.ok, report.message
    assert report.rate_limits.received_429 == 2
    assert report.rate_limits.limiter_waited_s > 0


def test_preflight_round_trip_leaves_out_the_time_rate_limits_made_it_wait() -> None:
    # --workers auto is chosen from this round trip: a 1 s Retry-After is no network latency
    server = ReferenceServer(profile=load_profile()).start()
    try:
        proxy = RateLimitingProxy(server.base_url, first=1, every=2, retry_after="1")
        with proxy.running():
            report = preflight(proxy.base_url, load_profile())
    finally:
        server.stop()
    assert report.ok, report.message
    assert report.rate_limits.waited_s >= 2.0  # every step waited
    assert report.round_trip_ms is not None
    assert report.round_trip_ms < 250


@pytest.mark.parametrize("retry_after", ["0", "Thu, 01 Jan 1970 00:00:00 GMT", "60"])
def test_preflight_keeps_the_run_budget_when_every_answer_is_429(retry_after: str) -> None:
    # Issue 28: "Retry-After: 0" on every request looped ~600 requests in 28 s, past any budget.
    proxy = RateLimitingProxy(every=1, retry_after=retry_after)
    with proxy.running():
        started = time.monotonic()
        report = preflight(proxy.base_url, load_profile(), deadline=time.time() + 3)
        took = time.monotonic() - started
    assert not report.ok
    assert "rate limited" in report.message
    assert took < 4.5
    assert proxy.seen < 40


class _Silent:
    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def test_replay_and_rerun_commands_keep_the_rate_limit() -> None:
    from tests.reporting.runs import make_run

    run = make_run([], options={"quick": "true", "rate_limit": "25/s"})
    assert "--rate-limit 25/s" in run.rerun_command()
    assert "--rate-limit 25/s" in run.replay_command("AUTH-001")
