"""The pytest plugin: options, the requirement marker, --only/--skip, recording, inertness.

Each test writes a small project with pytester. Files under ``checks/`` are conformance
checks (the ``conformance_suite_dirs`` ini option), files elsewhere are ordinary tests.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import httpcore
import pytest

from conformance.core.evidence import check_from_dict
from conformance.core.profile import load_profile
from conformance.core.results import CheckResult, Outcome
from conformance.reference.server import ReferenceServer
from conformance.suite.wire.check_properties import CHECK_PROPERTY, REQUESTS_PROPERTY

pytest_plugins = ("pytester",)

# pytester drops modules first imported during an inline run; httpx maps httpcore's exception
# classes once, so httpcore must be imported before any inline run for later tests to see them.
assert issubclass(httpcore.ConnectError, Exception)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nconformance_suite_dirs = checks\n")
    pytester.mkdir("checks")
    return pytester


def write_check(pytester: pytest.Pytester, name: str, source: str) -> None:
    (pytester.path / "checks" / f"{name}.py").write_text(textwrap.dedent(source))


def recorded(result: pytest.HookRecorder) -> list[CheckResult]:
    checks = []
    for report in result.getreports("pytest_runtest_logreport"):
        if report.when == "teardown":
            checks += [
                check_from_dict(v)
                for k, v in report.user_properties
                if k == CHECK_PROPERTY and isinstance(v, dict)
            ]
    return checks


def by_test(checks: list[CheckResult]) -> dict[str, CheckResult]:
    return {c.check_id.split("::")[-1]: c for c in checks}


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with ReferenceServer(profile=load_profile()) as server:
        yield server.base_url


# -- inert outside the suite -----------------------------------------------------------------
def test_ordinary_tests_are_left_alone(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_plain="""
        from hypothesis import settings

        def test_unmarked_is_fine(request):
            assert settings.get_current_profile_name() != "payment-conformance"
            assert request.node.user_properties == []
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "seed" not in result.stdout.str()  # no conformance header


def test_hypothesis_state_is_restored_after_a_suite_session(project: pytest.Pytester) -> None:
    from hypothesis import core, settings

    before = (settings.get_current_profile_name(), core.global_force_seed)
    write_check(
        project,
        "test_seeded",
        """
        import pytest
        from hypothesis import core, settings

        @pytest.mark.requirement("AUTH-001")
        def test_seed_is_forced():
            assert core.global_force_seed == 99
            assert settings.get_current_profile_name() == "payment-conformance"
            assert settings.default.database is None
        """,
    )
    project.inline_run("--conformance-seed", "99").assertoutcome(passed=1)
    assert (settings.get_current_profile_name(), core.global_force_seed) == before


def test_a_session_draws_no_constant_of_the_modules_the_process_imported(
    project: pytest.Pytester,
) -> None:
    # Hypothesis draws some values from the literals of the process's own modules: a module
    # imported before the run (a caller's, a benchmark's) changed what a seed generated.
    noise = [123456.5 + i for i in range(1000)]
    (project.path / "checks" / "noise_constants.py").write_text(f"NOISE = {noise!r}\n")
    write_check(
        project,
        "test_drawn",
        """
        import pytest
        from hypothesis import given, settings, strategies as st

        from noise_constants import NOISE

        @pytest.mark.requirement("AUTH-001")
        @settings(max_examples=300)
        @given(st.floats())
        def test_draws_none_of_them(value):
            assert value not in NOISE
        """,
    )
    project.syspathinsert(project.path / "checks")
    from hypothesis.internal.conjecture import providers

    before = providers._get_local_constants
    project.inline_run("--conformance-seed", "99").assertoutcome(passed=1)
    assert providers._get_local_constants is before  # let back in after the session


# -- the marker ------------------------------------------------------------------------------
def test_a_check_without_requirement_marker_is_a_usage_error(project: pytest.Pytester) -> None:
    write_check(
        project,
        "test_unmarked",
        """
        def test_forgot_the_marker():
            pass
        """,
    )
    result = project.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*must name the requirements*", "*test_forgot_the_marker*"])


