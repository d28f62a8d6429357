"""The gateway in front of the reference server: base path, gateway header, rate limit, TLS."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.core.profile import Credential, Profile
from conformance.core.signing import Signer
from conformance.reference import gateway
from conformance.reference.app import create_app
from conformance.reference.certificates import issue
from conformance.reference.config import ServerConfig
from conformance.reference.gateway import GatewaySettings, wrap
from conformance.reference.server import ReferenceServer, ServerStartError
from tests.reference.factories import payment_body
from tests.reference.signed_client import SignedClient

GATEWAY_HEADER = ("X-Gateway-Key", "gw-secret-7f3a")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class InProcess:
    """A synchronous HTTP client of an ASGI application, called in this process."""

    def __init__(self, app: Any) -> None:
        self.runner = asyncio.Runner()
        transport = httpx.ASGITransport(app=app)
        self.http = httpx.AsyncClient(transport=transport, base_url="http://testserver")

    def request(self, method: str, target: str, **kwargs: Any) -> httpx.Response:
        return self.runner.run(self.http.request(method, target, **kwargs))

    def get(self, target: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", target, **kwargs)

    def close(self) -> None:
        self.runner.run(self.http.aclose())
        self.runner.close()


class Gateway:
    """The application behind ``wrap``; requests signed as the profile's credentials."""

    def __init__(self, client: InProcess, clock: FakeClock, profile: Profile) -> None:
        self.client = client
        self.clock = clock
        self.profile = profile

    def headers(
        self,
        method: str,
        target: str,
        body: bytes = b"",
        credential: Credential | None = None,
        extra: dict[str, str] | None = None,
    ) -> dict[str, str]:
        who = credential or self.profile.primary
        signed = Signer(who.api_key, who.api_secret).headers(method, target, body)
        return {**signed, "Content-Type": "application/json", **(extra or {})}

    def send(
        self, method: str, target: str, headers: dict[str, str], body: bytes = b""
    ) -> httpx.Response:
        return self.client.request(method, target, content=body, headers=headers)


@pytest.fixture
def behind(profile: Profile) -> Iterator[Any]:
    """``behind(settings)``: a ``Gateway`` over a fresh application with those settings."""
    runtimes = []
    clients = []

    def make(settings: GatewaySettings) -> Gateway:
        app = create_app(ServerConfig(profile, public_url="http://testserver" + settings.base_path))
        runtimes.append(app.state.runtime)
        clock = FakeClock()
        client = InProcess(wrap(app, settings, clock))
        clients.append(client)
        return Gateway(client, clock, profile)

    yield make
    for client in clients:
        client.close()
    for runtime in runtimes:
        runtime.close()


def payment_request(gw: Gateway, target: str = "/v1/payments") -> tuple[dict[str, str], bytes]:
    body = json.dumps(payment_body()).encode()
    return gw.headers("POST", target, body, extra={"Idempotency-Key": "key-1"}), body


def payments_in(gw: Gateway, prefix: str = "", extra: dict[str, str] | None = None) -> int:
    target = f"{prefix}/v1/payments"
    listed = gw.send("GET", target, gw.headers("GET", target, extra=extra))
    assert listed.status_code == 200, listed.text
    return len(listed.json()["payments"])


# ------------------------------------------------------------------------ parsing settings
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("X-Gateway-Key: abc", ("X-Gateway-Key", "abc")),
        ("X-Gateway-Key:abc", ("X-Gateway-Key", "abc")),
        ("Authorization:  Bearer a.b.c  ", ("Authorization", "Bearer a.b.c")),
    ],
)
def test_a_gateway_header_is_a_name_a_colon_and_a_value(
    text: str, expected: tuple[str, str]
) -> None:
    assert gateway.header(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "X-Gateway-Key",  # no colon
        "X-Gateway-Key:",  # no value
        ": abc",  # no name
        "X Gateway: abc",  # a space in the name
        "X-Gateway-Key: a\r\nX-Injected: b",  # a line break in the value
        "X-Gateway-Key: caf\u00e9",  # not ASCII
        "X-Api-Key: abc",  # the API's own authentication
        "Content-Length: 3",  # HTTP's framing
    ],
)
def test_anything_else_is_refused_without_echoing_the_value(text: str) -> None:
    with pytest.raises(ValueError) as refused:
        gateway.header(text)
    value = text.partition(":")[2].strip()
    assert not value or value not in str(refused.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("/api", "/api"), ("/api/", "/api"), ("/a/b-c/v2~x", "/a/b-c/v2~x"), ("/", ""), ("", "")],
)
def test_a_base_path_is_normalised(text: str, expected: str) -> None:
    assert gateway.base_path(text) == expected


