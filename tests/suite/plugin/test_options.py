"""The plugin's options (``conformance.suite.plugin.options``): what reaches
``conformance_settings``, the usage errors, and the TLS options and gateway headers of the
session.

Each test writes a small project with pytester (``tests.suite.plugin.projects``). Files under
``checks/`` are conformance checks, files elsewhere are ordinary tests.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.suite.plugin.projects import project, write_check

pytest_plugins = ("pytester",)
__all__ = ["project"]  # the fixture, used by name


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