def test_under_xdist_an_unmarked_check_errors_instead(project: pytest.Pytester) -> None:
    write_check(
        project,
        "test_unmarked",
        """
        def test_forgot_the_marker():
            pass
        """,
    )
    result = project.runpytest_inprocess("-n", "1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*ERROR at setup of test_forgot_the_marker*", "*must name the requirements*"]
    )
    assert "INTERNALERROR" not in result.stdout.str()


# -- options ---------------------------------------------------------------------------------
SETTINGS_CHECK = """
import pytest

@pytest.mark.requirement("AUTH-001")
def test_settings(conformance_settings, conformance_seed, record_property):
    record_property("settings", repr(conformance_settings))
    record_property("seed", conformance_seed)
"""


def settings_of(result: pytest.HookRecorder) -> dict[str, Any]:
    call = next(r for r in result.getreports("pytest_runtest_logreport") if r.when == "call")
    return dict(call.user_properties)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), ["max_examples=20", "quick=False"]),
        (("--quick",), ["max_examples=3", "quick=True"]),
        (("--quick", "--max-examples", "9"), ["max_examples=9", "quick=True"]),
        (("--only", "AUTH,IDEM", "--only", "spec 5"), ["only=('AUTH', 'IDEM', 'spec 5')"]),
        (("--base-url", "http://x.test/"), ["base_url='http://x.test'"]),
    ],
)
def test_options_reach_conformance_settings(
    project: pytest.Pytester, args: tuple[str, ...], expected: list[str]
) -> None:
    write_check(project, "test_settings", SETTINGS_CHECK)
    result = project.inline_run("--conformance-seed", "7", *args)
    properties = settings_of(result)
    assert properties["seed"] == 7
    for part in expected:
        assert part in properties["settings"]


def test_without_a_seed_one_is_chosen_and_shown(project: pytest.Pytester) -> None:
    write_check(project, "test_settings", SETTINGS_CHECK)
    result = project.runpytest_inprocess("checks", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--max-examples", "0"), "--max-examples must be positive"),
        (("--conformance-seed", "x"), "--conformance-seed must be an integer"),
        (("--base-url", "ftp://x"), "--base-url must start with http"),
        (("--base-url", "http://x", "--embedded-fault", "f"), "cannot be combined with --base-url"),
    ],
)
def test_bad_options_are_usage_errors(
    project: pytest.Pytester, args: tuple[str, ...], message: str
) -> None:
    result = project.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_a_bad_profile_is_a_usage_error_once_checks_are_collected(
    project: pytest.Pytester,
) -> None:
    write_check(project, "test_settings", SETTINGS_CHECK)
    result = project.runpytest_inprocess("--profile", "no-such-profile")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "no profile named 'no-such-profile'" in result.stderr.str()


# -- --only / --skip -------------------------------------------------------------------------
SELECTION_CHECKS = """
import pytest

@pytest.mark.requirement("AUTH-001")
def test_auth():
    pass

@pytest.mark.requirement("IDEM-001", "AUTH-002")
def test_idempotency():
    pass

@pytest.mark.requirement("STATUS-001")
def test_status():
    pass
"""


@pytest.mark.parametrize(
    ("args", "ran"),
    [
        (("--only", "AUTH"), {"test_auth", "test_idempotency"}),
        (("--only", "IDEM-001"), {"test_idempotency"}),
        (("--only", "spec 5", "--skip", "AUTH-002"), {"test_auth"}),
        (("--skip", "AUTH,IDEM"), {"test_status"}),
    ],
)
def test_only_and_skip_select_by_requirement(
    project: pytest.Pytester, args: tuple[str, ...], ran: set[str]
) -> None:
    write_check(project, "test_selection", SELECTION_CHECKS)
    project.makepyfile(test_ordinary="def test_ordinary(): pass")
    result = project.inline_run(*args)
    passed = {r.nodeid.split("::")[-1] for r in result.getreports() if r.when == "call"}
    assert passed == ran | {"test_ordinary"}


def test_an_unknown_selector_is_a_usage_error(project: pytest.Pytester) -> None:
    write_check(project, "test_selection", SELECTION_CHECKS)
    result = project.runpytest_inprocess("--only", "NOPE")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--only/--skip" in result.stderr.str()


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
            raise requests.exceptions.SSLError("[SSL: CERTIFICATE_VERIFY_FAILED] self-signed")

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
    assert tls.reason_not_exercised == (
        "no answer from the server, not judged: SSLError: [SSL: CERTIFICATE_VERIFY_FAILED] "
        "self-signed"
    )
    assert checks["test_garbled_reply"].outcome is Outcome.FAILED  # bytes came back
    assert checks["test_next"].outcome is Outcome.PASSED


