"""``payment-conformance serve`` and ``payment-conformance faults``."""

from __future__ import annotations

import dataclasses
import re
import signal
import socket
import ssl
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from conformance.cli import main
from conformance.cli.serve import exposure_warning
from conformance.core.profile import load_profile
from conformance.reference.certificates import issue
from conformance.reference.faults import catalogue
from tests.cli.processes import CommandProcess, leftovers


def test_faults_lists_every_fault_with_category_and_requirements() -> None:
    result = CliRunner().invoke(main, ["faults"])
    assert result.exit_code == 0
    for fault in catalogue():
        assert fault.name in result.output
    assert f"{len(catalogue())} faults" in result.output


def test_faults_category_filter() -> None:
    result = CliRunner().invoke(main, ["faults", "--category", "auth"])
    assert result.exit_code == 0
    assert "auth-nonce-not-checked" in result.output
    assert "idem-scope-global" not in result.output
    bad = CliRunner().invoke(main, ["faults", "--category", "nonsense"])
    assert bad.exit_code == 2


def test_faults_lists_what_a_fault_needs_of_the_profile() -> None:
    result = CliRunner().invoke(main, ["faults", "--category", "auth"])
    assert "needs: auth-before-routing" in result.output
    assert "auth-before-routing: the profile authenticates before routing" in result.output


def test_serve_rejects_an_unknown_fault_with_exit_2() -> None:
    result = CliRunner().invoke(main, ["serve", "--fault", "no-such-fault"])
    assert result.exit_code == 2
    assert "unknown fault no-such-fault" in result.output
    assert "Traceback" not in result.output


def listening_url(proc: CommandProcess) -> str:
    line = proc.wait_for_line(lambda line: "listening on" in line)
    url = re.search(r"http://127\.0\.0\.1:[0-9]+", line)
    assert url is not None, line
    proc.wait_for_line(lambda line: "Ctrl-C" in line)
    return url.group()


def test_serve_prints_url_and_key_ids_but_no_secret_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    with CommandProcess(["serve", "--port", "0"], tmpdir=tmp_path) as proc:
        url = listening_url(proc)
        assert "mk_test_alpha" in proc.stdout and "mk_test_beta" in proc.stdout
        assert "sk_test" not in proc.stdout
        assert httpx.get(url + "/v1/payments").status_code == 401
        proc.send_signal(signal.SIGINT)
        assert proc.wait() == 0, proc.describe()
        assert proc.stdout.splitlines()[-1] == "stopped"
        assert proc.stderr == ""


