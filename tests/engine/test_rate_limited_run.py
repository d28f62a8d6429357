"""A whole run against a server that rate limits a share of its requests is still CONFORMANT.

A proxy in front of a reference server answers every tenth request 429 with ``Retry-After: 1``
(the error body and header the profile declares). The families chosen cover a state machine
(subscriptions), the schemathesis phases (unit and stateful, through the ``requests`` session),
a webhook wait and RATE-001: every check is judged on the answer after the wait, the reports
count every 429 the proxy sent and the time waited for them, and RATE-001 passes.

A server that asks for longer than the run can wait (huge seconds, an HTTP-date in year 9999,
a day on every third request) fails nothing either: what it cut short is not exercised, "rate
limited", and the run is INCOMPLETE (exit 2) in every report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.core.profile import load_profile, resolve_profile_path
from conformance.core.results import Outcome, Verdict
from conformance.engine.collector import rate_limited
from conformance.engine.options import RunOptions
from conformance.engine.progress import NullDisplay
from conformance.engine.runner import execute
from conformance.reference.server import ReferenceServer
from conformance.reporting import json_report, summary
from tests.rate_limiting_proxy import RateLimitingProxy

DECLARED_LIMIT = """
[rate_limit]
status = 429
retry_after_required = true
error_code = "rate_limited"
"""


def test_a_rate_limited_server_is_conformant_and_the_reports_count_the_waits(
    tmp_path: Path,
) -> None:
    profile_path = tmp_path / "limited.toml"
    profile_path.write_text(
        resolve_profile_path("default").read_text(encoding="utf-8") + DECLARED_LIMIT,
        encoding="utf-8",
    )
    server = ReferenceServer(profile=load_profile(profile_path)).start()
    try:
        proxy = RateLimitingProxy(server.base_url, every=10, retry_after="1")
        with proxy.running():
            run = execute(
                RunOptions(
                    base_url=proxy.base_url,
                    profile=str(profile_path),
                    only=("SUB-STATE-001", "WH-001", "RATE-001"),
                    quick=True,
                    workers=2,
                    seed=1,
                    report_dir=tmp_path / "reports",
                ),
                NullDisplay(),
            )
    finally:
        server.stop()
    result = run.result
    assert result.verdict is Verdict.CONFORMANT, [
        (r.requirement.id, r.checks[0].message[:200]) for r in result.requirements
    ]
    assert {r.requirement.id: r.outcome for r in result.requirements} == {
        "SUB-STATE-001": Outcome.PASSED,
        "WH-001": Outcome.PASSED,
        "RATE-001": Outcome.PASSED,
    }
    assert proxy.limited >= 5
    assert result.rate_limits.received_429 == proxy.limited
    assert result.rate_limits.waited_s == proxy.limited * 1.0
    assert result.rate_limits.given_up == 0
    document = json.loads((tmp_path / "reports" / json_report.FILENAME).read_text("utf-8"))
    assert document["rate_limits"]["received_429"] == proxy.limited
    text = (tmp_path / "reports" / summary.FILENAME).read_text("utf-8")
    assert f"rate limits: 429s: {proxy.limited}, " in text


@pytest.mark.parametrize(
    ("status", "retry_after"),
    [(429, "999999999"), (503, "Fri, 31 Dec 9999 23:59:59 GMT"), (503, "86400")],
)
def test_a_rate_limit_longer_than_the_run_can_wait_fails_nothing_and_leaves_it_incomplete(
    tmp_path: Path, status: int, retry_after: str
) -> None:
    server = ReferenceServer().start()
    try:
        proxy = RateLimitingProxy(server.base_url, every=3, status=status, retry_after=retry_after)
        with proxy.running():
            run = execute(
                RunOptions(
                    base_url=proxy.base_url,
                    only=("WH-001", "SUB-STATE-001"),  # two state machines
                    quick=True,
                    seed=1,
                    max_duration_s=60,
                    # preflight would meet the limit first and refuse the run (exit 2 too)
                    preflight=False,
                    report_dir=tmp_path / "reports",
                ),
                NullDisplay(),
            )
    finally:
        server.stop()
    result = run.result
    assert [c.message[:200] for c in result.checks if c.outcome is Outcome.FAILED] == []
    assert not [c for c in result.checks if "nconsistent" in c.message]
    limited = f"rate limited ({status}, Retry-After {retry_after!r}"
    assert any(
        (c.reason_not_exercised or "").startswith(limited)
        for c in result.checks
        if c.outcome is Outcome.NOT_EXERCISED
    )
    assert result.rate_limits.given_up == proxy.limited > 0
    assert result.incomplete_reason == rate_limited(result.rate_limits)
    assert (result.verdict, result.exit_code) == (Verdict.INCOMPLETE, 2)
    document = json.loads((tmp_path / "reports" / json_report.FILENAME).read_text("utf-8"))
    assert document["verdict"] == "INCOMPLETE"
    assert document["incomplete_reason"] == result.incomplete_reason
    assert "INCOMPLETE" in (tmp_path / "reports" / summary.FILENAME).read_text("utf-8")


def test_a_server_that_rate_limits_every_request_fails_no_schema_phase(tmp_path: Path) -> None:
    server = ReferenceServer().start()
    try:
        proxy = RateLimitingProxy(server.base_url, first=10**9, retry_after="999999999")
        with proxy.running():
            run = execute(
                RunOptions(
                    base_url=proxy.base_url,
                    only=("OPS-009",),  # the unit phases of one operation
                    quick=True,
                    seed=1,
                    max_duration_s=60,
                    preflight=False,
                ),
                NullDisplay(),
            )
    finally:
        server.stop()
    result = run.result
    [requirement] = result.requirements
    assert requirement.outcome is Outcome.NOT_EXERCISED  # not "no response ... was checked"
    assert [c for c in result.checks if c.outcome is Outcome.FAILED] == []
    assert all(
        (c.reason_not_exercised or "").startswith("rate limited (429, Retry-After '999999999'")
        for c in result.selected_checks
    )
    assert (result.verdict, result.exit_code) == (Verdict.INCOMPLETE, 2)
