"""ConstraintIds: which requirement ids a request that breaks a constraint is judged under, for
the schema family's negative cases and the validator's recorded requests alike."""

from __future__ import annotations

import pytest

from conformance.core.profile import load_profile
from conformance.judge.constraint_ids import ConstraintIds, _field
from conformance.judge.response_schemas import Problem


@pytest.fixture(scope="module")
def ids() -> ConstraintIds:
    return ConstraintIds(load_profile("default"))


def test_a_field_is_found_by_its_own_name_and_location() -> None:
    assert _field("shares[0].bps") == ("body", "bps")
    assert _field("query.limit") == ("query", "limit")
    assert _field("path.id") == ("path", "id")


def test_a_problem_of_no_boundary_kind_names_no_id(ids: ConstraintIds) -> None:
    missing = Problem("shares[0]", "'bps' is a required property", frozenset({"bps"}), frozenset())
    assert ids.ids("replaceSplitTemplate", [missing]) == ()


def test_a_case_is_judged_by_the_constraint_its_field_and_tag_name(ids: ConstraintIds) -> None:
    above = ids.of("createPayoutSchedule", {"interval_secs"}, {"value_above_maximum"})
    assert above == ("LIMIT-005", "STATUS-008")
    # a replace takes the same fields (spec 4, operation 13) and the same limits (spec 8)
    assert ids.of("replacePayoutSchedule", {"interval_secs"}, {"value_above_maximum"}) == above
    pattern = ids.of("createPayoutSchedule", {"min_send_amount"}, {"invalid_pattern"})
    assert pattern == ("SHAPE-040", "STATUS-006")
    # no constraint kind in the tags: the caller pins the ids by the text instead
    assert ids.of("createPayoutSchedule", {"interval_secs"}, {"object_missing_required"}) == ()


def test_a_case_refused_with_another_answer_breaks_only_the_ids_of_the_answer(
    ids: ConstraintIds,
) -> None:
    """A split share's bps out of range refused as a business rule: it was refused (LIMIT-008
    held); the profile's validation answer (STATUS-008, SPLIT-006) was not given."""
    fields, tags = {"bps"}, {"value_below_minimum"}
    assert "LIMIT-008" in ids.of("replaceSplitTemplate", fields, tags)
    refused = ids.of("replaceSplitTemplate", fields, tags, status_only=True)
    assert "LIMIT-008" not in refused
    assert {"STATUS-008", "SPLIT-006"} <= set(refused)


def test_a_refusal_is_judged_under_the_constraints_ids_when_every_problem_has_one(
    ids: ConstraintIds,
) -> None:
    pattern = Problem(
        "min_send_amount",
        "does not match",
        frozenset({"min_send_amount"}),
        frozenset({"invalid_pattern"}),
    )
    missing = Problem("mode", "is required", frozenset({"mode"}), frozenset())
    candidates = ("LIMIT-006", "OPS-022", "SHAPE-040", "STATUS-005", "STATUS-006")
    assert ids.rejection_ids("createPayoutSchedule", [pattern], candidates) == (
        "SHAPE-040",
        "STATUS-006",
    )
    # a problem no constraint knows: the candidates its fields point at, and the constraints'
    assert set(ids.rejection_ids("createPayoutSchedule", [pattern, missing], candidates)) >= {
        "SHAPE-040",
        "STATUS-006",
    }


def test_a_field_of_another_json_type_is_its_types_constraint_not_its_fields_other_rules(
    ids: ConstraintIds,
) -> None:
    # usage_id given as an object: the type's ids, not SHAPE-043 (a usage without usage_id)
    wrong = Problem(
        "usage_id",
        "is not of type 'string'",
        frozenset({"usage_id"}),
        frozenset({"incorrect_type"}),
    )
    assert ids.ids("reportX402Usage", [wrong]) == ("SHAPE-031", "STATUS-004")
    assert ids.of("reportX402Usage", {"usage_id"}, {"incorrect_type"}) == (
        "SHAPE-031",
        "STATUS-004",
    )


def test_a_refusal_with_another_answer_breaks_the_profiles_status_alone(
    ids: ConstraintIds,
) -> None:
    # a settle whose requirements' max_amount_required ends in a dot, refused 422 (not 400):
    # the pattern's validation answer (STATUS-006), not every id a refusal's status may name
    nested = Problem(
        "payment_requirements.max_amount_required",
        "does not match",
        frozenset({"max_amount_required"}),
        frozenset({"invalid_pattern"}),
    )
    candidates = ("IDEM-006", "STATUS-003", "STATUS-004", "STATUS-005", "STATUS-006")
    assert ids.misanswered_ids("settleX402Payment", [nested], candidates) == ("STATUS-006",)
    # a problem no constraint has: as before, the candidates it points at (all, when none)
    missing = Problem("mode", "is required", frozenset({"mode"}), frozenset())
    assert ids.misanswered_ids("createPayoutSchedule", [missing], candidates) == candidates
