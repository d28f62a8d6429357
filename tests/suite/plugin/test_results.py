"""What each check records (``conformance.suite.plugin.results``): its outcome, sub-checks,
evidence and redaction, and only an answer of the server fails a requirement.

Each test writes a small project with pytester (``tests.suite.plugin.projects``). Files under
``checks/`` are conformance checks, files elsewhere are ordinary tests.
"""

from __future__ import annotations

import pytest

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.suite.wire.check_properties import REQUESTS_PROPERTY
from tests.suite.plugin.projects import by_test, project, recorded, server_url, write_check

pytest_plugins = ("pytester",)
__all__ = ["project", "server_url"]  # fixtures, used by name


# -- recording -------------------------------------------------------------------------------
def test_each_check_records_its_outcome(project: pytest.Pytester) -> None:
    write_check(
        project,
        "test_outcomes",
        """
        import pytest

        @pytest.fixture
        def broken():
            raise RuntimeError("cannot prepare")

        @pytest.mark.requirement("AUTH-001")
        @pytest.mark.family("auth")
        def test_passes():
            pass

        @pytest.mark.requirement("AUTH-002", "AUTH-003")
        def test_fails():
            assert 1 == 2, "expected 401, got 200"

        @pytest.mark.requirement("HELP-001")
        def test_skips():
            pytest.skip("the profile has no test helpers")

        @pytest.mark.requirement("AUTH-004")
        def test_setup_error(broken):
            pass

        @pytest.mark.requirement("AUTH-005")
        @pytest.mark.parametrize("operation_id", ["createPayment"])
        def test_parametrized(operation_id):
            pass

        @pytest.mark.requirement("AUTH-006")
        def test_named_operation(record_operation):
            record_operation("listPayments")
        """,
    )
    checks = by_test(recorded(project.inline_run()))
    assert checks["test_passes"].outcome is Outcome.PASSED
    assert checks["test_passes"].family == "auth"
    assert checks["test_passes"].requirement_ids == ("AUTH-001",)
    failed = checks["test_fails"]
    assert failed.outcome is Outcome.FAILED
    assert failed.requirement_ids == ("AUTH-002", "AUTH-003")
    assert failed.message.startswith("expected 401, got 200")
    assert failed.family == "outcomes"  # no family marker: the module name
    skipped = checks["test_skips"]
    assert skipped.outcome is Outcome.NOT_EXERCISED
    assert skipped.reason_not_exercised == "the profile has no test helpers"
    errored = checks["test_setup_error"]
    assert errored.outcome is Outcome.FAILED
    assert "cannot prepare" in errored.message
    assert checks["test_parametrized[createPayment]"].operation_id == "createPayment"
    assert checks["test_named_operation"].operation_id == "listPayments"


def test_sub_checks_are_recorded_and_a_failed_one_fails_the_test(project: pytest.Pytester) -> None:
    write_check(
        project,
        "test_schema",
        """
        import pytest

        @pytest.mark.requirement("SHAPE-001", "SHAPE-002")
        @pytest.mark.family("schema")
        def test_phase(check_recorder):
            check_recorder.record("status", ["SHAPE-001"], "passed", operation_id="listPayments")
            check_recorder.record("body", ["SHAPE-002"], "failed", "body is not an object")
        """,
    )
    result = project.inline_run()
    result.assertoutcome(failed=1)
    checks = recorded(result)
    assert [(c.check_id, c.outcome) for c in checks] == [
        ("status", Outcome.PASSED),
        ("body", Outcome.FAILED),
    ]
    assert checks[0].family == "schema"
    call = next(r for r in result.getreports("pytest_runtest_logreport") if r.when == "call")
    assert "body (SHAPE-002): body is not an object" in str(call.longrepr)


def test_a_failed_check_carries_the_last_exchange_as_redacted_evidence(
    project: pytest.Pytester, server_url: str
) -> None:
    write_check(
        project,
        "test_evidence",
        """
        import pytest

        @pytest.mark.requirement("AUTH-001")
        def test_unsigned_is_accepted(suite_client, other_client):
            other_client.get("/v1/payments")
            response = suite_client.get("/v1/payments", params={"limit": 2}, sign=False)
            assert response.status_code == 200, "expected 200"
        """,
    )
    result = project.inline_run("--base-url", server_url)
    (check,) = recorded(result)
    assert check.outcome is Outcome.FAILED
    assert check.evidence is not None
    assert check.evidence.status == 401
    assert check.evidence.url.endswith("/v1/payments?limit=2")
    requests = [
        v
        for r in result.getreports("pytest_runtest_logreport")
        if r.when == "teardown"
        for k, v in r.user_properties
        if k == REQUESTS_PROPERTY
    ]
    assert requests == [2]


