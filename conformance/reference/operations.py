"""The operation registry: routes of the 20 operations and the test helpers, and their handlers.

A handler is a plain function of a ``RequestContext`` returning a ``Reply``; it registers
itself with ``@operation("createPayment")``. The framework (``app.py``) has already checked
authentication, the Idempotency-Key and the contract before a handler runs, and runs it inside
one database transaction.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from conformance.core.contract import operations as contract_operations
from conformance.core.test_helpers import HelperRoute

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
        return self.operation_id in TEST_HELPER_OPERATIONS


# The 20 operations come from the OpenAPI document; the test helpers are the profile's extra.
TEST_HELPER_ROUTES: tuple[tuple[str, str, str], ...] = (
    ("POST", "/v1/test-helpers/payments/{id}/deposit", "testDepositPayment"),
    ("POST", "/v1/test-helpers/payments/{id}/expire", "testExpirePayment"),
)
ROUTE_TABLE: tuple[tuple[str, str, str], ...] = (
    *((op.method, op.path, op.operation_id) for op in contract_operations()),
    *TEST_HELPER_ROUTES,
)
TEST_HELPER_OPERATIONS = frozenset(operation_id for _, _, operation_id in TEST_HELPER_ROUTES)


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


def routes_for(helpers: Mapping[str, HelperRoute]) -> tuple[Route, ...]:
    """The 20 operations and the test helpers a profile gives the server, where it maps them
    (``Profile.helpers``); an absent helper is not served."""
    contract = tuple(r for r in ROUTES if not r.is_test_helper)
    return (*contract, *(_compile(h.method, h.path, h.operation_id) for h in helpers.values()))


def resolve(method: str, path: str, routes: tuple[Route, ...] = ROUTES) -> Match:
    allowed: list[str] = []
    for route in routes:
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
