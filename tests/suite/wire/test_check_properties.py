"""Recorded messages stay clean, and the recorder keeps each sub-check with its test's family.

The trip of a CheckResult through user_properties: ``tests/core/test_evidence.py``."""

from __future__ import annotations

from conformance.core.results import Outcome
from conformance.suite.wire.check_properties import (
    MESSAGE_LIMIT,
    CheckRecorder,
    clean_message,
)


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
