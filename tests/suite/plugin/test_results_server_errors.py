"""ERR-006 in the plugin: a 5xx answer to any request a test sent fails the requirement in that
test's results, as the validator fails every recorded 5xx, unless the test judged ERR-006 itself.
"""

from __future__ import annotations

import contextlib
import http.server
import textwrap
import threading
from collections.abc import Iterator

import pytest

from conformance.core.evidence import check_from_dict
from conformance.core.results import CheckResult, Outcome
from conformance.suite.wire.check_properties import CHECK_PROPERTY

pytest_plugins = ("pytester",)

CHECKS = """
    import pytest
    from conformance.core.results import Outcome

    @pytest.mark.requirement("PAY-014")
    def test_a_family_check(suite_client, check_recorder):
        status = suite_client.get("/v1/payments").status_code
        check_recorder.record("listed", ["PAY-014"], Outcome.PASSED, f"answered {status}")

    @pytest.mark.requirement("ERR-006")
    def test_a_check_of_its_own(suite_client, check_recorder):
        status = suite_client.get("/v1/payments").status_code
        check_recorder.record("no 5xx", ["ERR-006"], Outcome.FAILED, f"answered {status}")
"""


class _Failing(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"code":"internal","message":"boom"}'
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def failing_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _checks(pytester: pytest.Pytester, base_url: str) -> list[CheckResult]:
    pytester.makeini("[pytest]\nconformance_suite_dirs = checks\n")
    pytester.mkdir("checks")
    (pytester.path / "checks" / "test_answers.py").write_text(textwrap.dedent(CHECKS))
    result = pytester.inline_run("-p", "no:randomly", "--base-url", base_url)
    return [
        check_from_dict(value)
        for report in result.getreports("pytest_runtest_logreport")
        if report.when == "teardown"
        for name, value in report.user_properties
        if name == CHECK_PROPERTY
    ]


def test_a_5xx_any_test_got_fails_err_006_in_that_test(pytester: pytest.Pytester) -> None:
    with failing_server() as base_url:
        checks = _checks(pytester, base_url)
    [err] = [c for c in checks if "test_a_family_check" in c.check_id]
    assert err.requirement_ids == ("ERR-006",) and err.outcome is Outcome.FAILED
    assert "1 answer(s) with a 5xx status; first: GET " in err.message
    assert err.evidence is not None and err.evidence.status == 500
    # a test that judged ERR-006 itself gets no second result for it
    assert [c.check_id for c in checks if c.requirement_ids == ("ERR-006",)] == [
        err.check_id,
        "no 5xx",
    ]