@pytest.mark.parametrize(
    "text", ["api", "/a?b", "/a#b", "/a b", "/a%2Fb", "//a", "/a//b", "/a/../b", "/./a", "/\u00e9"]
)
def test_a_base_path_with_anything_but_plain_segments_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        gateway.base_path(text)


@pytest.mark.parametrize("rate", [0.0, -1.0, float("nan"), float("inf"), 1e9])
def test_a_rate_limit_is_a_positive_finite_number(rate: float) -> None:
    with pytest.raises(ValueError):
        gateway.rate_limit(rate)
    assert gateway.rate_limit(0.5) == 0.5


# ------------------------------------------------------------------------------ base path
def test_the_api_is_served_under_the_base_path_and_nowhere_else(behind: Any) -> None:
    gw = behind(GatewaySettings(base_path="/payments-api"))
    headers, body = payment_request(gw, "/payments-api/v1/payments")
    created = gw.send("POST", "/payments-api/v1/payments", headers, body)
    assert created.status_code == 201, created.text
    # links the server returns are under the prefix too
    assert created.json()["checkout_url"].startswith("http://testserver/payments-api/")
    assert payments_in(gw, "/payments-api") == 1
    for outside in ("/v1/payments", "/payments-apix/v1/payments", "/", "/other/v1/payments"):
        refused = gw.send("GET", outside, gw.headers("GET", outside))
        assert refused.status_code == 404, outside
        assert refused.headers["content-type"] == "application/json"
        assert refused.json()["code"] == "not_found"


def test_behind_a_base_path_the_signature_covers_the_full_path_as_sent(behind: Any) -> None:
    gw = behind(GatewaySettings(base_path="/payments-api"))
    # signed over the path without the prefix, sent with it: not what was sent, so 401
    refused = gw.send("GET", "/payments-api/v1/payments", gw.headers("GET", "/v1/payments"))
    assert refused.status_code == 401
    assert refused.json()["code"] == "unauthorized"


def test_behind_a_base_path_a_path_id_that_is_no_text_is_still_refused(behind: Any) -> None:
    gw = behind(GatewaySettings(base_path="/payments-api"))
    target = "/payments-api/v1/webhook-endpoints/we_1%zz"
    body = json.dumps({"url": "https://example.test/h", "event_types": ["payment.created"]})
    headers = gw.headers("PUT", target, body.encode(), extra={"Idempotency-Key": "key-2"})
    refused = gw.send("PUT", target, headers, body.encode())
    assert refused.status_code == 400, refused.text
    assert refused.json()["details"][0]["field"] == "path.id"


# ------------------------------------------------------------------------- gateway header
def test_a_request_without_the_gateway_header_never_reaches_the_api(behind: Any) -> None:
    name, value = GATEWAY_HEADER
    gw = behind(GatewaySettings(require_header=GATEWAY_HEADER))
    headers, body = payment_request(gw)
    for wrong in ({}, {name: "gw-secret-7f3b"}, {name: value + " "}, {name.lower(): "x"}):
        refused = gw.send("POST", "/v1/payments", {**headers, **wrong}, body)
        assert refused.status_code == 403
        assert refused.json()["code"] == "gateway_refused"
        assert value not in refused.text
    # the refused requests spent neither the nonce nor the Idempotency-Key: the same signed
    # request with the header creates the payment, once
    created = gw.send("POST", "/v1/payments", {**headers, name: value}, body)
    assert created.status_code == 201, created.text
    assert "Idempotent-Replayed" not in created.headers
    assert payments_in(gw, extra={name: value}) == 1


