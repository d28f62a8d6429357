"""The operation registry: routes of the 20 operations and the test helpers, and their handlers.

A handler is a plain function of a ``RequestContext`` returning a ``Reply``; it registers
itself with ``@operation("createPayment")``. The framework (``app.py``) has already checked
authentication, the Idempotency-Key and the contract before a handler runs, and runs it inside
one database transaction.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.reference.context import RequestContext


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[["RequestContext"], Reply]


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    operation_id: str
    regex: re.Pattern[str]
    params: tuple[str, ...]

    @property
    def is_test_helper(self) -> bool:
        return self.template.startswith("/v1/test-helpers/")


ROUTE_TABLE: tuple[tuple[str, str, str], ...] = (
    ("GET", "/v1/webhook-endpoints", "listWebhookEndpoints"),
    ("PUT", "/v1/webhook-endpoints/{id}", "putWebhookEndpoint"),
    ("POST", "/v1/webhook-endpoints/{id}/rotate-secret", "rotateWebhookEndpointSecret"),
    ("GET", "/v1/webhook-deliveries", "listWebhookDeliveries"),
    ("POST", "/v1/webhook-deliveries/{id}/resend", "resendWebhookDelivery"),
    ("POST", "/v1/payments", "createPayment"),
    ("GET", "/v1/payments", "listPayments"),
    ("POST", "/v1/payments/{id}/cancel", "cancelPayment"),
    ("POST", "/v1/payments/{id}/accept-underpaid", "acceptUnderpaidPayment"),
    ("POST", "/v1/subscriptions", "createSubscription"),
    ("POST", "/v1/subscriptions/{id}/cancel", "cancelSubscription"),
    ("POST", "/v1/payout-schedules", "createPayoutSchedule"),
    ("PUT", "/v1/payout-schedules/{id}", "replacePayoutSchedule"),
    ("POST", "/v1/payout-schedules/{id}/pause", "pausePayoutSchedule"),
    ("DELETE", "/v1/payout-schedules/{id}", "retirePayoutSchedule"),
    ("PUT", "/v1/split-template", "replaceSplitTemplate"),
    ("POST", "/v1/x402/requirements", "createX402Requirements"),
    ("POST", "/v1/x402/settle", "settleX402Payment"),
    ("POST", "/v1/x402/{payment_id}/usage", "reportX402Usage"),
    ("GET", "/v1/statements", "getStatement"),
    ("POST", "/v1/test-helpers/payments/{id}/deposit", "testDepositPayment"),
    ("POST", "/v1/test-helpers/payments/{id}/expire", "testExpirePayment"),
)
TEST_HELPER_OPERATIONS = frozenset({"testDepositPayment", "testExpirePayment"})


def _compile(method: str, template: str, operation_id: str) -> Route:
    params = tuple(re.findall(r"\{([a-z_]+)\}", template))
    pattern = re.sub(r"\\\{([a-z_]+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
    return Route(method, template, operation_id, re.compile(pattern), params)


ROUTES: tuple[Route, ...] = tuple(_compile(*row) for row in ROUTE_TABLE)
ROUTES_BY_OPERATION: dict[str, Route] = {r.operation_id: r for r in ROUTES}


@dataclass(frozen=True)
class Match:
    route: Route
    path_params: dict[str, str]


class NoRoute(Exception):
    """No operation has this method and path. ``allowed`` lists the methods the path has."""

    def __init__(self, allowed: tuple[str, ...]) -> None:
        super().__init__("no route")
        self.allowed = allowed


def resolve(method: str, path: str) -> Match:
    allowed: list[str] = []
    for route in ROUTES:
        found = route.regex.fullmatch(path)
        if found is None:
            continue
        if route.method == method:
            return Match(route, found.groupdict())
        allowed.append(route.method)
    raise NoRoute(tuple(sorted(set(allowed))))


_HANDLERS: dict[str, Handler] = {}


def operation(operation_id: str) -> Callable[[Handler], Handler]:
    if operation_id not in ROUTES_BY_OPERATION:
        raise KeyError(f"unknown operation id {operation_id!r}")

    def register(handler: Handler) -> Handler:
        _HANDLERS[operation_id] = handler
        return handler

    return register


def handler_for(operation_id: str) -> Handler | None:
    return _HANDLERS.get(operation_id)


def registered_operations() -> frozenset[str]:
    return frozenset(_HANDLERS)
