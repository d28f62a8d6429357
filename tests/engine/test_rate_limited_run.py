"""A whole run against a server that rate limits a share of its requests is still CONFORMANT.

A proxy in front of a reference server answers every tenth request 429 with ``Retry-After: 1``
(the error body and header the profile declares). The families chosen cover a state machine
(subscriptions), the schemathesis phases (unit and stateful, through the ``requests`` session),
a webhook wait and RATE-001: every check is judged on the answer after the wait, the reports
count every 429 the proxy sent and the time waited for them, and RATE-001 passes.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.core.profile import load_profile, resolve_profile_path
from conformance.core.results import Outcome, Verdict
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
