"""The run's time budget inside the suite: past ``--conformance-deadline`` nothing more is sent.

Checks not started yet are not run and say why; a client refuses to send; a check cut short by
the budget is "not exercised", not failed, while a failure found before the budget ran out
stays a failure.
"""

from __future__ import annotations

import textwrap
import time

import httpcore
import httpx
import pytest

from conformance.core.evidence import check_from_dict
from conformance.core.profile import load_profile
from conformance.core.results import Outcome, budget_reason
from conformance.suite.wire.check_properties import CHECK_PROPERTY
from conformance.suite.wire.client import ClientStats, SuiteClient, SuiteTransportError

pytest_plugins = ("pytester",)

assert issubclass(httpcore.ConnectError, Exception)  # see tests/suite/plugin/projects.py


def test_a_client_refuses_to_send_once_the_budget_is_spent() -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={})

    stats = ClientStats(deadline=time.time() - 1, budget_s=60)
    client = SuiteClient(
        "http://server.test", load_profile(), stats=stats, transport=httpx.MockTransport(answer)
    )
    with pytest.raises(SuiteTransportError, match=r"not sent: the run's time budget \(60 s\)"):
        client.get("/v1/payments")
    assert sent == [] and stats.requests_sent == 0
    assert stats.budget_refusals == 1

    stats.deadline = time.time() + 3600
    assert client.get("/v1/payments").status_code == 200


CHECKS = """
    import pytest

    @pytest.mark.requirement("AUTH-001")
    def test_a_failure_before_the_budget_ran_out():
        assert False, "a real failure"

    @pytest.mark.requirement("AUTH-002")
    def test_cut_short_by_the_budget(suite_client):
        suite_client.get("/v1/payments")

    @pytest.mark.requirement("AUTH-003")
    def test_not_started():
        pass
"""


def test_past_the_deadline_checks_are_not_exercised_and_say_why(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nconformance_suite_dirs = checks\n")
    pytester.mkdir("checks")
    (pytester.path / "checks" / "test_budget.py").write_text(textwrap.dedent(CHECKS))
    # a deadline in the past: no check starting now is run
    deadline = time.time() - 1
    result = pytester.inline_run(
        "-p",
        "no:randomly",
        "--base-url",
        "http://127.0.0.1:9",
        "--conformance-deadline",
        str(deadline),
        "--conformance-budget",
        "42",
        "-k",
        "cut_short or not_started",
    )
    checks = {}
    for report in result.getreports("pytest_runtest_logreport"):
        if report.when == "teardown":
            for name, value in report.user_properties:
                if name == CHECK_PROPERTY:
                    check = check_from_dict(value)
                    checks[check.check_id.rsplit("::", 1)[-1]] = check
    assert set(checks) == {"test_cut_short_by_the_budget", "test_not_started"}
    for check in checks.values():
        assert check.outcome is Outcome.NOT_EXERCISED
        assert check.reason_not_exercised == budget_reason(42)


def test_a_check_cut_short_by_the_budget_is_not_exercised_not_failed(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nconformance_suite_dirs = checks\n")
    pytester.mkdir("checks")
    source = """
        import time
        import pytest

        @pytest.mark.requirement("AUTH-001")
        def test_a_failure_before_the_budget_ran_out():
            assert False, "a real failure"

        @pytest.mark.requirement("AUTH-002")
        def test_cut_short(suite_client, pytestconfig):
            # the budget runs out while this check runs: its next request is refused
            time.sleep(max(0.0, float(pytestconfig.getoption("--conformance-deadline"))
                               - time.time()) + 0.05)
            suite_client.get("/v1/payments")
    """
    (pytester.path / "checks" / "test_budget.py").write_text(textwrap.dedent(source))
    result = pytester.inline_run(
        "-p",
        "no:randomly",
        "--base-url",
        "http://127.0.0.1:9",
        "--conformance-deadline",
        str(time.time() + 30),
        "--conformance-budget",
        "30",
        "-k",
        "not cut_short",
    )
    failed = [
        check_from_dict(v)
        for r in result.getreports("pytest_runtest_logreport")
        if r.when == "teardown"
        for k, v in r.user_properties
        if k == CHECK_PROPERTY
    ]
    assert [c.outcome for c in failed] == [Outcome.FAILED]
    assert "a real failure" in failed[0].message

    result = pytester.inline_run(
        "-p",
        "no:randomly",
        "--base-url",
        "http://127.0.0.1:9",
        "--conformance-deadline",
        str(time.time() + 0.5),
        "--conformance-budget",
        "1",
        "-k",
        "cut_short",
    )
    (cut,) = [
        check_from_dict(v)
        for r in result.getreports("pytest_runtest_logreport")
        if r.when == "teardown"
        for k, v in r.user_properties
        if k == CHECK_PROPERTY
    ]
    assert cut.outcome is Outcome.NOT_EXERCISED
    assert cut.reason_not_exercised == budget_reason(1)
