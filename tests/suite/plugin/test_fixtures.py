"""The fixtures of the plugin (``conformance.suite.plugin.fixtures``): the embedded reference
server, credentials, seeds, xdist and embedded faults.

Each test writes a small project with pytester (``tests.suite.plugin.projects``). Files under
``checks/`` are conformance checks, files elsewhere are ordinary tests.
"""

from __future__ import annotations

import pytest

from conformance.core.results import Outcome
from tests.suite.plugin.projects import project, recorded, write_check

pytest_plugins = ("pytester",)
__all__ = ["project"]  # the fixture, used by name


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
