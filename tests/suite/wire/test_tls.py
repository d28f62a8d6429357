"""One TLS configuration for both HTTP stacks of a run: ``SuiteClient`` (httpx) and the
``requests`` session schemathesis sends through verify alike, whatever requests' own
``verify`` or the environment would say."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from conformance.core.profile import Profile, load_profile
from conformance.reference.certificates import CertFiles, issue
from conformance.suite.schema.loading import signed_session
from conformance.suite.tool_errors import SERVER_GONE
from conformance.suite.wire import tls
from conformance.suite.wire.client import ClientStats, SuiteClient, SuiteTlsError, gone_reason
from conformance.suite.wire.tls import TlsError, TlsSettings
from tests.engine.hostile import closed_port
from tests.suite.https_servers import EchoServer, echo_server, expired_certificate

# These tests switch certificate checks off on purpose: urllib3's warning says so every time.
INSECURE_ON_PURPOSE = pytest.mark.filterwarnings(
    "ignore::urllib3.exceptions.InsecureRequestWarning"
)


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertFiles:
    return issue(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def other_certs(tmp_path_factory: pytest.TempPathFactory) -> CertFiles:
    """A second, unrelated CA and its certificates."""
    return issue(tmp_path_factory.mktemp("other-certs"))


@pytest.fixture
def server(certs: CertFiles) -> Iterator[EchoServer]:
    with echo_server(certs.server_cert, certs.server_key) as echo:
        yield echo


@pytest.fixture
def mtls_server(certs: CertFiles) -> Iterator[EchoServer]:
    with echo_server(certs.server_cert, certs.server_key, client_ca=certs.ca) as echo:
        yield echo


@pytest.fixture(autouse=True)
def no_trust_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (tls.CERT_FILE_ENV, tls.CERT_DIR_ENV, "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)


def via_suite_client(url: str, profile: Profile) -> int:
    with SuiteClient(url, profile) as client:
        return client.get("/v1/payments").status_code


def via_schema_session(url: str, profile: Profile, **kwargs: object) -> int:
    with signed_session(profile) as session:
        return session.get(url + "/v1/payments", timeout=5, **kwargs).status_code  # type: ignore[arg-type]


def both_stacks(url: str, profile: Profile) -> tuple[int | str, int | str]:
    """What each stack got: a status, or ``"refused"`` when its TLS handshake failed."""
    try:
        httpx_status: int | str = via_suite_client(url, profile)
    except SuiteTlsError:
        httpx_status = "refused"
    try:
        requests_status: int | str = via_schema_session(url, profile)
    except requests.exceptions.SSLError:
        requests_status = "refused"
    return httpx_status, requests_status


# -- the same verdict on both stacks ---------------------------------------------------------
def test_both_stacks_trust_the_private_ca_given_with_cacert(
    server: EchoServer, certs: CertFiles, profile: Profile
) -> None:
    with tls.using(TlsSettings(cacert=certs.ca)):
        assert both_stacks(server.url, profile) == (200, 200)
    assert len(server.seen) == 2


def test_both_stacks_refuse_a_private_ca_they_were_not_given(
    server: EchoServer, other_certs: CertFiles, profile: Profile
) -> None:
    assert both_stacks(server.url, profile) == ("refused", "refused")  # certifi's CAs
    with tls.using(TlsSettings(cacert=other_certs.ca)):
        assert both_stacks(server.url, profile) == ("refused", "refused")
    assert server.seen == []


@INSECURE_ON_PURPOSE
def test_both_stacks_accept_any_certificate_with_insecure(
    server: EchoServer, profile: Profile
) -> None:
    with tls.using(TlsSettings(insecure=True)):
        assert both_stacks(server.url, profile) == (200, 200)


def test_both_stacks_honour_ssl_cert_file_without_cacert(
    server: EchoServer, certs: CertFiles, profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The issue's case: with SSL_CERT_FILE and REQUESTS_CA_BUNDLE set, one stack trusted the CA
    # and the other did not.
    monkeypatch.setenv(tls.CERT_FILE_ENV, str(certs.ca))
    with tls.using(TlsSettings()):
        assert both_stacks(server.url, profile) == (200, 200)


def test_cacert_replaces_ssl_cert_file(
    server: EchoServer,
    certs: CertFiles,
    other_certs: CertFiles,
    profile: Profile,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(tls.CERT_FILE_ENV, str(certs.ca))
    with tls.using(TlsSettings(cacert=other_certs.ca)):
        assert both_stacks(server.url, profile) == ("refused", "refused")


@INSECURE_ON_PURPOSE
def test_requests_own_verify_cannot_loosen_or_change_the_run_s_tls(
    server: EchoServer,
    certs: CertFiles,
    other_certs: CertFiles,
    profile: Profile,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certs.ca))
    with pytest.raises(requests.exceptions.SSLError):
        via_schema_session(server.url, profile, verify=False)
    with pytest.raises(requests.exceptions.SSLError):
        via_schema_session(server.url, profile, verify=str(certs.ca))
    with tls.using(TlsSettings(cacert=certs.ca)):
        # requests would load its CA bundle into the context, or switch verification off
        assert via_schema_session(server.url, profile, verify=True) == 200
        assert via_schema_session(server.url, profile, verify=str(other_certs.ca)) == 200
    with tls.using(TlsSettings(insecure=True)):
        assert via_schema_session(server.url, profile, verify=True) == 200


def test_both_stacks_present_the_client_certificate(
    mtls_server: EchoServer, certs: CertFiles, profile: Profile
) -> None:
    settings = TlsSettings(
        cacert=certs.ca, client_cert=certs.client_cert, client_key=certs.client_key
    )
    with tls.using(settings):
        assert both_stacks(mtls_server.url, profile) == (200, 200)
    assert [seen.client_cn for seen in mtls_server.seen] == ["payment-conformance client"] * 2


def test_a_client_certificate_file_may_hold_its_key(
    mtls_server: EchoServer, certs: CertFiles, profile: Profile, tmp_path: Path
) -> None:
    combined = tmp_path / "client-with-key.pem"
    combined.write_bytes(certs.client_cert.read_bytes() + certs.client_key.read_bytes())
    with tls.using(TlsSettings(cacert=certs.ca, client_cert=combined)):
        assert both_stacks(mtls_server.url, profile) == (200, 200)


# -- what a failure says ---------------------------------------------------------------------
def suite_client_error(url: str, profile: Profile) -> str:
    with pytest.raises(SuiteTlsError) as raised:
        via_suite_client(url, profile)
    return str(raised.value)


def test_an_untrusted_certificate_names_cacert_and_insecure(
    server: EchoServer, profile: Profile
) -> None:
    message = suite_client_error(server.url, profile)
    assert "the server's certificate is not trusted (CERTIFICATE_VERIFY_FAILED: " in message
    assert "give its CA with --cacert PATH, or --insecure to skip verification" in message


def test_a_certificate_for_another_host_says_so(certs: CertFiles, profile: Profile) -> None:
    # the certificate names 127.0.0.1 and localhost; the server listens on 127.0.0.2 too
    with (
        echo_server(certs.server_cert, certs.server_key, host="127.0.0.2") as server,
        tls.using(TlsSettings(cacert=certs.ca)),
    ):
        message = suite_client_error(server.url, profile)
    assert "not valid for this host name" in message
    assert "--insecure" in message


def test_an_expired_certificate_says_so(tmp_path: Path, profile: Profile) -> None:
    cert, key = expired_certificate(tmp_path)
    with echo_server(cert, key) as server, tls.using(TlsSettings(cacert=cert)):
        message = suite_client_error(server.url, profile)
    assert "the server's certificate has expired" in message


def test_a_server_wanting_a_client_certificate_says_so(
    mtls_server: EchoServer, certs: CertFiles, profile: Profile
) -> None:
    with tls.using(TlsSettings(cacert=certs.ca)):
        message = suite_client_error(mtls_server.url, profile)
    assert "asks for a client certificate" in message
    assert "--client-cert PATH" in message


def test_handshakes_failing_in_a_row_take_the_server_as_gone_naming_the_certificate(
    server: EchoServer, profile: Profile
) -> None:
    # a server restarted mid-run with a certificate of another CA: no answer, and the run's
    # end names the certificate, not a server that went away
    stats = ClientStats()
    with SuiteClient(server.url, profile, stats=stats) as client:
        for _ in range(3):
            with pytest.raises(SuiteTlsError):
                client.get("/v1/payments")
    assert stats.server_gone
    reason = gone_reason(stats)
    assert reason.startswith(f"{SERVER_GONE} (3 connections in a row could not be made; last: ")
    assert "the server's certificate is not trusted (CERTIFICATE_VERIFY_FAILED" in reason


# -- the files are checked before any request ------------------------------------------------
def not_pem(tmp_path: Path) -> Path:
    path = tmp_path / "not.pem"
    path.write_text("hello\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (
            lambda c, o, t: TlsSettings(cacert=t / "missing.pem"),
            "--cacert .*missing.pem: no such file",
        ),
        (lambda c, o, t: TlsSettings(cacert=t), "--cacert .* is a directory, not a regular file"),
        (lambda c, o, t: TlsSettings(cacert=not_pem(t)), "--cacert .*: holds no PEM certificate"),
        (lambda c, o, t: TlsSettings(cacert=c.ca, insecure=True), "cannot be combined"),
        (lambda c, o, t: TlsSettings(client_key=c.client_key), "--client-key needs --client-cert"),
        (
            lambda c, o, t: TlsSettings(client_cert=c.client_cert),
            "holds no private key; give it with --client-key",
        ),
        (
            lambda c, o, t: TlsSettings(client_cert=c.client_cert, client_key=not_pem(t)),
            "--client-key .*: holds no PEM private key",
        ),
        (
            lambda c, o, t: TlsSettings(client_cert=c.client_cert, client_key=o.client_key),
            "the private key does not match the certificate",
        ),
        (
            lambda c, o, t: TlsSettings(client_cert=not_pem(t), client_key=c.client_key),
            "--client-cert .*: holds no PEM certificate",
        ),
    ],
)
def test_unusable_files_are_refused_before_any_request(
    make: object, expected: str, certs: CertFiles, other_certs: CertFiles, tmp_path: Path
) -> None:
    settings = make(certs, other_certs, tmp_path)  # type: ignore[operator]
    with pytest.raises(TlsError, match=expected):
        settings.check()


def test_a_bad_ssl_cert_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tls.CERT_FILE_ENV, str(tmp_path / "gone.pem"))
    with pytest.raises(TlsError, match=r"SSL_CERT_FILE .*gone\.pem: no such file"):
        TlsSettings().check()


def test_settings_become_recorded_options_and_pytest_arguments(
    certs: CertFiles, tmp_path: Path
) -> None:
    settings = TlsSettings(
        cacert=certs.ca, client_cert=certs.client_cert, client_key=certs.client_key
    )
    assert settings.recorded == {
        "cacert": str(certs.ca),
        "client_cert": str(certs.client_cert),
        "client_key": str(certs.client_key),
    }
    assert settings.pytest_args() == [
        "--cacert", str(certs.ca), "--client-cert", str(certs.client_cert),
        "--client-key", str(certs.client_key),
    ]  # fmt: skip
    assert TlsSettings(insecure=True).recorded == {"insecure": "true"}
    assert TlsSettings(insecure=True).pytest_args() == ["--insecure"]
    assert TlsSettings().recorded == {}


def test_a_probe_tells_whether_a_server_asks_for_a_client_certificate(
    mtls_server: EchoServer, server: EchoServer
) -> None:
    def address(url: str) -> tuple[str, int]:
        host, port = url.removeprefix("https://").rsplit(":", 1)
        return host, int(port)

    assert tls.wants_client_certificate(*address(mtls_server.url))
    assert not tls.wants_client_certificate(*address(server.url))
    assert not tls.wants_client_certificate("127.0.0.1", closed_port())
