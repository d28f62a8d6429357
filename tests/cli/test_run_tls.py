"""``run`` against HTTPS servers and gateways: --cacert, --insecure, --client-cert/--client-key
and -H/--header, end to end; bad values are refused before any request, with exit 2."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.profile import Profile, load_profile
from conformance.reference.certificates import CertFiles, issue
from conformance.suite.wire.tls import CERT_DIR_ENV, CERT_FILE_ENV
from tests.suite.https_servers import GatewayLog, reference_server

GATEWAY_HEADER = "X-Gateway-Key"
GATEWAY_KEY = "gwk-5d8e1f0a2b7c4e93-distinctive"
# AUTH: the refusal cases remove the API's own headers; OPS-001: the schema family, whose
# requests go through schemathesis' requests session.
FAMILIES = ("--only", "AUTH-001,AUTH-002,AUTH-005,OPS-001")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["run", "--no-progress", *args])


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile()


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertFiles:
    return issue(tmp_path_factory.mktemp("certs"))


@pytest.fixture(autouse=True)
def no_trust_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (CERT_FILE_ENV, CERT_DIR_ENV):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def gateway_server(certs: CertFiles, profile: Profile) -> Iterator[tuple[str, GatewayLog]]:
    with reference_server(certs, profile, gateway=(GATEWAY_HEADER, GATEWAY_KEY)) as served:
        yield served


def all_text(directory: Path) -> str:
    return "\n".join(
        path.read_bytes().decode("utf-8", errors="replace")
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    )


# -- end to end ------------------------------------------------------------------------------
@pytest.mark.slow
def test_an_https_server_behind_a_gateway_is_conformant_and_the_key_is_never_shown(
    gateway_server: tuple[str, GatewayLog], certs: CertFiles, tmp_path: Path
) -> None:
    url, log = gateway_server
    log.values.clear()
    reports, har = tmp_path / "reports", tmp_path / "traffic.har"
    result = run(
        *("--base-url", url, "--cacert", str(certs.ca)),
        *("-H", f"{GATEWAY_HEADER}: {GATEWAY_KEY}"),
        *FAMILIES,
        *("--quick", "--seed", "3", "--workers", "2"),
        *("--report-dir", str(reports), "--record", str(har)),
    )
    assert result.exit_code == 0, result.output
    assert "verdict: CONFORMANT" in result.output
    # the server got the key on every request, the refused authentications included
    assert len(log.values) > 50
    assert set(log.values) == {GATEWAY_KEY}
    # ...and nobody else saw it
    assert GATEWAY_KEY not in result.output
    assert GATEWAY_KEY not in all_text(reports)
    assert GATEWAY_KEY not in har.read_text(encoding="utf-8")
    document = json.loads((reports / "results.json").read_text(encoding="utf-8"))
    assert document["options"]["headers"] == GATEWAY_HEADER
    assert document["options"]["cacert"] == str(certs.ca)
    assert f"-H '{GATEWAY_HEADER}: [redacted]'" in document["rerun"]
    assert f"--cacert {certs.ca}" in document["rerun"]
    assert document["warnings"] == []


@pytest.mark.slow
def test_the_key_is_masked_in_the_evidence_of_failures_and_their_curl_commands(
    tmp_path: Path,
) -> None:
    reports, har = tmp_path / "reports", tmp_path / "traffic.har"
    result = run(
        *("--fault", "auth-accepts-stale-timestamp", "--only", "AUTH-010"),
        *("-H", f"{GATEWAY_HEADER}: {GATEWAY_KEY}", "--quick", "--seed", "9", "--workers", "1"),
        *("--report-dir", str(reports), "--record", str(har)),
    )
    assert result.exit_code == 1, result.output
    document = json.loads((reports / "results.json").read_text(encoding="utf-8"))
    evidence = [c["evidence"] for c in document["checks"] if c.get("evidence")]
    assert evidence, "the failure carries the exchange that shows it"
    assert all(e["request_headers"].get("x-gateway-key") == "[redacted]" for e in evidence)
    assert all("x-gateway-key: [redacted]" in e["curl"] for e in evidence)
    assert GATEWAY_KEY not in result.output
    assert GATEWAY_KEY not in all_text(reports)
    assert GATEWAY_KEY not in har.read_text(encoding="utf-8")
    assert "[redacted]" in har.read_text(encoding="utf-8")


@pytest.mark.slow
def test_without_cacert_the_run_stops_at_preflight_naming_cacert(
    gateway_server: tuple[str, GatewayLog], tmp_path: Path
) -> None:
    url, _ = gateway_server
    result = run(
        *("--base-url", url, "-H", f"{GATEWAY_HEADER}: {GATEWAY_KEY}", *FAMILIES, "--quick"),
        *("--report-dir", str(tmp_path / "reports")),
    )
    assert result.exit_code == 2, result.output
    assert "preflight failed (reachable)" in result.output
    assert "the server's certificate is not trusted (CERTIFICATE_VERIFY_FAILED" in result.output
    assert "give its CA with --cacert PATH, or --insecure to skip verification" in result.output
    assert "Traceback" not in result.output
    assert GATEWAY_KEY not in result.output


@pytest.mark.slow
def test_without_the_gateway_header_the_run_stops_at_preflight(
    gateway_server: tuple[str, GatewayLog], certs: CertFiles, tmp_path: Path
) -> None:
    url, _ = gateway_server
    result = run(
        *("--base-url", url, "--cacert", str(certs.ca), *FAMILIES, "--quick"),
        *("--report-dir", str(tmp_path / "reports")),
    )
    assert result.exit_code == 2, result.output
    assert "preflight failed" in result.output


@pytest.mark.slow
def test_insecure_runs_warn_in_the_console_and_every_report(
    gateway_server: tuple[str, GatewayLog], tmp_path: Path
) -> None:
    url, _ = gateway_server
    reports = tmp_path / "reports"
    result = run(
        *("--base-url", url, "--insecure", "-H", f"{GATEWAY_HEADER}: {GATEWAY_KEY}"),
        *("--only", "AUTH-001", "--quick", "--workers", "1", "--report-dir", str(reports)),
    )
    assert result.exit_code == 0, result.output
    warning = "the server's TLS certificate was not verified"
    assert result.output.count(f"warning: --insecure: {warning}") == 2  # at the start and end
    for name in ("report.html", "summary.md", "junit.xml", "results.json"):
        assert warning in html.unescape((reports / name).read_text(encoding="utf-8")), name
    document = json.loads((reports / "results.json").read_text(encoding="utf-8"))
    assert document["options"]["insecure"] == "true"
    assert "--insecure" in document["rerun"]
    manifest = json.loads((reports / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["tls_verified"] is False
    assert any(warning in w for w in manifest["warnings"])


@pytest.mark.slow
def test_a_server_wanting_mutual_tls_gets_the_client_certificate(
    certs: CertFiles, profile: Profile, tmp_path: Path
) -> None:
    with reference_server(certs, profile, mutual=True) as (url, _):
        common = ("--base-url", url, "--cacert", str(certs.ca), "--only", "AUTH-001", "--quick")
        without = run(*common, "--report-dir", str(tmp_path / "without"))
        result = run(
            *common,
            *("--client-cert", str(certs.client_cert), "--client-key", str(certs.client_key)),
            *("--workers", "1", "--report-dir", str(tmp_path / "with")),
        )
    assert without.exit_code == 2, without.output
    assert "asks for a client certificate (mutual TLS)" in without.output
    assert "--client-cert PATH" in without.output
    assert result.exit_code == 0, result.output
    assert "verdict: CONFORMANT" in result.output


# -- refused before any request --------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--cacert", "/no/such/ca.pem"), "--cacert /no/such/ca.pem: no such file"),
        (("--client-key", "/no/key.pem"), "--client-key needs --client-cert"),
        (("--cacert", "/etc/hostname", "--insecure"), "cannot be combined with --cacert"),
        (("-H", "X-Gateway-Key"), "expected 'Name: value'"),
        (("-H", "X-Api-Key: mk_mine"), "the API or HTTP itself uses this header"),
        (("--header", "Bad Name: v"), "is not a header name"),
        (("-H", "X-A: 1", "-H", "x-a: 2"), "given twice"),
    ],
)
def test_bad_tls_and_header_options_exit_2_before_any_request(
    args: tuple[str, ...], message: str, tmp_path: Path
) -> None:
    result = run("--base-url", "https://127.0.0.1:9", *args, "--report-dir", str(tmp_path / "r"))
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert "preflight" not in result.output
    assert not (tmp_path / "r").exists()


def test_a_client_key_that_does_not_match_is_refused(tmp_path: Path, certs: CertFiles) -> None:
    other = issue(tmp_path / "other")
    result = run(
        *("--base-url", "https://127.0.0.1:9", "--cacert", str(certs.ca)),
        *("--client-cert", str(certs.client_cert), "--client-key", str(other.client_key)),
    )
    assert result.exit_code == 2, result.output
    assert "the private key does not match the certificate" in result.output


def test_a_header_value_too_short_to_mask_as_text_is_warned_of_at_start(tmp_path: Path) -> None:
    # "Q7" cannot be replaced in every text without wrecking the evidence: the run says so
    result = run(
        *("--base-url", "http://127.0.0.1:9", "-H", "X-Gateway-Key: Q7", "-H", "X-Tenant: t-0042"),
        *("--report-dir", str(tmp_path / "r")),
    )
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: -H")]
    assert warnings == [
        "warning: -H X-Gateway-Key: its value is under 4 characters, too short to mask as text: "
        "it is masked under its header's name only, and shows as it is wherever the server "
        "echoes it (bodies, other headers, --record); use a longer value to keep it secret"
    ]
    assert "Q7" not in result.stderr and "t-0042" not in result.stderr
