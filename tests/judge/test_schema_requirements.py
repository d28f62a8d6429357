"""Which requirement ids a schema check names (conformance/judge/schema_requirements.py)."""

from __future__ import annotations

from dataclasses import replace

from conformance.core.contract import operations
from conformance.core.profile import load_profile
from conformance.judge.schema_requirements import (
    catalogue,
    pin,
    pin_to_fields,
    requirement_ids,
    rules,
    tag_ids,
)
from conformance.suite.schema.test_schema import STATEFUL_CHECKS, UNIT_CHECKS


def test_every_id_the_rules_name_is_in_the_catalogue() -> None:
    known = set(catalogue())
    table = rules()
    named: set[str] = set()
    for mapping in table["requirements"].values():
        lists = mapping.values() if isinstance(mapping, dict) else [mapping]
        for ids in lists:
            named.update(ids)
    for ids in table["tags"].values():
        named.update(ids)
    assert named - known == set()


def test_every_check_of_the_family_names_requirements_on_every_operation() -> None:
    for check in {*UNIT_CHECKS, *STATEFUL_CHECKS}:
        assert check in rules()["requirements"], check
    for op in operations():
        assert requirement_ids("no_server_error", op.operation_id) == ("ERR-006",)
        assert requirement_ids("response_schema_conformance", op.operation_id, 200)


def test_ids_depend_on_the_operation_and_the_status() -> None:
    assert "SHAPE-017" in requirement_ids("response_schema_conformance", "createPayment", 201)
    assert "SHAPE-017" not in requirement_ids("response_schema_conformance", "listPayments", 200)
    assert requirement_ids("response_schema_conformance", "cancelPayment", 404) == (
        "ERR-002",
        "ERR-003",
        "ERR-004",
        "ERR-005",
        "STATUS-013",
    )
    assert requirement_ids("content_type_conformance", "cancelPayment", 200) == ("OPS-008",)
    assert requirement_ids("positive_data_acceptance", "cancelPayment", 500) == ("ERR-006",)


def test_an_accepted_invalid_request_breaks_the_contract_a_wrong_rejection_the_profile() -> None:
    accepted = requirement_ids("negative_data_rejection", "createPayoutSchedule", 201)
    rejected = requirement_ids("negative_data_rejection", "createPayoutSchedule", 422)
    assert "LIMIT-005" in accepted and "STATUS-008" not in accepted
    assert "STATUS-008" in rejected and "LIMIT-005" not in rejected


def test_a_status_is_read_as_the_profiles_answer_that_has_it() -> None:
    """The rules name the profile's answers (``status.validation``), not statuses: a profile
    that moves the validation error to 422 moves its ids with it; where two answers share the
    status, the ids of both."""
    default = load_profile()
    status = {**default.data["status"], "validation": {"status": 422, "code": "invalid_request"}}
    moved = replace(default, data={**default.data, "status": status})
    rejected = requirement_ids("negative_data_rejection", "createPayment", 422, profile=moved)
    assert "SHAPE-030" in rejected and "STATUS-005" in rejected
    assert "SHAPE-030" not in requirement_ids("negative_data_rejection", "createPayment", 422)
    assert requirement_ids("ErrorCodeMatchesProfile", "createPayment", 422, profile=moved) == (
        "STATUS-012",
        "STATUS-015",
    )
    assert requirement_ids("ErrorCodeMatchesProfile", "createPayment", 400, profile=moved) == ()


def test_a_result_is_pinned_to_the_fields_and_tags_it_names() -> None:
    candidates = requirement_ids("negative_data_rejection", "createPayoutSchedule", 201)
    assert pin_to_fields(candidates, ["interval_secs"]) == ("OPS-022", "LIMIT-005")
    assert pin_to_fields(candidates, []) == ()
    assert "STATUS-010" in tag_ids(["non_unique_items"])
    profile_side = requirement_ids("negative_data_rejection", "putWebhookEndpoint", 422)
    assert pin(profile_side, ["event_types"], {"non_unique_items"}) == ("STATUS-010",)
    shape = requirement_ids("response_schema_conformance", "createPayment", 201)
    assert set(pin(shape, ["expires_at"], {"format:date-time"})) == {
        "SHAPE-001",
        "SHAPE-014",
        "OPS-015",
    }
