"""A rotation's secret against the endpoint's earlier ones (WH-011)."""

from __future__ import annotations

from conformance.core.results import Outcome
from conformance.judge.webhook_secrets import SecretRotations

SECRET = "whsec_c2VjcmV0LW9uZQ=="


def test_a_new_secret_passes_and_one_given_again_fails_without_showing_it() -> None:
    rotations = SecretRotations()
    first = rotations.rotated("m1", "we_1", SECRET, "entry 3")
    again = rotations.rotated("m1", "we_1", SECRET, "entry 7")
    assert first.outcome is Outcome.PASSED
    assert again.outcome is Outcome.FAILED and again.ids == ("WH-011",)
    assert "entry 3" in again.message and SECRET not in again.message


def test_the_same_secret_on_another_endpoint_or_merchant_is_not_a_repeat() -> None:
    rotations = SecretRotations()
    rotations.rotated("m1", "we_1", SECRET)
    assert rotations.rotated("m1", "we_2", SECRET).outcome is Outcome.PASSED
    assert rotations.rotated("m2", "we_1", SECRET).outcome is Outcome.PASSED


def test_the_caller_may_attribute_the_rule_to_more_requirements() -> None:
    rotations = SecretRotations()
    rotations.rotated("m1", "we_1", SECRET)
    found = rotations.rotated("m1", "we_1", SECRET, also=("WH-003",))
    assert found.ids == ("WH-011", "WH-003") and found.outcome is Outcome.FAILED
