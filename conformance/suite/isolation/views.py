"""Reading as one merchant: lists and statements, and what in them belongs to someone else.

A read that does not succeed is reported as a ``Read`` with a problem instead of items, so
that the check relying on it fails with what the server answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import httpx

from conformance.judge.outcomes import summary
from conformance.suite.factories import Factories, RequestSpec
from conformance.suite.isolation import requests
from conformance.suite.stateful import body_of

STATEMENT_PAGES = 50  # a run's ledger for one merchant and day stays far below 50 full pages


@dataclass
class Read:
    items: list[dict[str, Any]] = field(default_factory=list)
    problem: str | None = None
    body: dict[str, Any] = field(default_factory=dict)  # the (first) page

    @property
    def ok(self) -> bool:
        return self.problem is None

    def ids(self) -> list[str]:
        return [str(item.get("id")) for item in self.items]

    def find(self, ident: str, key: str = "id") -> list[dict[str, Any]]:
        return [item for item in self.items if item.get(key) == ident]


def read(factories: Factories, spec: RequestSpec, key: str) -> Read:
    """``spec`` sent as ``factories``' merchant; the array ``key`` of its success response."""
    response = factories.send(spec)
    return _items(factories, spec, response, key)


def _items(factories: Factories, spec: RequestSpec, response: httpx.Response, key: str) -> Read:
    what = f"{spec.method} {spec.path} as {factories.merchant_id}"
    expected = factories.profile.success_status(spec.operation_id)
    if response.status_code != expected:
        return Read(problem=f"{what}: expected {expected}, got {summary(response)}")
    body = body_of(response)
    items = body.get(key)
    if not isinstance(items, list):
        return Read(problem=f"{what}: the response has no {key} array", body=body)
    return Read([i for i in items if isinstance(i, dict)], body=body)


def payments(factories: Factories, **query: Any) -> Read:
    return read(factories, requests.list_payments(factories, **query), "payments")


def endpoints(factories: Factories) -> Read:
    return read(factories, requests.spec(factories, "listWebhookEndpoints"), "endpoints")


def deliveries(factories: Factories) -> Read:
    return read(factories, requests.spec(factories, "listWebhookDeliveries"), "deliveries")


def statement(factories: Factories) -> Read:
    """Every line of the fixture currency's statement over the last day (all pages)."""
    spec = requests.statement(factories)
    first: Read | None = None
    lines: list[dict[str, Any]] = []
    for _ in range(STATEMENT_PAGES):
        page = read(factories, spec, "lines")
        if not page.ok:
            return page
        first = first or page
        lines += page.items
        cursor = page.body.get("next_cursor")
        if not isinstance(cursor, str) or not cursor:
            break
        spec = replace(spec, query={**spec.query, "cursor": cursor})
    return Read(lines, body=first.body if first else {})


def delivery_key(delivery: dict[str, Any]) -> tuple[Any, ...]:
    """What makes a delivery the same one in two lists (ids alone may be per merchant)."""
    return (delivery.get("id"), delivery.get("event_type"), delivery.get("created_at"))


def foreign_statement_lines(lines: list[dict[str, Any]], payment_ids: set[str]) -> list[str]:
    """Lines naming one of ``payment_ids`` that are not split income of the reader."""
    return [
        str(line.get("ledger_entry_id"))
        for line in lines
        if line.get("payment_id") in payment_ids
        and line.get("is_split_recipient_income") is not True
    ]
