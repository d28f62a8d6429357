"""Preflight proves a target can be tested, and when it cannot, says what to fix."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.engine.preflight import PreflightReport, preflight
from conformance.reference.certificates import CertFiles, issue
from conformance.reference.server import ReferenceServer
from conformance.suite.wire import tls
from conformance.suite.wire.tls import TlsSettings
from tests.engine.hostile import Behaviour, canned, closed_port, hostile_server
from tests.suite.https_servers import echo_server, expired_certificate


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


@pytest.fixture(scope="module")
def server_url(profile: Profile) -> Iterator[str]:
    with ReferenceServer(profile=profile) as server:
        yield server.base_url


def edited(profile: Profile, edit: Callable[[dict[str, Any]], object]) -> Profile:
    data = copy.deepcopy(profile.data)
    edit(data)
    return replace(profile, data=data)


def test_the_reference_server_passes_every_step(profile: Profile, server_url: str) -> None:
    report = preflight(server_url, profile)
    assert report.ok
    assert [s.name for s in report.steps] == [
        "reachable",
        "signed request accepted",
        "fixtures present",
    ]
    assert report.message == ""
    # unsigned probe, signed probe, one statement per currency, second credential
    assert report.requests_sent == 3 + len(profile.currencies)


def test_it_measures_the_servers_round_trip(profile: Profile) -> None:
    with ReferenceServer(profile=profile, latency_ms=40) as slow:
        report = preflight(slow.base_url, profile)
    assert report.ok
    assert report.round_trip_ms is not None
    assert 40 <= report.round_trip_ms < 400


def test_a_failed_first_step_measures_no_round_trip(profile: Profile) -> None:
    report = preflight(f"http://127.0.0.1:{closed_port()}", profile)
    assert report.round_trip_ms is None


def failed_step(report: PreflightReport) -> tuple[str, str]:
    last = report.steps[-1]
    assert not last.ok
    return last.name, last.detail


def test_a_wrong_secret_points_at_the_credentials(profile: Profile, server_url: str) -> None:
    wrong = edited(profile, lambda d: d["credentials"][0].update(api_secret="sk_wrong"))
    report = preflight(server_url, wrong)
    step, detail = failed_step(report)
    assert step == "signed request accepted"
    assert "check the API key and secret" in detail
    assert "sk_wrong" not in report.message


def test_an_unknown_fixture_currency_points_at_the_profile(
    profile: Profile, server_url: str
) -> None:
    def add_currency(data: dict[str, Any]) -> None:
        currencies = data["fixtures"]["currencies"]
        currencies["doge"] = copy.deepcopy(currencies["usdc"])

    report = preflight(server_url, edited(profile, add_currency))
    step, detail = failed_step(report)
    assert step == "fixtures present"
    assert "currency 'doge'" in detail and "[fixtures]" in detail


def test_a_rejected_second_credential_is_named(profile: Profile, server_url: str) -> None:
    wrong = edited(profile, lambda d: d["credentials"][1].update(api_secret="sk_wrong"))
    step, detail = failed_step(preflight(server_url, wrong))
    assert step == "fixtures present"
    assert "second credential 'beta'" in detail


def test_a_closed_port_is_not_reachable(profile: Profile) -> None:
    step, detail = failed_step(preflight(f"http://127.0.0.1:{closed_port()}", profile))
    assert step == "reachable"
    assert "cannot connect to 127.0.0.1" in detail and "--base-url" in detail


@pytest.mark.parametrize(
    ("behaviour", "step", "expected"),
    [
        (Behaviour.HTML, "signed request accepted", "does not look like the Payment Service API"),
        (Behaviour.GARBAGE, "reachable", "not valid HTTP"),
        (Behaviour.CLOSE, "reachable", "closed the connection"),
    ],
)
def test_servers_that_are_not_this_api(
    profile: Profile, behaviour: Behaviour, step: str, expected: str
) -> None:
    with hostile_server(behaviour) as base_url:
        failed, detail = failed_step(preflight(base_url, profile))
    assert failed == step
    assert expected in detail


def test_a_silent_server_fails_after_the_timeout(profile: Profile) -> None:
    with hostile_server(Behaviour.SILENT) as base_url:
        step, detail = failed_step(preflight(base_url, profile, timeout_s=0.3))
    assert step == "reachable"
    assert "no response in time" in detail


def test_a_401_with_a_distant_clock_is_diagnosed_as_clock_skew(profile: Profile) -> None:
    past = format_datetime(datetime.now(UTC) - timedelta(hours=2), usegmt=True)
    response = canned("401 Unauthorized", b'{"code":"unauthorized","message":"no"}', Date=past)
    with hostile_server(Behaviour.CANNED, response) as base_url:
        step, detail = failed_step(preflight(base_url, profile))
    assert step == "signed request accepted"
    assert "clock differs" in detail and "-72" in detail


@pytest.mark.parametrize(
    ("status", "expected"),
    [("404 Not Found", "API root"), ("500 Internal Server Error", "answered 500")],
)
def test_json_errors_on_the_probe(profile: Profile, status: str, expected: str) -> None:
    response = canned(status, b'{"code":"x","message":"y"}')
    with hostile_server(Behaviour.CANNED, response) as base_url:
        step, detail = failed_step(preflight(base_url, profile))
    assert step == "signed request accepted"
    assert expected in detail


def test_a_url_that_is_not_http_is_rejected(profile: Profile) -> None:
    step, detail = failed_step(preflight("ftp://example.test", profile))
    assert step == "reachable"
    assert "not an http://" in detail


@pytest.mark.parametrize("status", ["200 OK", "401 Unauthorized"])
def test_a_deeply_nested_body_is_refused_not_parsed(profile: Profile, status: str) -> None:
    with hostile_server(Behaviour.CANNED, canned(status, b"[" * 70_000)) as base_url:
        step, detail = failed_step(preflight(base_url, profile))
    assert step == "signed request accepted"
    if status == "200 OK":
        assert "nests deeper than 256 levels" in detail


def test_an_unexpected_error_in_a_step_is_a_failed_step_not_a_traceback(
    profile: Profile, server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*args: object) -> None:
        raise RecursionError("maximum recursion depth exceeded while decoding a JSON array")

    monkeypatch.setattr("conformance.engine.preflight._fixtures", explode)
    step, detail = failed_step(preflight(server_url, profile))
    assert step == "fixtures present"
    assert "RecursionError: maximum recursion depth exceeded" in detail


# -- TLS -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertFiles:
    return issue(tmp_path_factory.mktemp("certs"))


def tls_failure(url: str, profile: Profile, settings: TlsSettings) -> tuple[str, str]:
    with tls.using(settings):
        return failed_step(preflight(url, profile))


def test_an_untrusted_certificate_stops_preflight_naming_cacert_and_insecure(
    profile: Profile, certs: CertFiles
) -> None:
    with echo_server(certs.server_cert, certs.server_key) as server:
        step, detail = tls_failure(server.url, profile, TlsSettings())
    assert step == "reachable"
    assert "the server's certificate is not trusted (CERTIFICATE_VERIFY_FAILED: " in detail
    assert detail.endswith("give its CA with --cacert PATH, or --insecure to skip verification")


def test_a_server_wanting_a_client_certificate_stops_preflight_naming_client_cert(
    profile: Profile, certs: CertFiles
) -> None:
    with echo_server(certs.server_cert, certs.server_key, client_ca=certs.ca) as server:
        step, detail = tls_failure(server.url, profile, TlsSettings(cacert=certs.ca))
    assert step == "reachable"
    assert "asks for a client certificate (mutual TLS)" in detail
    assert "--client-cert PATH [--client-key PATH]" in detail


def test_a_hostname_mismatch_and_an_expired_certificate_are_named(
    profile: Profile, certs: CertFiles, tmp_path: Path
) -> None:
    with echo_server(certs.server_cert, certs.server_key, host="127.0.0.2") as server:
        _, mismatch = tls_failure(server.url, profile, TlsSettings(cacert=certs.ca))
    cert, key = expired_certificate(tmp_path)
    with echo_server(cert, key) as server:
        _, expired = tls_failure(server.url, profile, TlsSettings(cacert=cert))
    assert "the server's certificate is not valid for this host name" in mismatch
    assert "the server's certificate has expired" in expired


def test_https_to_a_plain_http_server_is_named(profile: Profile, server_url: str) -> None:
    step, detail = failed_step(preflight(server_url.replace("http://", "https://"), profile))
    assert step == "reachable"
    assert "the server does not speak TLS on this port" in detail
