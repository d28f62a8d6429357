"""The public Python API: ``validate_exchange`` judges one exchange inside an implementer's test.

from conformance.validator import validate_exchange

results = validate_exchange(exchange)  # the default profile, or a name, a path, a Profile
"""

from __future__ import annotations

import pytest

from conformance.core.profile import ProfileError, load_profile
from conformance.core.results import Outcome
from conformance.validator import validate_exchange, validator_for
from tests.validator.samples import exchange
from tests.validator.test_checks import AUTH, KEY, create_payment


def test_a_valid_exchange_passes_with_the_default_profile() -> None:
    results = validate_exchange(create_payment())
    assert results
    assert all(r.outcome is Outcome.PASSED for r in results)
    assert all(r.family == "validate" and r.operation_id == "createPayment" for r in results)


def test_a_broken_exchange_fails_with_its_requirement_ids() -> None:
    results = validate_exchange(create_payment(status=200))
    failures = [r for r in results if r.outcome is Outcome.FAILED]
    assert [r.requirement_ids for r in failures] == [("STATUS-001",)]
    assert failures[0].evidence is not None and failures[0].evidence.status == 200


def test_the_profile_can_be_a_name_or_a_loaded_profile() -> None:
    profile = load_profile("default")
    by_name = validate_exchange(create_payment(), "default")
    by_object = validate_exchange(create_payment(), profile)
    assert [r.requirement_ids for r in by_name] == [r.requirement_ids for r in by_object]


def test_the_validator_of_a_profile_is_built_once() -> None:
    assert validator_for("default") is validator_for("default")
    assert validator_for(load_profile("default")) is validator_for("default")


def test_an_unknown_operation_is_a_result_not_an_error() -> None:
    [result] = validate_exchange(exchange("GET", "/v1/unknown", request_headers=AUTH + KEY))
    assert result.outcome is Outcome.FAILED
    assert result.operation_id is None


def test_an_unknown_profile_raises_profile_error() -> None:
    with pytest.raises(ProfileError, match="no profile named"):
        validate_exchange(create_payment(), "no-such-profile")
