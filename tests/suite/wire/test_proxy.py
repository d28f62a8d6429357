"""The run's proxy: only ``--proxy``, for every HTTP stack; never the environment's variables."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from conformance.core.profile import Profile, load_profile
from conformance.core.redaction import REDACTED, run_secrets
from conformance.core.run_inputs import ProxyError, parse_proxy
from conformance.reference.certificates import CertFiles, issue
from conformance.reference.server import ReferenceServer
from conformance.suite.schema.loading import signed_session
from conformance.suite.wire import proxy, tls
from conformance.suite.wire.client import SuiteClient, SuiteTlsError
from conformance.suite.wire.tls import TlsSettings
from tests.forward_proxy import ForwardProxy
from tests.suite.https_servers import EchoServer, echo_server, server_context

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


@pytest.fixture(scope="module")
def server(profile: Profile) -> Iterator[ReferenceServer]:
    with ReferenceServer(profile=profile) as reference:
        yield reference


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertFiles:
    return issue(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def https_server(certs: CertFiles) -> Iterator[EchoServer]:
    with echo_server(certs.server_cert, certs.server_key) as echo:
        yield echo


@pytest.fixture(autouse=True)
def no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*PROXY_VARIABLES, "NO_PROXY", "no_proxy", "all_proxy", proxy.PROXY_ENV):
        monkeypatch.delenv(name, raising=False)
    for name in (tls.CERT_FILE_ENV, tls.CERT_DIR_ENV, "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)


def via_suite_client(url: str, profile: Profile) -> int:
    with SuiteClient(url, profile) as client:
        return client.get("/v1/payments", params={"limit": 1}).status_code


def via_schema_session(url: str, profile: Profile) -> int:
    with signed_session(profile) as session:
        return session.get(url + "/v1/payments", timeout=5).status_code


def test_neither_stack_reads_the_proxy_variables_of_the_environment(
    server: ReferenceServer, profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    logging = ForwardProxy()
    with logging.running() as url:
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, url)
        assert via_suite_client(server.base_url, profile) == 200
        assert via_schema_session(server.base_url, profile) == 200
    assert logging.connections == 0


def test_both_stacks_send_plain_http_through_the_proxy_in_absolute_form(
    server: ReferenceServer, profile: Profile
) -> None:
    logging = ForwardProxy(password="proxy-pw-8c1d")
    with logging.running() as url, proxy.using(url):
        assert via_suite_client(server.base_url, profile) == 200
        assert via_schema_session(server.base_url, profile) == 200
    assert logging.seen == [
        f"GET {server.base_url}/v1/payments?limit=1",
        f"GET {server.base_url}/v1/payments",
    ]
    assert logging.agents == {"python-httpx", "python-requests"}
    assert logging.refused == 0  # both sent the proxy's credentials


def test_both_stacks_tunnel_https_through_the_proxy_with_the_run_s_tls(
    https_server: EchoServer, certs: CertFiles, profile: Profile
) -> None:
    logging = ForwardProxy()
    with logging.running() as url, proxy.using(url), tls.using(TlsSettings(cacert=certs.ca)):
        assert via_suite_client(https_server.url, profile) == 200
        assert via_schema_session(https_server.url, profile) == 200
    authority = https_server.url.removeprefix("https://")
    assert logging.seen == [f"CONNECT {authority}", f"CONNECT {authority}"]


def test_an_https_proxy_is_verified_with_the_run_s_tls(
    server: ReferenceServer, certs: CertFiles, profile: Profile
) -> None:
    logging = ForwardProxy(tls=server_context(certs.server_cert, certs.server_key))
    with logging.running() as url, proxy.using(url), tls.using(TlsSettings(cacert=certs.ca)):
        assert url.startswith("https://")
        assert via_suite_client(server.base_url, profile) == 200
        assert via_schema_session(server.base_url, profile) == 200
    assert len(logging.seen) == 2


def test_an_https_proxy_with_an_untrusted_certificate_is_refused(
    server: ReferenceServer, certs: CertFiles, profile: Profile
) -> None:
    logging = ForwardProxy(tls=server_context(certs.server_cert, certs.server_key))
    with logging.running() as url, proxy.using(url):  # certifi's bundle: not the tests' CA
        with pytest.raises(SuiteTlsError, match="CERTIFICATE_VERIFY_FAILED"):
            via_suite_client(server.base_url, profile)
        with pytest.raises(requests.exceptions.ProxyError, match="CERTIFICATE_VERIFY_FAILED"):
            via_schema_session(server.base_url, profile)
    assert logging.seen == []


def test_a_proxy_that_refuses_the_credentials_is_its_answer_not_the_server_s(
    server: ReferenceServer, profile: Profile
) -> None:
    logging = ForwardProxy(password="right-password")
    with logging.running() as url, proxy.using(url.replace("right-password", "wrong-one")):
        assert via_suite_client(server.base_url, profile) == 407
        assert via_schema_session(server.base_url, profile) == 407
    assert logging.refused == 2


def test_the_proxy_password_is_a_secret_while_the_proxy_is_in_use() -> None:
    with proxy.using("http://user:s3cret-pw@127.0.0.1:3128"):
        assert proxy.active() == "http://user:s3cret-pw@127.0.0.1:3128"
        assert "s3cret-pw" in run_secrets()
    assert proxy.active() is None
    assert "s3cret-pw" not in run_secrets()


@pytest.mark.parametrize(
    ("given", "refused"),
    [
        ("socks5://127.0.0.1:1080", "must be an http:// or https:// URL"),
        ("127.0.0.1:3128", "must be an http:// or https:// URL"),
        ("http://", "names no host"),
        ("http://127.0.0.1:99999", "is not a valid URL"),
        ("http://[::1", "is not a valid URL"),
        ("http://proxy.example/some/path", "scheme, host and port only"),
    ],
)
def test_a_proxy_url_is_checked(given: str, refused: str) -> None:
    with pytest.raises(ProxyError, match=refused):
        parse_proxy(given)


def test_a_refused_proxy_url_never_shows_its_password() -> None:
    with pytest.raises(ProxyError) as refused:
        parse_proxy("http://user:s3cret-pw@[::1:3128")
    assert "s3cret-pw" not in str(refused.value)
    assert f"user:{REDACTED}@" in str(refused.value)


def test_the_proxy_reaches_test_processes_through_the_environment() -> None:
    with proxy.in_env("http://user:pw@127.0.0.1:3128"):
        assert proxy.from_env() == "http://user:pw@127.0.0.1:3128"
    assert proxy.from_env() is None