def test_a_request_without_an_answer_is_not_exercised_until_the_server_is_gone(
    project: pytest.Pytester,
) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
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
    checks = by_test(recorded(project.inline_run("--base-url", f"http://127.0.0.1:{closed}")))
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


# -- fixtures --------------------------------------------------------------------------------
def test_without_base_url_an_embedded_reference_server_runs(project: pytest.Pytester) -> None:
    write_check(
        project,
        "test_embedded",
        """
        import pytest

        @pytest.mark.requirement("AUTH-001")
        def test_target(conformance_target, suite_client, other_client, conformance_profile):
            assert conformance_target.embedded
            assert conformance_target.base_url.startswith("http://127.0.0.1:")
            assert suite_client.credential.name == "alpha"
            assert other_client.credential.name == "beta"
            assert suite_client.get("/v1/payments").status_code == 200
            assert conformance_profile.name == "default"
        """,
    )
    project.inline_run().assertoutcome(passed=1)


def test_api_key_and_secret_replace_the_first_credential(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_check(
        project,
        "test_credential",
        """
        import pytest

        @pytest.mark.requirement("AUTH-001")
        def test_credential(conformance_profile):
            assert conformance_profile.primary.api_key == "mk_other"
            assert conformance_profile.primary.api_secret == "from-env"
            assert conformance_profile.secondary.api_key == "mk_test_beta"
        """,
    )
    monkeypatch.setenv("PAYMENT_CONFORMANCE_API_SECRET", "from-env")
    project.inline_run("--api-key", "mk_other").assertoutcome(passed=1)


@pytest.mark.parametrize("option", ["--api-key", "--api-secret"])
def test_the_embedded_server_refuses_credentials_other_than_its_own(
    project: pytest.Pytester, option: str
) -> None:
    write_check(
        project,
        "test_embedded_credential",
        """
        import pytest

        @pytest.mark.requirement("AUTH-001")
        def test_signed(suite_client):
            assert suite_client.get("/v1/payments").status_code == 200
        """,
    )
    result = project.runpytest_inprocess(option, "given_7f3a")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"{option} (or $PAYMENT_CONFORMANCE_" in result.stdout.str()
    assert "given_7f3a" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes()  # nothing passed against a server that adopted them


def test_same_seed_same_hypothesis_examples(project: pytest.Pytester) -> None:
    write_check(
        project,
        "test_drawn",
        """
        import pytest
        from hypothesis import given, strategies as st

        DRAWN = []

        @pytest.mark.requirement("AUTH-001")
        @given(st.integers())
        def test_draw(value):
            DRAWN.append(value)

        @pytest.mark.requirement("AUTH-001")
        def test_report(record_property):
            record_property("drawn", list(DRAWN))
        """,
    )

    def drawn(seed: str) -> list[int]:
        result = project.inline_run("--conformance-seed", seed, "--max-examples", "5")
        call = [r for r in result.getreports("pytest_runtest_logreport") if r.when == "call"][-1]
        value = dict(call.user_properties)["drawn"]
        assert isinstance(value, list)
        return value

    first = drawn("1234")
    assert len(first) <= 5 + 1
    assert drawn("1234") == first


def test_results_and_the_seed_travel_through_xdist(project: pytest.Pytester) -> None:
    write_check(
        project,
        "test_parallel",
        """
        import pytest

        @pytest.mark.requirement("AUTH-001")
        @pytest.mark.parametrize("n", range(4))
        def test_seed(n, conformance_seed, record_property):
            record_property("seed", conformance_seed)
        """,
    )
    result = project.inline_run("-n", "2")
    checks = recorded(result)
    assert len(checks) == 4
    assert all(c.outcome is Outcome.PASSED for c in checks)
    seeds = {
        dict(r.user_properties)["seed"]
        for r in result.getreports("pytest_runtest_logreport")
        if r.when == "call"
    }
    assert len(seeds) == 1


def test_embedded_fault_switches_on_a_reference_fault(project: pytest.Pytester) -> None:
    write_check(
        project,
        "test_fault",
        """
        import pytest

        @pytest.mark.requirement("AUTH-016")
        def test_nonce_reuse_accepted(conformance_target, suite_client):
            assert conformance_target.embedded
            assert conformance_target.fault == "auth-nonce-not-checked"
            first = suite_client.get("/v1/payments", nonce="n" * 20)
            again = suite_client.get("/v1/payments", nonce="n" * 20)
            assert (first.status_code, again.status_code) == (200, 200)
        """,
    )
    project.inline_run("--embedded-fault", "auth-nonce-not-checked").assertoutcome(passed=1)


# -- --exitfirst -----------------------------------------------------------------------------
FAILING_AND_LATER_CHECKS = """
import pytest

@pytest.mark.requirement("AUTH-001")
def test_a_recorded_failure(check_recorder):
    check_recorder.record("auth: first", ["AUTH-001"], "failed", "the server said yes")

@pytest.mark.requirement("AUTH-002")
def test_a_later_check():
    pass
"""


def test_exitfirst_stops_at_the_first_recorded_failure(
    project: pytest.Pytester, server_url: str
) -> None:
    write_check(project, "test_two", FAILING_AND_LATER_CHECKS)
    result = project.runpytest_inprocess("--base-url", server_url, "-p", "no:randomly", "-x")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1)  # the later check never ran
    without = project.runpytest_inprocess("--base-url", server_url, "-p", "no:randomly")
    without.assert_outcomes(failed=1, passed=1)


