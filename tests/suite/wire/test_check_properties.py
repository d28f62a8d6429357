"""CheckResults survive the trip through user_properties, and recorded messages stay clean."""

from __future__ import annotations

import json

from conformance.core.results import CheckResult, Evidence, Outcome
from conformance.suite.wire.check_properties import (
    MESSAGE_LIMIT,
    CheckRecorder,
    check_from_dict,
    check_to_dict,
    clean_message,
)

EVIDENCE = Evidence(
    method="POST",
    url="http://127.0.0.1:1/v1/payments",
    request_headers={"X-Signature": "[redacted]"},
    request_body='{"a":1}',
    status=500,
    response_headers={"content-type": "text/plain"},
    response_body="boom",
    curl="curl -X POST http://127.0.0.1:1/v1/payments",
)


def test_a_check_round_trips_through_plain_json_values() -> None:
    check = CheckResult(
        check_id="test_auth.py::test_x[createPayment]",
        family="auth",
        requirement_ids=("AUTH-001", "AUTH-002"),
        outcome=Outcome.FAILED,
        message="expected 401",
        operation_id="createPayment",
        duration_s=0.25,
        evidence=EVIDENCE,
    )
    as_dict = check_to_dict(check)
    assert json.loads(json.dumps(as_dict)) == as_dict  # nothing xdist could not carry
    assert check_from_dict(as_dict) == check


def test_messages_lose_secrets_and_excess_length() -> None:
    text = clean_message("sig sk_secret " + "x" * (MESSAGE_LIMIT + 10), ("sk_secret",))
    assert "sk_secret" not in text and "[redacted]" in text
    assert text.endswith("more characters]")


def test_the_recorder_keeps_sub_checks_with_the_test_family_and_operation() -> None:
    recorder = CheckRecorder("schema", secrets=("sk_secret",), operation_id="listPayments")
    recorder.record("status_code", ["SHAPE-001"], "passed")
    recorder.record("body", ("SHAPE-002",), Outcome.FAILED, "leaked sk_secret", "createPayment")
    recorder.record("links", ["SHAPE-003"], "not_exercised", "no links in the contract")
    passed, failed, skipped = recorder.checks
    assert (passed.family, passed.operation_id, passed.outcome) == (
        "schema",
        "listPayments",
        Outcome.PASSED,
    )
    assert failed.operation_id == "createPayment"
    assert failed.message == "leaked [redacted]"
    assert recorder.failures == [failed]
    assert skipped.reason_not_exercised == "no links in the contract"
