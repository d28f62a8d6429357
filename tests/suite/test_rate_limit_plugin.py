"""Rate limits in the plugin: what could not get through is not exercised, the counts ride on each
test's report, ``--rate-limit`` is checked, and RATE-001 judges the answers against the profile.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance.core.evidence import check_from_dict
from conformance.core.profile import resolve_profile_path
from conformance.core.results import CheckResult, Outcome, RateLimitCounts
from conformance.suite.wire.check_properties import CHECK_PROPERTY, RATE_LIMITS_PROPERTY
from tests.rate_limiting_proxy import RateLimitingProxy

pytest_plugins = ("pytester",)

CHECKS = """
    import pytest
    from conformance.core.results import Outcome
    from conformance.suite.wire.client import SuiteTransportError

    @pytest.mark.requirement("AUTH-001")
    def test_a_real_failure():
        assert False, "a real failure"

    @pytest.mark.requirement("AUTH-002")
    def test_its_request_never_got_through(suite_client):
        assert suite_client.get("/v1/payments").status_code == 200

    @pytest.mark.requirement("AUTH-003")
    def test_a_recorded_check_cut_short(suite_client, check_recorder):
        try:
            suite_client.get("/v1/payments")
        except SuiteTransportError as exc:
            check_recorder.record("cut", ["AUTH-003"], Outcome.FAILED, str(exc))

    @pytest.mark.requirement("AUTH-004")
    def test_judged_after_the_wait(suite_client):
        assert suite_client.get("/v1/payments").status_code == 200
"""


def _run(pytester: pytest.Pytester, *args: str) -> tuple[dict[str, CheckResult], list[dict]]:
    pytester.makeini("[pytest]\nconformance_suite_dirs = checks\n")
    pytester.mkdir("checks")
    (pytester.path / "checks" / "test_limited.py").write_text(textwrap.dedent(CHECKS))
    result = pytester.inline_run("-p", "no:randomly", *args)
    checks: dict[str, CheckResult] = {}
    counts: list[dict] = []
    for report in result.getreports("pytest_runtest_logreport"):
        if report.when != "teardown":
            continue
        for name, value in report.user_properties:
            if name == CHECK_PROPERTY:
                check = check_from_dict(value)
                checks[check.check_id.rsplit("::", 1)[-1]] = check
            elif name == RATE_LIMITS_PROPERTY:
                counts.append(value)
    return checks, counts


def test_a_check_whose_request_never_got_through_is_not_exercised(
    pytester: pytest.Pytester,
) -> None:
    proxy = RateLimitingProxy(first=1000, retry_after="3600")
    with proxy.running():
        checks, counts = _run(
            pytester, "--base-url", proxy.base_url, "-k", "real_failure or never or cut_short"
        )
    assert checks["test_a_real_failure"].outcome is Outcome.FAILED
    for name in ("test_its_request_never_got_through", "cut"):
        assert checks[name].outcome is Outcome.NOT_EXERCISED, checks[name]
        reason = checks[name].reason_not_exercised or ""
        assert reason.startswith("rate limited (429, Retry-After '3600'"), reason
        assert checks[name].evidence is None
    assert [RateLimitCounts.from_dict(c).given_up for c in counts] == [1, 1]


def test_a_check_is_judged_on_the_answer_after_the_wait_and_reports_it(
    pytester: pytest.Pytester,
) -> None:
    proxy = RateLimitingProxy(first=1, retry_after="1")
    with proxy.running():
        checks, counts = _run(pytester, "--base-url", proxy.base_url, "-k", "after_the_wait")
    assert checks["test_judged_after_the_wait"].outcome is Outcome.PASSED
    (count,) = counts
    assert count["received_429"] == 1 and count["waited_s"] == 1.0


def test_the_rate_limit_option_spaces_the_requests(pytester: pytest.Pytester) -> None:
    proxy = RateLimitingProxy()
    with proxy.running():
        checks, counts = _run(
            pytester, "--base-url", proxy.base_url, "--rate-limit", "4/s", "-k", "wait or never"
        )
    assert {c.outcome for c in checks.values()} == {Outcome.PASSED}
    # two requests at 4/s: the second waited about a quarter of a second for its slot
    waited = sum(RateLimitCounts.from_dict(c).limiter_waited_s for c in counts)
    assert 0.15 < waited < 0.35


@pytest.mark.parametrize("value", ["fast", "0/s", "-2"])
def test_a_bad_rate_limit_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    pytester.makeini("[pytest]\nconformance_suite_dirs = checks\n")
    result = pytester.runpytest("--base-url", "http://127.0.0.1:9", "--rate-limit", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--rate-limit must be*"])


# -- RATE-001 --------------------------------------------------------------------------------
DECLARED_LIMIT = """
[rate_limit]
status = 429
retry_after_required = true
error_code = "rate_limited"
"""


def _profile_declaring_the_limit(directory: Path) -> Path:
    path = directory / "limited.toml"
    path.write_text(
        resolve_profile_path("default").read_text(encoding="utf-8") + DECLARED_LIMIT,
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("retry_after", "code", "outcome"),
    [
        ("1", "rate_limited", Outcome.PASSED),
        (None, "rate_limited", Outcome.FAILED),
        ("1", "too_many", Outcome.FAILED),
    ],
)
def test_rate_001_judges_each_answer_against_the_declared_limit(
    pytester: pytest.Pytester, retry_after: str | None, code: str, outcome: Outcome
) -> None:
    profile = _profile_declaring_the_limit(pytester.path)
    proxy = RateLimitingProxy(first=1, retry_after=retry_after, code=code)
    with proxy.running():
        checks, _ = _run(
            pytester, "--base-url", proxy.base_url, "--profile", str(profile), "-k", "wait"
        )
    judged = checks["rate_limit.answers"]
    assert judged.requirement_ids == ("RATE-001",)
    assert judged.outcome is outcome, judged.message
    assert checks["test_judged_after_the_wait"].outcome is Outcome.PASSED  # never the 429
    if outcome is Outcome.FAILED:
        assert judged.evidence is not None and judged.evidence.status == 429
        assert "Retry-After" in judged.message or "too_many" in judged.message


def test_without_a_declared_limit_no_answer_is_judged(pytester: pytest.Pytester) -> None:
    proxy = RateLimitingProxy(first=1, retry_after=None, code="anything")
    with proxy.running():
        checks, _ = _run(pytester, "--base-url", proxy.base_url, "-k", "wait")
    assert "rate_limit.answers" not in checks
    assert checks["test_judged_after_the_wait"].outcome is Outcome.PASSED


@pytest.mark.parametrize("declared", [False, True])
def test_the_suite_says_why_rate_001_is_not_exercised(
    pytester: pytest.Pytester, declared: bool
) -> None:
    from conformance.suite.plugin.collection import SUITE_DIR
    from conformance.suite.test_rate_limit import NO_ANSWER, NO_RULE

    args = ["--profile", str(_profile_declaring_the_limit(pytester.path))] if declared else []
    result = pytester.inline_run(
        str(SUITE_DIR / "test_rate_limit.py"), "--base-url", "http://127.0.0.1:9", *args
    )
    (check,) = [
        check_from_dict(value)
        for report in result.getreports("pytest_runtest_logreport")
        if report.when == "teardown"
        for name, value in report.user_properties
        if name == CHECK_PROPERTY
    ]
    assert check.requirement_ids == ("RATE-001",)
    assert check.outcome is Outcome.NOT_EXERCISED
    assert check.reason_not_exercised == (NO_ANSWER if declared else NO_RULE)
