"""The ledger of the schema phases (conformance/suite/schema/ledger.py)."""

from __future__ import annotations

from dataclasses import replace

from conformance.core.profile import load_profile
from conformance.core.results import Evidence, Outcome
from conformance.suite.schema.ledger import CheckLedger, unexercisable_ids

PROFILE = load_profile()

EVIDENCE = Evidence("POST", "http://h/v1/payments", {}, "{}", 201, {}, "{}", "curl -X POST")


def test_a_check_that_only_passed_records_the_ids_it_verified() -> None:
    ledger = CheckLedger()
    ledger.passed("no_server_error", "createPayment", "coverage", ["ERR-006"])
    ledger.passed("no_server_error", "createPayment", "fuzzing", ["ERR-006"])
    [result] = ledger.results("unit", ["no_server_error"], ["createPayment"])
    assert result.outcome is Outcome.PASSED
    assert result.requirement_ids == ("ERR-006",)
    assert result.check_id == "schema.unit.no_server_error"
    assert "2 responses passed (coverage 1, fuzzing 1)" in result.message


def test_a_failure_keeps_the_first_evidence_and_leaves_the_other_ids_passed() -> None:
    ledger = CheckLedger()
    check = "response_schema_conformance"
    ledger.passed(check, "createPayment", "examples", ["SHAPE-014", "SHAPE-017"])
    ledger.failed(check, "createPayment", "coverage", ["SHAPE-017"], "first", EVIDENCE)
    ledger.failed(check, "createPayment", "coverage", ["SHAPE-017"], "second", EVIDENCE)
    failed, passed = ledger.results("unit", [check], ["createPayment"])
    assert failed.outcome is Outcome.FAILED
    assert failed.requirement_ids == ("SHAPE-017",)
    assert failed.message.startswith("2 of 3 responses failed") and failed.message.endswith("first")
    assert failed.evidence is EVIDENCE
    assert passed.outcome is Outcome.PASSED
    assert passed.requirement_ids == ("SHAPE-014",)


def test_a_check_with_nothing_to_check_is_not_exercised_with_its_ids() -> None:
    [result] = CheckLedger().results("stateful", ["use_after_free"], ["retirePayoutSchedule"])
    assert result.outcome is Outcome.NOT_EXERCISED
    assert result.requirement_ids == ("OPS-003",)
    assert "nothing to check" in result.message or "anything to check" in result.message


def test_passes_that_name_no_requirement_do_not_count_as_verifying_one() -> None:
    ledger = CheckLedger()
    ledger.passed("negative_data_rejection", "createPayment", "fuzzing", [])
    [result] = ledger.results("unit", ["negative_data_rejection"], ["createPayment"])
    assert result.outcome is Outcome.NOT_EXERCISED
    assert "none of them about a field" in result.message


def test_a_check_that_states_nothing_about_an_operation_records_nothing() -> None:
    # missing_required_header is about the Idempotency-Key, which GET operations do not take.
    assert CheckLedger().results("unit", ["missing_required_header"], ["listPayments"]) == []


def test_candidates_a_pinned_check_never_reached_are_not_exercised_with_the_reason() -> None:
    # negative_data_rejection is pinned to the fields a case negates: cases about other fields
    # say nothing about a quote's amount (SHAPE-033), which must then say why it was not reached.
    ledger = CheckLedger()
    ledger.passed("negative_data_rejection", "createPayment", "fuzzing", ["SHAPE-030"])
    ledger.passed("negative_data_rejection", "createPayment", "coverage", ["SHAPE-030"])
    passed, unreached = ledger.results("unit", ["negative_data_rejection"], ["createPayment"])
    assert passed.outcome is Outcome.PASSED and passed.requirement_ids == ("SHAPE-030",)
    assert unreached.outcome is Outcome.NOT_EXERCISED
    assert "SHAPE-033" in unreached.requirement_ids
    assert "SHAPE-030" not in unreached.requirement_ids
    assert "ERR-006" not in unreached.requirement_ids  # only a 5xx (a failure) names it
    assert unreached.message.startswith(
        "none of the 2 responses of createPayment that negative_data_rejection checked "
        "was about the field it names"
    )


def test_without_a_replay_header_no_response_verifies_idem_008() -> None:
    """The profile declares no replay header: the checks that look for it claim nothing, and
    say why."""
    idempotency = {**PROFILE.data["idempotency"], "replay_header": ""}
    profile = replace(PROFILE, data={**PROFILE.data, "idempotency": idempotency})
    ledger = CheckLedger(unexercisable_ids(profile))
    for check in ("ReplayHeaderOnlyOnReplays", "response_headers_conformance"):
        ledger.passed(check, "createPayment", "examples", ["IDEM-008"])
        [result] = ledger.results("unit", [check], ["createPayment"])
        assert result.outcome is Outcome.NOT_EXERCISED
        assert result.requirement_ids == ("IDEM-008",)
        assert 'replay_header = ""' in result.message
    assert unexercisable_ids(PROFILE) == {}
