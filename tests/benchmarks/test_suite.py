"""The suite benchmark's measuring parts: server time and the coverage promise of --quick."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import pytest

from benchmarks.suite import (
    Measurement,
    ServerClock,
    TimingMiddleware,
    coverage_gaps,
    latencies,
    suite_families,
    target_of,
)
from conformance.core.contract import operations
from conformance.core.results import CheckResult, Outcome, RunResult, Target


def test_the_timing_middleware_sums_time_inside_the_application() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.sleep(0.01)

    clock = ServerClock()
    timed = TimingMiddleware(app, clock)
    asyncio.run(timed({"type": "http"}, None, None))
    asyncio.run(timed({"type": "lifespan"}, None, None))
    assert clock.requests == 1
    assert 0.005 < clock.seconds < 1.0


def run_with(checks: tuple[CheckResult, ...]) -> RunResult:
    return RunResult(
        suite_version="0",
        contract_sha256="0" * 64,
        profile_name="default",
        profile_sha256="0" * 64,
        seed=1,
        target=Target("http://127.0.0.1:1", embedded=True),
        started_at="2026-11-22T00:00:00Z",
        duration_s=1.0,
        requests_sent=1,
        requirements=(),
        checks=checks,
    )


def test_coverage_gaps_name_unexercised_operations_and_families() -> None:
    ran = tuple(
        CheckResult(f"c{i}", "schema", ("SHAPE-001",), Outcome.PASSED, operation_id=op.operation_id)
        for i, op in enumerate(operations())
        if op.operation_id != "getStatement"
    )
    skipped = CheckResult("h", "helpers", ("HELP-001",), Outcome.NOT_EXERCISED)
    missing_operations, missing_families = coverage_gaps(run_with((*ran, skipped)))
    assert missing_operations == ["getStatement"]
    assert missing_families == ["helpers"]


def test_a_family_with_no_check_in_the_run_is_a_gap() -> None:
    ran = CheckResult("c", "auth", ("AUTH-001",), Outcome.PASSED, operation_id="createPayment")
    _, missing_families = coverage_gaps(run_with((ran,)), families=["auth", "payments"])
    assert missing_families == ["payments"]


def test_a_family_that_only_judges_the_servers_rate_limits_is_no_gap_left_unexercised() -> None:
    ran = CheckResult("c", "auth", ("AUTH-001",), Outcome.PASSED, operation_id="createPayment")
    quiet = CheckResult("r", "rate_limit", ("RATE-001",), Outcome.NOT_EXERCISED)
    _, missing_families = coverage_gaps(run_with((ran, quiet)), families=["auth", "rate_limit"])
    assert missing_families == []


@pytest.mark.slow
def test_the_families_are_found_by_collecting_the_suite_subpackages_included() -> None:
    families = suite_families()
    assert {"auth", "boundaries", "idempotency", "schema"} <= set(families)
    assert all(count > 0 for count in families.values())


def test_measurement_rates() -> None:
    m = Measurement("quick", wall_s=10.0, requests=500, server_s=4.0, result=run_with(()))
    assert m.requests_per_s == 50.0
    assert m.outside_share == 0.6


def test_wall_over_requests_times_latency_says_how_much_requests_overlap() -> None:
    m = Measurement("quick", 30.0, 1_200, 4.0, run_with(()), latency_ms=50, workers=8)
    assert m.serial_share == pytest.approx(0.5)  # 1,200 x 50 ms one at a time would be 60 s
    assert Measurement("quick", 30.0, 1_200, 4.0, run_with(())).serial_share is None
    assert target_of(m) == 60.0
    assert target_of(Measurement("default", 1.0, 1, 0.0, run_with(()), latency_ms=20)) is None


@pytest.mark.parametrize("text", ["", "5,x", "-1", "10001"])
def test_latencies_must_be_milliseconds_in_range(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        latencies(text)
    assert latencies("0,20,50") == [0, 20, 50]
