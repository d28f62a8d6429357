"""``run --proxy URL``: every request of the run through that proxy, none through the
environment's ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from conformance.cli import main
from conformance.core.profile import load_profile
from conformance.reference.server import ReferenceServer
from conformance.suite.wire.proxy import PROXY_ENV
from tests.engine.hostile import closed_port
from tests.forward_proxy import ForwardProxy

# the schema phases (requests) and the suite's own client (httpx) both
ONLY = ("--only", "OPS-016", "--quick", "--seed", "1")
PASSWORD = "proxy-pw-5e0a77"


@pytest.fixture(scope="module")
def server() -> Iterator[ReferenceServer]:
    with ReferenceServer(profile=load_profile()) as reference:
        yield reference


@pytest.fixture(autouse=True)
def no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", PROXY_ENV):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["run", "--no-progress", *args])


@pytest.mark.slow
def test_the_environment_s_proxy_variables_are_ignored(
    server: ReferenceServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logging = ForwardProxy()
    with logging.running() as url:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
            monkeypatch.setenv(name, url)
        result = run("--base-url", server.base_url, *ONLY, "--report-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "verdict: CONFORMANT" in result.output
    assert logging.connections == 0


@pytest.mark.slow
def test_every_request_of_the_run_goes_through_the_given_proxy(
    server: ReferenceServer, tmp_path: Path
) -> None:
    logging = ForwardProxy(password=PASSWORD)
    with logging.running() as url:
        result = run(
            *("--base-url", server.base_url, "--proxy", url, *ONLY),
            *("--workers", "2", "--report-dir", str(tmp_path)),
        )
    assert result.exit_code == 0, result.output  # before: "No such option: --proxy", exit 2
    assert "verdict: CONFORMANT" in result.output
    results = json.loads((tmp_path / "results.json").read_text())
    # preflight's probe first, then the test processes' requests, from both HTTP stacks
    assert logging.seen[0] == f"GET {server.base_url}/v1/payments?limit=1"
    assert len(logging.seen) >= results["requests_sent"] > 20
    assert all(line.split(" ", 1)[1].startswith(server.base_url) for line in logging.seen)
    assert logging.agents == {"python-httpx", "python-requests"}
    assert logging.refused == 0
    assert results["options"]["proxy"] == url.replace(PASSWORD, "[redacted]")
    assert PASSWORD not in result.output
    for path in tmp_path.iterdir():
        assert PASSWORD not in path.read_text(), path


def test_a_proxy_that_is_down_stops_the_run_at_preflight(
    server: ReferenceServer, tmp_path: Path
) -> None:
    port = closed_port()
    result = run(
        *("--base-url", server.base_url, "--proxy", f"http://u:{PASSWORD}@127.0.0.1:{port}"),
        *("--report-dir", str(tmp_path)),
    )
    assert result.exit_code == 2
    assert f"cannot connect to 127.0.0.1:{port}" in result.output
    assert "is the proxy running, and is --proxy right?" in result.output
    assert PASSWORD not in result.output


@pytest.mark.parametrize(
    ("given", "refused"),
    [
        ("socks5://127.0.0.1:1080", "must be an http:// or https:// URL"),
        (f"http://u:{PASSWORD}@[::1:3128", "is not a valid URL"),
    ],
)
def test_a_bad_proxy_url_is_refused_before_the_run(given: str, refused: str) -> None:
    result = run("--proxy", given)
    assert result.exit_code == 2
    assert refused in result.output
    assert PASSWORD not in result.output
    assert "Traceback" not in result.output
