"""JudgedCall: an exchange the suite made, as the judge's answer rules read one."""

from __future__ import annotations

import httpx

from conformance.core.profile import load_profile
from conformance.judge.answers import AnswerChecks
from conformance.judge.findings import NOT_JSON
from conformance.suite.wire.judged_call import JudgedCall

URL = "http://server.test/v1/payments?status=pending&limit=2&limit=3"


def sent(
    body: object = None, *, status: int = 200, answer: object = None, method: str = "GET"
) -> httpx.Response:
    request = httpx.Request(method, URL, json=body, headers={"Idempotency-Key": "k-1"})
    return httpx.Response(status, json=answer, request=request)


def test_it_reads_the_sent_request_and_the_answer() -> None:
    call = JudgedCall(
        sent({"merchant_order_no": "o-1"}, status=409, answer={"code": "invalid_state"}),
        "cancelPayment",
        {"id": "pay_1"},
    )
    assert (call.status, call.success, call.code) == (409, False, "invalid_state")
    assert call.field("merchant_order_no") == "o-1"
    assert call.query == {"status": "pending", "limit": "2"}  # the first value of each
    assert call.header("idempotency-key") == "k-1"
    assert call.path_params == {"id": "pay_1"}


def test_a_request_without_a_body_has_no_fields() -> None:
    request = httpx.Request("GET", URL)
    call = JudgedCall(httpx.Response(200, content=b"<html>", request=request), "listPayments")
    assert call.request is NOT_JSON and call.field("status") is None
    assert call.answer is None and call.code is None


def test_a_derived_time_is_judged_in_the_window_the_family_gives_or_not_at_all() -> None:
    checks = AnswerChecks(load_profile("default"))
    body = {"quotes": {"usdc": {"amount": "1"}}, "merchant_order_no": "o-1", "expires_in_secs": 60}
    answer = {"id": "pay_1", "status": "pending", "expires_at": "2026-01-01T00:01:00Z"}
    response = sent(body, status=201, answer=answer, method="POST")
    at = 1767225600.0  # 2026-01-01T00:00:00Z

    def pay_010(handled: tuple[float, float] | None) -> list[str]:
        call = JudgedCall(response, "createPayment", handled=handled)
        return [f.outcome.value for f in checks.judge(call) if "PAY-010" in f.ids]

    assert pay_010((at - 3, at + 3)) == ["passed"]
    assert pay_010((at + 10, at + 15)) == ["failed"]  # narrower than the judge's own allowance
    assert pay_010(None) == []
