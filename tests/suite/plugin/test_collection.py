"""Which tests run (``conformance.suite.plugin.collection``): the requirement marker,
``--only``/``--skip`` and the order under ``--exitfirst``.

Each test writes a small project with pytester (``tests.suite.plugin.projects``). Files under
``checks/`` are conformance checks, files elsewhere are ordinary tests.
"""

from __future__ import annotations

import pytest

from tests.suite.plugin.projects import project, server_url, write_check

pytest_plugins = ("pytester",)
__all__ = ["project", "server_url"]  # fixtures, used by name


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
