"""The operation registry: routes, path parameters, 405 information."""

from __future__ import annotations

import pytest

from conformance.reference.app import domain_modules
from conformance.reference.operations import (
    ROUTES,
    NoRoute,
    registered_operations,
    resolve,
)


def test_every_route_has_a_handler() -> None:
    domain_modules()
    assert registered_operations() == {r.operation_id for r in ROUTES}
    assert len(ROUTES) == 22


def test_resolve_extracts_path_parameters() -> None:
    match = resolve("POST", "/v1/x402/pay_1/usage")
    assert match.route.operation_id == "reportX402Usage"
    assert match.path_params == {"payment_id": "pay_1"}
    assert resolve("DELETE", "/v1/payout-schedules/ps_1").route.operation_id == (
        "retirePayoutSchedule"
    )


def test_wrong_method_lists_the_allowed_ones() -> None:
    with pytest.raises(NoRoute) as caught:
        resolve("GET", "/v1/payout-schedules/ps_1")
    assert caught.value.allowed == ("DELETE", "PUT")


@pytest.mark.parametrize(
    "path", ["/v1/payments/", "/v1/payments/a/b/cancel", "/v1/payments//cancel"]
)
def test_unknown_paths_have_no_methods(path: str) -> None:
    with pytest.raises(NoRoute) as caught:
        resolve("POST", path)
    assert caught.value.allowed == ()