def test_the_gateway_header_sent_twice_is_refused(behind: Any) -> None:
    name, value = GATEWAY_HEADER
    gw = behind(GatewaySettings(require_header=GATEWAY_HEADER))
    headers = gw.headers("GET", "/v1/payments")
    twice = [*headers.items(), (name, value), (name, value)]
    assert gw.client.get("/v1/payments", headers=twice).status_code == 403
    assert gw.send("GET", "/v1/payments", {**headers, name: value}).status_code == 200


# ------------------------------------------------------------------------------ rate limit
def test_a_burst_of_the_limit_passes_then_429_with_retry_after(behind: Any) -> None:
    gw = behind(GatewaySettings(rate_limit=4))
    answers = [gw.send("GET", "/v1/payments", gw.headers("GET", "/v1/payments")) for _ in range(5)]
    assert [a.status_code for a in answers] == [200, 200, 200, 200, 429]
    limited = answers[-1]
    assert limited.headers["Retry-After"] == "1"  # 0.25 s until a token, rounded up
    assert limited.headers["content-type"] == "application/json"
    assert limited.json()["code"] == "rate_limited"
    gw.clock.now += 0.25
    assert gw.send("GET", "/v1/payments", gw.headers("GET", "/v1/payments")).status_code == 200


def test_retry_after_is_the_whole_seconds_until_a_token_is_free(behind: Any) -> None:
    gw = behind(GatewaySettings(rate_limit=0.25))  # a token every 4 s, bursts of 1
    assert gw.send("GET", "/v1/payments", gw.headers("GET", "/v1/payments")).status_code == 200
    waits = []
    for step in (0.0, 2.5, 1.0):
        gw.clock.now += step
        limited = gw.send("GET", "/v1/payments", gw.headers("GET", "/v1/payments"))
        assert limited.status_code == 429
        waits.append(limited.headers["Retry-After"])
    assert waits == ["4", "2", "1"]  # 4 s, 1.5 s, 0.5 s left
    gw.clock.now += 0.5
    assert gw.send("GET", "/v1/payments", gw.headers("GET", "/v1/payments")).status_code == 200


def test_each_api_key_has_its_own_bucket_and_keyless_requests_share_one(
    behind: Any, profile: Profile
) -> None:
    gw = behind(GatewaySettings(rate_limit=1))
    alpha, beta = profile.primary, profile.secondary
    get = gw.headers
    assert gw.send("GET", "/v1/payments", get("GET", "/v1/payments", b"", alpha)).status_code == 200
    assert gw.send("GET", "/v1/payments", get("GET", "/v1/payments", b"", alpha)).status_code == 429
    assert gw.send("GET", "/v1/payments", get("GET", "/v1/payments", b"", beta)).status_code == 200
    assert gw.client.get("/v1/payments").status_code == 401  # no key: reaches the API
    assert gw.client.get("/v1/payments").status_code == 429  # the keyless bucket is spent


def test_a_rate_limited_request_has_no_side_effect(behind: Any) -> None:
    gw = behind(GatewaySettings(rate_limit=1))
    assert gw.send("GET", "/v1/payments", gw.headers("GET", "/v1/payments")).status_code == 200
    headers, body = payment_request(gw)
    assert gw.send("POST", "/v1/payments", headers, body).status_code == 429
    gw.clock.now += 1
    # the same nonce and Idempotency-Key again: neither was spent by the refused request
    created = gw.send("POST", "/v1/payments", headers, body)
    assert created.status_code == 201, created.text
    assert "Idempotent-Replayed" not in created.headers


def test_the_buckets_of_many_keys_stay_bounded() -> None:
    clock = FakeClock()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("not called")

    limiter = gateway.RateLimit(app, 10, clock)
    for n in range(3 * gateway.MAX_BUCKETS):
        clock.now += 0.01
        limiter.bucket(f"key-{n}".encode()).take(clock.now)
    assert len(limiter.buckets) <= gateway.MAX_BUCKETS + 1