# -- only an answer of the server fails a requirement ------------------------------------------
def test_errors_of_hypothesis_are_not_exercised_and_failures_inside_them_stay(
    project: pytest.Pytester,
) -> None:
    write_check(
        project,
        "test_tool",
        """
        import pytest
        from hypothesis.errors import FlakyFailure, FlakyStrategyDefinition, Unsatisfiable

        @pytest.mark.requirement("PAY-001")
        def test_inconsistent_generation():
            raise FlakyStrategyDefinition("Inconsistent data generation! Data generation ...")

        @pytest.mark.requirement("PAY-002")
        def test_unsatisfiable():
            raise Unsatisfiable("Unable to satisfy assumptions of test_unsatisfiable")

        @pytest.mark.requirement("PAY-003")
        def test_flaky_server_failure():
            raise FlakyFailure("did not reproduce", [AssertionError("expected 201, got 500")])

        @pytest.mark.requirement("PAY-004", "PAY-005")
        def test_recorded_before(check_recorder):
            check_recorder.record("status", ["PAY-004"], "failed", "expected 201, got 500")
            raise FlakyStrategyDefinition("Inconsistent data generation!")
        """,
    )
    checks = recorded(project.inline_run())
    tests = by_test(checks)
    for name, error in (
        ("test_inconsistent_generation", "FlakyStrategyDefinition: Inconsistent data generation"),
        ("test_unsatisfiable", "Unsatisfiable: Unable to satisfy"),
    ):
        assert tests[name].outcome is Outcome.NOT_EXERCISED, name
        assert tests[name].reason_not_exercised is not None
        assert "an error of the test tool, not of the server" in tests[name].reason_not_exercised
        assert f"hypothesis {error}" in tests[name].reason_not_exercised
    assert tests["test_flaky_server_failure"].outcome is Outcome.FAILED
    assert [(c.check_id, c.outcome) for c in checks if "PAY-004" in c.requirement_ids] == [
        ("status", Outcome.FAILED),
        ("test_tool.py::test_recorded_before", Outcome.NOT_EXERCISED),
    ]


def test_a_tls_error_of_another_http_stack_is_not_exercised_and_the_run_goes_on(
    project: pytest.Pytester,
) -> None:
    write_check(
        project,
        "test_stacks",
        """
        import pytest
        import requests

        @pytest.mark.requirement("PAY-001")
        def test_schemathesis_session():
            raise requests.exceptions.SSLError(
                "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed "
                "certificate (_ssl.c:1006)"
            )

        @pytest.mark.requirement("PAY-002")
        def test_garbled_reply():
            raise requests.exceptions.ChunkedEncodingError("invalid chunk length")

        @pytest.mark.requirement("PAY-003")
        def test_next():
            pass
        """,
    )
    checks = by_test(recorded(project.inline_run()))
    tls = checks["test_schemathesis_session"]
    assert tls.outcome is Outcome.NOT_EXERCISED
    # in the words of the suite's own client, naming the options that fix it
    assert tls.reason_not_exercised == (
        "no answer from the server, not judged: the server's certificate is not trusted "
        "(CERTIFICATE_VERIFY_FAILED: self-signed certificate): give its CA with --cacert PATH, "
        "or --insecure to skip verification"
    )
    assert checks["test_garbled_reply"].outcome is Outcome.FAILED  # bytes came back
    assert checks["test_next"].outcome is Outcome.PASSED


def test_a_request_without_an_answer_is_not_exercised_until_the_server_is_gone(
    project: pytest.Pytester,
) -> None:
    import socket

    # bound and never listening: connections are refused, and no other test's server can take
    # the port while this test runs (a closed port can be handed out again)
    reserved = socket.socket()
    reserved.bind(("127.0.0.1", 0))
    closed = reserved.getsockname()[1]
    write_check(
        project,
        "test_gone",
        """
        import pytest

        @pytest.mark.parametrize("n", range(4))
        @pytest.mark.requirement("PAY-001")
        def test_refused(suite_client, n):
            suite_client.get("/v1/payments")
        """,
    )
    with reserved:
        run = project.inline_run("--base-url", f"http://127.0.0.1:{closed}")
    checks = by_test(recorded(run))
    assert [c.outcome for c in checks.values()] == [Outcome.NOT_EXERCISED] * 4
    first = checks["test_refused[0]"].reason_not_exercised or ""
    assert first.startswith("no answer from the server, not judged: GET http://127.0.0.1:")
    assert "could not connect" in first
    # the third refusal in a row: the server is gone, and the rest of the run is not run
    assert "the server stopped answering (3 connections in a row" in str(
        checks["test_refused[2]"].reason_not_exercised
    )
    assert str(checks["test_refused[3]"].reason_not_exercised).startswith(
        "not run: the server stopped answering"
    )


def test_secrets_never_reach_a_recorded_message(project: pytest.Pytester) -> None:
    secret = load_profile().primary.api_secret
    write_check(
        project,
        "test_leak",
        f"""
        import pytest

        @pytest.mark.requirement("AUTH-001")
        def test_leaks():
            assert False, "secret is {secret}"
        """,
    )
    (check,) = recorded(project.inline_run())
    assert secret not in check.message
    assert "[redacted]" in check.message