def test_exitfirst_runs_the_one_exchange_families_before_the_scenarios(
    project: pytest.Pytester, server_url: str
) -> None:
    write_check(
        project,
        "test_a_scenario",
        """
        import pytest

        pytestmark = pytest.mark.family("payments")

        @pytest.mark.requirement("PAY-001")
        def test_a_long_scenario():
            pass
        """,
    )
    write_check(
        project,
        "test_b_auth",
        """
        import pytest

        pytestmark = pytest.mark.family("auth")

        @pytest.mark.requirement("AUTH-001")
        def test_one_exchange(check_recorder):
            check_recorder.record("auth: one", ["AUTH-001"], "failed", "accepted")
        """,
    )
    first = project.runpytest_inprocess("--base-url", server_url, "-p", "no:randomly", "-x")
    first.assert_outcomes(failed=1)  # the auth check ran first and stopped the session
    whole = project.runpytest_inprocess("--base-url", server_url, "-p", "no:randomly", "-v")
    whole.stdout.fnmatch_lines(["*test_a_long_scenario PASSED*", "*test_one_exchange FAILED*"])


# -- TLS and gateway headers -----------------------------------------------------------------
CONNECTION_CHECK = """
import pytest
from conformance.suite.wire import gateway
from conformance.suite.wire import tls

@pytest.mark.requirement("AUTH-001")
def test_connection():
    assert tls.active() == tls.TlsSettings(insecure=True)
    assert gateway.active() == (("X-Gateway-Key", "gwk-from-the-environment"),)
"""


def test_tls_options_and_gateway_headers_hold_for_the_session_only(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.suite.wire import gateway, tls

    write_check(project, "test_connection", CONNECTION_CHECK)
    monkeypatch.setenv(gateway.HEADERS_ENV, "X-Gateway-Key: gwk-from-the-environment")
    project.inline_run("--insecure").assertoutcome(passed=1)
    assert tls.active() == tls.TlsSettings()
    assert gateway.active() == ()


@pytest.mark.parametrize(
    ("args", "headers", "message"),
    [
        (("--cacert", "/no/such/ca.pem"), "", "--cacert /no/such/ca.pem: no such file"),
        (("--client-key", "/no/key.pem"), "", "--client-key needs --client-cert"),
        ((), "X-Api-Key: mk_mine", "the API or HTTP itself uses this header"),
        ((), "X-Gateway-Key", "expected 'Name: value'"),
    ],
)
def test_bad_tls_options_and_gateway_headers_are_usage_errors(
    project: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    headers: str,
    message: str,
) -> None:
    from conformance.suite.wire.gateway import HEADERS_ENV

    monkeypatch.setenv(HEADERS_ENV, headers)
    result = project.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
