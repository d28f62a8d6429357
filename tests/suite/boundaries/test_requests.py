"""Request editing (conformance/suite/boundaries/requests.py): one field of a valid request."""

from __future__ import annotations

import pytest

from conformance.judge.constraints import ARRAY_ITEM, MAP_VALUE, FieldRef
from conformance.suite.boundaries.requests import can_set, get_value, with_value, without
from conformance.suite.factories import ABSENT, RequestSpec


# ------------------------------------------------------------------ varying one field
def spec() -> RequestSpec:
    return RequestSpec(
        "createPayment",
        "POST",
        "/v1/payments/{id}",
        path_params={"id": "p 1"},
        query={"limit": "20"},
        headers={"Idempotency-Key": "k"},
        body={"quotes": {"usdc": {"amount": "1"}}, "splits": [{"bps": 5}]},
    )


def test_get_and_with_value_follow_items_and_map_values() -> None:
    request = spec()
    bps = FieldRef("body", ("splits", ARRAY_ITEM, "bps"))
    amount = FieldRef("body", ("quotes", MAP_VALUE, "amount"))
    assert get_value(request, bps) == 5 and get_value(request, amount) == "1"
    changed = with_value(with_value(request, bps, 10001), amount, "01")
    assert changed.body == {"quotes": {"usdc": {"amount": "01"}}, "splits": [{"bps": 10001}]}
    assert request.body["splits"][0]["bps"] == 5  # the original is untouched


def test_with_value_sets_a_missing_optional_field_but_not_a_missing_parent() -> None:
    request = spec()
    assert get_value(request, FieldRef("body", ("memo",))) is ABSENT
    assert with_value(request, FieldRef("body", ("memo",)), "x").body["memo"] == "x"
    assert not can_set(request, FieldRef("body", ("nothing", "deeper")))
    with pytest.raises(KeyError):
        with_value(request, FieldRef("body", ("nothing", "deeper")), 1)


def test_parameters_are_replaced_in_place() -> None:
    request = spec()
    assert with_value(request, FieldRef("query", ("limit",)), "101").query == {"limit": "101"}
    moved = with_value(request, FieldRef("path", ("id",)), "a/b")
    assert moved.path == "/v1/payments/a%2Fb"
    header = with_value(request, FieldRef("header", ("idempotency-key",)), "new")
    assert header.headers == {"idempotency-key": "new"}


def test_without_leaves_out_one_member_and_nothing_else() -> None:
    original = spec()
    amount = FieldRef("body", ("quotes", MAP_VALUE, "amount"))
    left = without(original, amount)
    assert get_value(left, amount) is ABSENT
    assert get_value(left, FieldRef("body", ("splits", ARRAY_ITEM, "bps"))) == 5
    assert original.body["quotes"]["usdc"] == {"amount": "1"}  # the original is untouched
    assert without(original, FieldRef("query", ("limit",))).query == {}


def test_without_refuses_what_cannot_be_left_out() -> None:
    for ref in (
        FieldRef("path", ("id",)),  # the route would change
        FieldRef("body", ("splits", ARRAY_ITEM)),  # an item, not a member
        FieldRef("body", ()),
    ):
        with pytest.raises(KeyError):
            without(spec(), ref)
