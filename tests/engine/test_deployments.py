"""The suite against the reference server deployed as implementers deploy theirs: HTTPS with a
private CA, behind a gateway that wants its own header, under a base path and rate-limited.
The verdict must be the one a bare loopback server gets: CONFORMANT, with the 429s and the time
waited for them in the reports; and a fault must still be caught behind the rate limit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.profile import load_profile
from conformance.reference.certificates import CertFiles, issue
from conformance.reference.server import ReferenceServer
from conformance.suite.wire.tls import CERT_DIR_ENV, CERT_FILE_ENV

GATEWAY = ("X-Gateway-Key", "gw-7c1e55d0a9b24f36")
# A state machine step, a concurrency burst of replays, a webhook wait and the schema family
# (schemathesis' own HTTP stack): every kind of exchange a 429 may land on.
FAMILIES = "PAY-STATE-001,IDEM-013,EVT-001,OPS-001"
# Requests a second per API key: low enough that the run above meets the limit many times.
RATE_LIMIT = 20.0


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["run", "--no-progress", *args])


def results(directory: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((directory / "results.json").read_text("utf-8"))
    return document


@pytest.fixture(autouse=True)
def no_trust_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (CERT_FILE_ENV, CERT_DIR_ENV):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertFiles:
    return issue(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def sandbox(certs: CertFiles) -> Iterator[ReferenceServer]:
    """Every deployment mode at once, as a company's sandbox has them."""
    server = ReferenceServer(
        profile=load_profile(),
        tls_cert=certs.server_cert,
        tls_key=certs.server_key,
        rate_limit=RATE_LIMIT,
        require_header=GATEWAY,
        base_path="/payments-api",
    ).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.slow
def test_a_rate_limited_https_sandbox_behind_a_gateway_and_a_base_path_is_conformant(
    sandbox: ReferenceServer, certs: CertFiles, tmp_path: Path
) -> None:
    assert sandbox.base_url.startswith("https://127.0.0.1:")
    assert sandbox.base_url.endswith("/payments-api")
    result = run(
        *("--base-url", sandbox.base_url, "--cacert", str(certs.ca)),
        *("-H", f"{GATEWAY[0]}: {GATEWAY[1]}", "--only", FAMILIES),
        *("--quick", "--seed", "4", "--workers", "2", "--report-dir", str(tmp_path)),
    )
    assert result.exit_code == 0, result.output
    assert "verdict: CONFORMANT, 4 of 4 requirements exercised" in result.output
    limits = results(tmp_path)["rate_limits"]
    assert limits["received_429"] > 0, "the run met the server's rate limit"
    assert limits["waited_s"] >= limits["received_429"]  # Retry-After is at least 1 s
    assert limits["given_up"] == 0
    assert f"rate limits: 429s: {limits['received_429']}," in result.output
    assert GATEWAY[1] not in result.output


@pytest.mark.slow
def test_without_the_private_ca_the_run_stops_at_preflight_naming_cacert(
    sandbox: ReferenceServer, tmp_path: Path
) -> None:
    result = run(
        *("--base-url", sandbox.base_url, "-H", f"{GATEWAY[0]}: {GATEWAY[1]}"),
        *("--only", "AUTH-001", "--quick", "--report-dir", str(tmp_path)),
    )
    assert result.exit_code == 2, result.output
    assert "--cacert" in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_a_fault_is_still_caught_behind_the_rate_limit(tmp_path: Path) -> None:
    result = run(
        *("--fault", "state-cancel-canceled-payment-200", "--server-rate-limit", "10"),
        *("--only", "PAY-STATE", "--quick", "--seed", "2", "--workers", "1"),
        *("--report-dir", str(tmp_path)),
    )
    assert result.exit_code == 1, result.output
    document = results(tmp_path)
    failed = {r["id"] for r in document["requirements"] if r["outcome"] == "failed"}
    assert "PAY-STATE-004" in failed
    assert document["rate_limits"]["received_429"] > 0
    assert document["options"]["server_rate_limit"] == "10"
