"""JudgedCall (suite/wire/judged_call.py): what a family sent and got back, read as the judge's
rules read an exchange."""

from __future__ import annotations

import httpx

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.answers import AnswerChecks
from conformance.judge.findings import NOT_JSON
from conformance.suite.wire.judged_call import JudgedCall, judged


def sent(body: bytes = b"", status: int = 201, answer: bytes = b"") -> httpx.Response:
    request = httpx.Request(
        "POST",
        "https://api.example.com/v1/things/t_1?limit=5&limit=6&status=open",
        content=body,
        headers={"Idempotency-Key": "k-1"},
    )
    return httpx.Response(status, content=answer, request=request)


def test_the_request_and_the_answer_as_sent_and_received() -> None:
    response = sent(b'{"amount": "1.5"}', 422, b'{"code": "too_many_decimals"}')
    call = JudgedCall(response, "createThing", {"id": "t_1"})
    assert (call.operation_id, call.path_params, call.status) == ("createThing", {"id": "t_1"}, 422)
    assert call.field("amount") == "1.5" and call.field("other") is None
    assert not call.success and call.code == "too_many_decimals"
    assert call.query == {"limit": "5", "status": "open"}  # the first value of each
    assert call.header("idempotency-key") == "k-1"


def test_a_body_that_is_not_json_reads_as_none() -> None:
    call = JudgedCall(sent(b"amount=1.5", 200, b"<html>"), "createThing")
    assert call.request is NOT_JSON and call.answer is None and call.field("amount") is None
    assert call.success and call.code is None


def test_the_family_narrows_when_the_request_was_handled() -> None:
    call = JudgedCall(sent(), "createThing", handled=(100.0, 110.0))
    assert call.handled_between(360, True) == ((100.0, 110.0),)
    [(low, high)] = JudgedCall(sent(), "createThing").handled_between(360, True)
    assert high - low >= 720  # the judge's slack either side of the time it was sent


def test_a_derived_time_is_judged_in_the_window_the_family_gives() -> None:
    checks = AnswerChecks(load_profile("default"))
    body = b'{"quotes":{"usdc":{"amount":"1"}},"merchant_order_no":"o-1","expires_in_secs":60}'
    answer = b'{"id":"pay_1","status":"pending","expires_at":"2026-01-01T00:01:00Z"}'
    at = 1767225600.0  # 2026-01-01T00:00:00Z

    def pay_010(handled: tuple[float, float]) -> list[str]:
        call = JudgedCall(sent(body, 201, answer), "createPayment", handled=handled)
        return [f.outcome.value for f in checks.judge(call) if "PAY-010" in f.ids]

    assert pay_010((at - 3, at + 3)) == ["passed"]
    assert pay_010((at + 10, at + 15)) == ["failed"]  # narrower than the judge's own allowance


def test_the_judge_reads_it_as_it_reads_a_recorded_exchange() -> None:
    body = b'{"currency_id":"usdc","chain_id":"base","amount":"12.5"}'
    entry = (
        b'{"scheme":"exact","network":"base","max_amount_required":"12500000",'
        b'"valid_before":1767228600}'  # ten times the profile's offset after 2026-01-01
    )
    response = sent(body, 201, b'{"payment_id":"pay_1","accepts":[' + entry + b"]}")
    at = 1767225600.0
    checks = AnswerChecks(load_profile("default"))
    findings = checks.judge(JudgedCall(response, "createX402Requirements", handled=(at, at + 1)))
    failed = {rid for f in findings if f.outcome is Outcome.FAILED for rid in f.ids}
    assert "X402-008" in failed
    assert "X402-005" not in failed
    # without a window of the family's, the judge's own slack around the time it came
    assert judged(checks, response, "createX402Requirements")