# ---------------------------------------------------------------------- the layers' order
def test_the_layers_refuse_outermost_first_base_path_header_rate(behind: Any) -> None:
    name, value = GATEWAY_HEADER
    gw = behind(GatewaySettings(rate_limit=1, require_header=GATEWAY_HEADER, base_path="/api"))
    outside = gw.send("GET", "/v1/payments", gw.headers("GET", "/v1/payments"))
    assert outside.status_code == 404  # the base path first, even without the header
    target = "/api/v1/payments"
    assert gw.send("GET", target, gw.headers("GET", target)).status_code == 403
    # the gateway's refusals took no token of the rate limit: this one passes, the next not
    assert gw.send("GET", target, gw.headers("GET", target, extra={name: value})).status_code == 200
    assert gw.send("GET", target, gw.headers("GET", target, extra={name: value})).status_code == 429


def test_the_default_settings_change_nothing(profile: Profile) -> None:
    app = create_app(ServerConfig(profile))
    try:
        assert wrap(app, GatewaySettings()) is app
    finally:
        app.state.runtime.close()


# ------------------------------------------------------------------- a started server
def test_a_started_server_with_every_mode_serves_https_under_its_prefix(
    tmp_path: Path, profile: Profile
) -> None:
    certs = issue(tmp_path)
    name, value = GATEWAY_HEADER
    with ReferenceServer(
        profile=profile,
        tls_cert=certs.server_cert,
        tls_key=certs.server_key,
        rate_limit=50,
        require_header=GATEWAY_HEADER,
        base_path="/payments-api/",
    ) as server:
        assert server.base_url.startswith("https://127.0.0.1:")
        assert server.base_url.endswith("/payments-api")
        context = ssl.create_default_context(cafile=str(certs.ca))
        with SignedClient(server.base_url, profile.primary) as client:
            client.http = httpx.Client(base_url=server.base_url, verify=context, timeout=10)
            created = client.post("/v1/payments", payment_body(), headers={name: value})
            assert created.status_code == 201, created.text
            assert created.json()["checkout_url"].startswith(server.base_url + "/")
            assert client.get("/v1/payments").status_code == 403
        # the CA not trusted: the handshake fails
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(server.base_url + "/v1/payments")


def test_mutual_tls_refuses_a_client_without_a_certificate(
    tmp_path: Path, profile: Profile
) -> None:
    certs = issue(tmp_path)
    with ReferenceServer(
        profile=profile,
        tls_cert=certs.server_cert,
        tls_key=certs.server_key,
        tls_client_ca=certs.ca,
    ) as server:
        context = ssl.create_default_context(cafile=str(certs.ca))
        context.load_cert_chain(certs.client_cert, certs.client_key)
        assert httpx.get(server.base_url + "/v1/payments", verify=context).status_code == 401
        anonymous = ssl.create_default_context(cafile=str(certs.ca))
        with pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)):
            httpx.get(server.base_url + "/v1/payments", verify=anonymous)


def test_tls_files_that_cannot_be_used_stop_the_start_with_a_clear_error(
    tmp_path: Path, profile: Profile
) -> None:
    certs = issue(tmp_path)
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    cases = [
        (tmp_path / "missing.pem", certs.server_key, "cannot read"),
        (junk, junk, "not PEM"),
        (certs.server_cert, certs.client_key, "key values mismatch"),
    ]
    for cert, key, reason in cases:
        with pytest.raises(ServerStartError, match=reason):
            ReferenceServer(profile=profile, tls_cert=cert, tls_key=key).start()
    with pytest.raises(ValueError, match="both or neither"):
        ReferenceServer(profile=profile, tls_cert=certs.server_cert)


@pytest.mark.slow
def test_the_suite_finds_the_server_behind_a_base_path_conformant(
    tmp_path: Path, profile: Profile
) -> None:
    # Both of the suite's HTTP stacks sign the target as sent, prefix included, and idempotent
    # replays are fingerprinted on it: the server verifies exactly that.
    with ReferenceServer(profile=profile, base_path="/payments-api") as server:
        args = ["run", "--no-progress", "--base-url", server.base_url, "--quick"]
        args += ["--only", "AUTH", "--only", "IDEM", "--workers", "1"]
        result = CliRunner().invoke(main, [*args, "--report-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "verdict: CONFORMANT" in result.output
