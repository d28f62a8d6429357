"""Payment lists and order numbers as the judge sees them (``judge.lists``): what a caller that
knows its walk or its case asks beyond what a recording shows (the validator's use is tested in
tests/validator/test_walks.py and test_orders.py)."""

from __future__ import annotations

import pytest

from conformance.core.profile import Profile, load_profile
from conformance.core.results import Outcome
from conformance.judge.findings import Finding
from conformance.judge.lists import ListWalks, OrderNumbers, OrderUse
from conformance.judge.tables import When, digest

OWN = digest("merchant", "m1")


@pytest.fixture(scope="module")
def profile() -> Profile:
    return load_profile("default")


def walks(profile: Profile, *ids: str) -> ListWalks:
    """A ``ListWalks`` that saw ``ids`` created one after the other."""
    lists = ListWalks(profile)
    for position, pid in enumerate(ids, 1):
        lists.created(OWN, pid, When(float(position), position + 0.5, position))
    return lists


def outcomes(found: list[Finding], rid: str) -> list[Outcome]:
    return [f.outcome for f in found if rid in f.ids]


def test_a_walk_listing_every_expected_payment_newest_first_passes(profile: Profile) -> None:
    lists = walks(profile, "p1", "p2", "p3")
    found = list(lists.walked(["p1", "p2", "p3"], [["p3", "x"], ["p2", "p1"]], ended=True))
    assert outcomes(found, "PAY-018") == [Outcome.PASSED]
    assert outcomes(found, "PAY-019") == [Outcome.PASSED]


def test_a_payment_listed_twice_in_a_walk_fails(profile: Profile) -> None:
    lists = walks(profile, "p1", "p2", "p3")
    found = list(lists.walked(["p1", "p2", "p3"], [["p3"], ["p2"], ["p3", "p1"]], ended=True))
    assert outcomes(found, "PAY-019") == [Outcome.FAILED]
    assert "p3 is listed twice (page 3)" in found[0].message
    found = list(lists.walked(["p1"], [["p3", "p3"]], ended=False))
    assert outcomes(found, "PAY-019") == [Outcome.FAILED]


def test_the_order_across_the_pages_of_a_walk_is_judged(profile: Profile) -> None:
    lists = walks(profile, "p1", "p2", "p3")
    found = list(lists.walked(["p1", "p2", "p3"], [["p3", "y"], ["x", "p1"], ["p2"]], ended=True))
    assert outcomes(found, "PAY-018") == [Outcome.FAILED]


def test_an_expected_payment_on_no_page_of_an_ended_walk_fails_with_the_filter(
    profile: Profile,
) -> None:
    lists = walks(profile, "p1", "p2", "p3")
    found = list(lists.walked(["p1", "p2", "p3"], [["p3"], ["p1"]], ended=True, filtered=["X"]))
    assert [f.ids for f in found if f.outcome is Outcome.FAILED] == [("PAY-019", "X")]


def test_a_walk_cut_short_judges_what_is_missing_only_past_the_oldest(profile: Profile) -> None:
    lists = walks(profile, "p1", "p2", "p3")
    # the oldest not reached yet: a missing one may still come
    assert outcomes(list(lists.walked(["p1", "p2", "p3"], [["p3"]], ended=False)), "PAY-019") == []
    # the oldest listed, newest first: p2 had to come before it
    found = list(lists.walked(["p1", "p2", "p3"], [["p3"], ["p1"]], ended=False))
    assert outcomes(found, "PAY-019") == [Outcome.FAILED]


def test_none_of_the_newest_payments_leading_the_list_fails_the_order(profile: Profile) -> None:
    lists = walks(profile, "p1", "p2")
    found = list(lists.walked(["p1", "p2"], [["x", "y"]], ended=False))
    assert outcomes(found, "PAY-018") == [Outcome.FAILED]


def test_a_walk_expecting_a_payment_not_seen_created_is_the_callers_bug(
    profile: Profile,
) -> None:
    with pytest.raises(ValueError, match="p9"):
        list(walks(profile, "p1").walked(["p1", "p9"], [["p1"]], ended=False))


def use(status: int, code: object = None, payment_id: object = None) -> OrderUse:
    return OrderUse(OWN, False, "order-1", status, code, payment_id)


def test_a_known_valid_duplicate_refused_with_another_error_fails(profile: Profile) -> None:
    numbers = OrderNumbers(profile)
    assert list(numbers.created(use(201, payment_id="p1"))) == []
    found = list(numbers.created(use(400, "validation_error"), known_valid=True))
    assert outcomes(found, "PAY-013") == [Outcome.FAILED]
    # a recording cannot tell why it was refused: it leaves the answer unjudged
    assert list(numbers.created(use(400, "validation_error"))) == []


def test_a_known_valid_duplicate_answered_with_the_first_payment_fails(profile: Profile) -> None:
    numbers = OrderNumbers(profile)
    list(numbers.created(use(201, payment_id="p1")))
    found = list(numbers.created(use(201, payment_id="p1"), known_valid=True))
    assert outcomes(found, "PAY-013") == [Outcome.FAILED]


def test_a_known_valid_duplicate_refused_as_the_profile_says_passes(profile: Profile) -> None:
    numbers = OrderNumbers(profile)
    list(numbers.created(use(201, payment_id="p1")))
    error = numbers.duplicate
    found = list(numbers.created(use(error.status, error.code), known_valid=True))
    assert outcomes(found, "PAY-013") == [Outcome.PASSED]


def test_a_duplicate_of_a_number_not_used_is_the_callers_bug(profile: Profile) -> None:
    with pytest.raises(ValueError, match="order-1"):
        list(OrderNumbers(profile).created(use(409, "duplicate_order"), known_valid=True))