def stalled_request(url: str) -> socket.socket:
    """A request whose body never comes: in flight until the server aborts it."""
    host, port = url.removeprefix("http://").split(":")
    conn = socket.create_connection((host, int(port)))
    conn.sendall(
        b"POST /v1/payments HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: 100\r\n\r\n{"
    )
    return conn


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serve_shuts_down_in_order_and_leaves_no_temporary_file(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """With a request in flight and a keep-alive connection open: uvicorn stops first, then the
    database closes; no traceback, and the temporary database is gone, on SIGTERM as on
    Ctrl-C."""
    with CommandProcess(["serve", "--port", "0"], tmpdir=tmp_path) as proc:
        url = listening_url(proc)
        assert leftovers(tmp_path) != []  # the temporary database is there
        with httpx.Client() as keep_alive, stalled_request(url):
            assert keep_alive.get(url + "/v1/payments").status_code == 401
            proc.send_signal(signum)
            assert proc.wait() == 0, proc.describe()
        assert proc.stdout.splitlines()[-1] == "stopped"
        assert proc.stderr == ""
        assert leftovers(tmp_path) == []


def test_serve_help_says_what_the_server_is_for_and_never_to_expose_it() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "POSTs webhooks to any URL a merchant registers" in text
    assert "private" in text and "loopback" in text
    assert "never expose it" in text


def started(proc: CommandProcess) -> None:
    proc.wait_for_line(lambda line: "Ctrl-C" in line)


def test_serve_warns_once_when_it_listens_beyond_loopback_with_the_published_secrets(
    tmp_path: Path,
) -> None:
    with CommandProcess(["serve", "--host", "0.0.0.0", "--port", "0"], tmpdir=tmp_path) as proc:
        started(proc)
        proc.send_signal(signal.SIGINT)
        assert proc.wait() == 0, proc.describe()  # stderr is complete once the command ended
    (warning,) = proc.stderr.splitlines()
    assert warning.startswith("warning: ")
    assert "0.0.0.0" in warning and "published test" in warning
    assert "sk_test" not in proc.stderr + proc.stdout


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_serve_does_not_warn_on_a_loopback_address(tmp_path: Path, host: str) -> None:
    with CommandProcess(["serve", "--host", host, "--port", "0"], tmpdir=tmp_path) as proc:
        started(proc)
        proc.send_signal(signal.SIGINT)
        assert proc.wait() == 0, proc.describe()
    assert "warning" not in proc.stderr, proc.describe()


def test_the_exposure_warning_needs_both_a_wide_address_and_the_published_secrets() -> None:
    published = load_profile()
    data = {**published.data}
    data["credentials"] = [
        {**c, "api_secret": f"sk_private_{n}"} for n, c in enumerate(published.data["credentials"])
    ]
    private = dataclasses.replace(published, data=data)
    assert exposure_warning("0.0.0.0", published) is not None
    assert exposure_warning("::", published) is not None
    assert exposure_warning("192.168.1.20", published) is not None
    assert exposure_warning("0.0.0.0", private) is None
    for loopback in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert exposure_warning(loopback, published) is None


@pytest.mark.parametrize("value", ["-1", "10001", "soon"])
def test_serve_refuses_a_latency_out_of_range(value: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--latency-ms", value])
    assert result.exit_code == 2
    assert "--latency-ms" in result.output


# ------------------------------------------------------------------------ deployment modes
GATEWAY_VALUE = "gw-secret-7f3a"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--tls-cert", "cert.pem"], "--tls-cert and --tls-key go together"),
        (["--tls-key", "key.pem"], "--tls-cert and --tls-key go together"),
        (["--tls-client-ca", "ca.pem"], "--tls-client-ca needs --tls-cert"),
        (["--rate-limit", "0"], "positive number"),
        (["--rate-limit", "-3"], "positive number"),
        (["--rate-limit", "nan"], "positive number"),
        (["--rate-limit", "many"], "'many' is not a valid float"),
        (["--require-header", "X-Gateway-Key"], "expected 'Name: value'"),
        (["--require-header", f"X Gateway: {GATEWAY_VALUE}"], "is not a header name"),
        (
            ["--require-header", f"X-Api-Key: {GATEWAY_VALUE}"],
            "the API or HTTP itself uses this header",
        ),
        (["--require-header", f"X-Gateway-Key: {GATEWAY_VALUE}\r\nX: y"], "holds a line break"),
        (["--base-path", "payments-api"], "must start with /"),
        (["--base-path", "/api?v=1"], "may hold only"),
        (["--base-path", "/a/../b"], ". or .. segment"),
        (["--header-timeout", "0"], "the header timeout must be a positive number"),
        (["--header-timeout", "inf"], "the header timeout must be a positive number"),
        (["--header-timeout", "soon"], "'soon' is not a valid float"),
        (["--max-connections", "0"], "must be at least 1"),
        (["--max-connections", "100000000"], "open-file limit (ulimit -n)"),
    ],
)
def test_serve_refuses_bad_deployment_options_with_exit_2(args: list[str], says: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--port", "0", *args])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and says in result.output
    assert "Traceback" not in result.output
    assert GATEWAY_VALUE not in result.output  # the header's value is a secret


def test_serve_refuses_tls_files_it_cannot_use_with_exit_2(tmp_path: Path) -> None:
    certs = issue(tmp_path)
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    unreadable = tmp_path / "missing.pem"
    for cert, key, says in [
        (junk, junk, "cannot be used"),
        (certs.server_cert, certs.client_key, "key values mismatch"),
        (unreadable, certs.server_key, f"cannot read {unreadable}"),
    ]:
        result = CliRunner().invoke(
            main, ["serve", "--port", "0", "--tls-cert", str(cert), "--tls-key", str(key)]
        )
        assert result.exit_code == 2, result.output
        assert result.output.startswith("error: ") and says in result.output
        assert "Traceback" not in result.output


def test_serve_in_every_deployment_mode_says_so_and_never_prints_the_header_value(
    tmp_path: Path,
) -> None:
    certs = issue(tmp_path)
    args = ["serve", "--port", "0", "--tls-cert", str(certs.server_cert)]
    args += ["--tls-key", str(certs.server_key), "--rate-limit", "25"]
    args += ["--require-header", f"X-Gateway-Key: {GATEWAY_VALUE}", "--base-path", "/api/"]
    with CommandProcess(args, tmpdir=tmp_path) as proc:
        line = proc.wait_for_line(lambda line: "listening on" in line)
        found = re.search(r"https://127\.0\.0\.1:[0-9]+/api\b", line)
        assert found is not None, line
        url = found.group()
        started(proc)
        assert "gateway header required: X-Gateway-Key: [redacted]" in proc.stdout
        assert "rate limit: 25 requests/s per API key" in proc.stdout
        assert "base path: /api" in proc.stdout and "TLS: https" in proc.stdout
        with httpx.Client(verify=ssl.create_default_context(cafile=certs.ca)) as client:
            gateway = {"X-Gateway-Key": GATEWAY_VALUE}
            assert client.get(url + "/v1/payments", headers=gateway).status_code == 401
            assert client.get(url + "/v1/payments").status_code == 403
            assert client.get(url.removesuffix("/api") + "/v1/payments").status_code == 404
        proc.send_signal(signal.SIGINT)
        assert proc.wait() == 0, proc.describe()
    assert GATEWAY_VALUE not in proc.stdout + proc.stderr


# ------------------------------------------------------------------------ slow and idle clients
def test_serve_closes_idle_connections_and_logs_the_connection_cap_once(tmp_path: Path) -> None:
    args = ["serve", "--port", "0", "--header-timeout", "1", "--max-connections", "5"]
    with CommandProcess(args, tmpdir=tmp_path) as proc:
        url = listening_url(proc)
        assert "connections: at most 5 open, request heads within 1 s" in proc.stdout
        port = int(url.rsplit(":", 1)[1])
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
        try:
            for sock in idle:  # 5 held until the header timeout, 15 refused at once
                sock.settimeout(30)
                while sock.recv(4096):
                    pass
            line = proc.wait_for_line(lambda line: "--max-connections" in line, "stderr")
            assert "5 connections open" in line
            assert httpx.get(url + "/v1/payments").status_code == 401
        finally:
            for sock in idle:
                sock.close()
        proc.send_signal(signal.SIGINT)
        assert proc.wait() == 0, proc.describe()
        assert proc.stderr.count("--max-connections") == 1
