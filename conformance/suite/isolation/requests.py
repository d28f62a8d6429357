"""The requests of the isolation family, built from the contract and the profile.

A probe of the second merchant is the request the owner could send itself (a valid body of
the second merchant's own where a body is needed), so that the only thing wrong with it is
whose id it names.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from conformance.suite.factories import Factories, RequestSpec, locate_operation


def spec(factories: Factories, operation_id: str, **parts: Any) -> RequestSpec:
    method, template = locate_operation(factories.contract, operation_id)
    return RequestSpec(operation_id, method, template, **parts)


def helper(factories: Factories, name: str, payment_id: str, body: Any = None) -> RequestSpec:
    """A test helper request (``deposit``, ``expire``) as the profile maps it."""
    return factories.helper_call(name, payment_id, body)


def deposit_body(factories: Factories, units: int) -> dict[str, Any]:
    return {
        "currency_id": factories.currency,
        "chain_id": factories.chain,
        "amount": factories.amount(units),
    }


def create_payment(factories: Factories, order_no: str | None = None) -> RequestSpec:
    """A payment without splits: no other merchant gets a ledger line for it."""
    body = factories.payment_body(splits=[])
    if order_no is not None:
        body["merchant_order_no"] = order_no
    return spec(factories, "createPayment", body=body)


def payment_call(factories: Factories, operation_id: str, payment_id: str) -> RequestSpec:
    """cancelPayment, acceptUnderpaidPayment or a test helper on ``payment_id``."""
    if operation_id == "testDepositPayment":
        return helper(factories, "deposit", payment_id, deposit_body(factories, 1))
    if operation_id == "testExpirePayment":
        return helper(factories, "expire", payment_id)
    return spec(factories, operation_id, path_params={"id": payment_id})


def list_payments(factories: Factories, **query: Any) -> RequestSpec:
    limit = factories.profile.range("payments", "list_limit").max
    return spec(factories, "listPayments", query={"limit": limit, **query})


def schedule_call(factories: Factories, operation_id: str, schedule_id: str) -> RequestSpec:
    """replace, pause or retire ``schedule_id``; a replace carries ``factories``' own body."""
    if operation_id == "replacePayoutSchedule":
        body = factories.payout_schedule_body()
        return spec(factories, operation_id, path_params={"id": schedule_id}, body=body)
    return spec(factories, operation_id, path_params={"id": schedule_id})


def x402_requirements(factories: Factories, scheme: str) -> RequestSpec:
    """x402 requirements without splits (their settlement is only the owner's income)."""
    body = factories.x402_requirements_body(scheme)
    body.pop("splits", None)
    return spec(factories, "createX402Requirements", body=body)


def settle(factories: Factories, requirements: dict[str, Any]) -> RequestSpec:
    return spec(factories, "settleX402Payment", body=factories.settle_body(requirements))


def usage(factories: Factories, payment_id: str) -> RequestSpec:
    body = {
        "actual_amount": factories.amount(1, 25),
        "usage_id": factories.unique("usage_"),
        "evidence": {"source": "payment-conformance isolation"},
    }
    return spec(factories, "reportX402Usage", path_params={"payment_id": payment_id}, body=body)


def statement(factories: Factories) -> RequestSpec:
    """The fixture currency over the last day, in the largest pages the profile allows."""
    base = factories.request("getStatement")
    limit = factories.profile.range("statements", "limit").max
    return replace(base, query={**base.query, "limit": limit})


def put_endpoint(
    factories: Factories, endpoint_id: str, url: str, event_types: list[str]
) -> RequestSpec:
    return spec(
        factories,
        "putWebhookEndpoint",
        path_params={"id": endpoint_id},
        body={"url": url, "event_types": event_types},
    )
