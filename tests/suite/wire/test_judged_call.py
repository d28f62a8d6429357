"""JudgedCall: an exchange the suite sent, read as the judge's ``Call``."""

from __future__ import annotations

import json

import httpx

from conformance.core.profile import load_profile
from conformance.core.results import Outcome
from conformance.judge.answers import AnswerChecks
from conformance.judge.findings import NOT_JSON
from conformance.suite.wire.judged_call import JudgedCall, judged

SENT_AT = 1_767_225_600


def response(
    body: object, answer: object, status: int = 201, url: str = "https://api.test/v1/x"
) -> httpx.Response:
    content = json.dumps(body).encode() if body is not None else b""
    request = httpx.Request("POST", url, content=content, headers={"X-Timestamp": str(SENT_AT)})
    return httpx.Response(status, json=answer, request=request)


def test_the_call_reads_what_was_sent_and_what_came_back() -> None:
    sent = response(
        {"usage_id": "u-1"}, {"code": "invalid_state"}, 409, "https://api.test/v1/x?a=1&a=2"
    )
    call = JudgedCall(sent, "reportX402Usage", {"payment_id": "pay_1"})
    assert (call.status, call.success, call.code) == (409, False, "invalid_state")
    assert call.field("usage_id") == "u-1"
    assert call.field("absent") is None
    assert call.query == {"a": "1"}
    assert call.header("x-timestamp") == str(SENT_AT)
    assert JudgedCall(response(None, {}), "getStatement").request is NOT_JSON


def test_the_server_handled_it_within_the_slack_of_when_it_was_sent() -> None:
    sent = response({}, {})
    assert JudgedCall(sent, "op", sent=(100.0, 101.5)).handled_between(10, True) == ((90.0, 111.5),)
    stamp = float(SENT_AT)
    assert JudgedCall(sent, "op").handled_between(10, True) == ((stamp - 10, stamp + 10),)
    assert JudgedCall(sent, "op").handled_between(10, False) == ()


def test_the_judge_reads_it_as_it_reads_a_recorded_exchange() -> None:
    request = {"currency_id": "usdc", "chain_id": "base", "amount": "12.5"}
    entry = {"scheme": "exact", "network": "base", "max_amount_required": "12500000",
             "valid_before": SENT_AT + 3000}  # fmt: skip
    sent = response(request, {"payment_id": "pay_1", "accepts": [entry]})
    window = (float(SENT_AT), float(SENT_AT + 1))
    findings = judged(
        AnswerChecks(load_profile("default")), sent, "createX402Requirements", sent=window
    )
    failed = {rid for f in findings if f.outcome is Outcome.FAILED for rid in f.ids}
    assert "X402-008" in failed  # ten times the profile's offset
    assert "X402-005" not in failed
