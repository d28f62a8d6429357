"""Tenant isolation seen across recorded exchanges: one API key's ids used by another.

``TenantChecks`` learns which API key each id belongs to from the answers that key got (a
payment, subscription, payout schedule or x402 payment it created, a webhook endpoint it put,
the deliveries and payments its lists show) and judges a request of another API key naming
that id: it must be answered as for an unknown id (the profile's not-found status), never with
a success or a refusal for the resource's state, which shows the id was found (TEN-001,
TEN-002, TEN-003, TEN-005, TEN-006, HELP-009, as the isolation family names them). A list
answered to one key must not show ids another key created (TEN-004, TEN-005), nor a delivery
another merchant's list showed (delivery ids are the server's, one merchant's each).

Webhook endpoint ids are chosen by each merchant, so two merchants may both hold
``we_primary``; but an endpoint answered to one merchant with the ``created_at`` another
merchant's endpoint of that id showed is that other endpoint, overwritten or shown across
merchants (TEN-005). Deliveries and endpoints are judged so only between API keys the
profile's credentials assign to two merchants (two unknown keys may belong to one).

An id learnt from the answers of two keys (two merchants may each put a webhook endpoint of
the same id, and a recording need not show who created an id it only saw listed) belongs to
neither: it is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from conformance.core.profile import Profile
from conformance.core.results import Outcome
from conformance.judge import isolation as tenancy
from conformance.judge.tables import TABLE_LIMIT, BoundedTable, digest
from conformance.validator.checks import FAMILY, api_path
from conformance.validator.exchange import Exchange
from conformance.validator.tables import Finding, json_body, list_items, party

API_KEY_HEADER = "x-api-key"
FOREIGN_ID = f"{FAMILY}.foreign_id"
FOREIGN_LISTED = f"{FAMILY}.foreign_listed"

# Ids live in three namespaces: webhook endpoint ids are chosen by the client (per merchant),
# delivery ids and the other resources' ids by the server.
ENDPOINT, DELIVERY, OBJECT = "endpoint", "delivery", "object"


@dataclass(frozen=True)
class _Named:
    """Where a request names an id: its namespace, the path segment after ``/v1`` (None: the
    body's ``payment_id``), and the requirement a foreign id answered with success breaks
    (``judge.isolation``)."""

    kind: str
    segment: int | None
    requirement: str


# Where each operation names an id: its namespace and path segment.
_WHERE: dict[str, tuple[str, int | None]] = {
    "cancelPayment": (OBJECT, 2),
    "acceptUnderpaidPayment": (OBJECT, 2),
    "testDepositPayment": (OBJECT, 3),
    "testExpirePayment": (OBJECT, 3),
    "cancelSubscription": (OBJECT, 2),
    "replacePayoutSchedule": (OBJECT, 2),
    "pausePayoutSchedule": (OBJECT, 2),
    "retirePayoutSchedule": (OBJECT, 2),
    "rotateWebhookEndpointSecret": (ENDPOINT, 2),
    "resendWebhookDelivery": (DELIVERY, 2),
    "settleX402Payment": (OBJECT, None),
    "reportX402Usage": (OBJECT, 2),
}
NAMED = {op: _Named(*where, tenancy.FOREIGN_ID[op]) for op, where in _WHERE.items()}
# The answers that create an id for the calling key: the namespace and the member holding it.
CREATED = {
    "createPayment": (OBJECT, "id"),
    "createSubscription": (OBJECT, "id"),
    "createPayoutSchedule": (OBJECT, "id"),
    "createX402Requirements": (OBJECT, "payment_id"),
    "putWebhookEndpoint": (ENDPOINT, "id"),
}
# Lists: the namespace of their items' ids, and the requirement broken when one shows an id
# another key created (None: endpoint ids are per merchant, another's may be the same).
LISTED = {
    "listPayments": (OBJECT, tenancy.FOREIGN_LISTED["listPayments"]),
    "listWebhookDeliveries": (DELIVERY, tenancy.FOREIGN_LISTED["listWebhookDeliveries"]),
    "listWebhookEndpoints": (ENDPOINT, None),
}
ENDPOINT_ANSWERS = frozenset({"putWebhookEndpoint", "listWebhookEndpoints"})
FOREIGN_ENDPOINT = f"{FAMILY}.foreign_endpoint"
_SHARED = b""  # the owner of an id two keys' answers showed: nobody's


@dataclass(frozen=True, slots=True)
class _Owner:
    api_key: bytes  # digest of the key (or of its merchant); _SHARED when two saw the id
    created: bool  # learnt from the answer that created it (not from a list)
    source: str


class TenantChecks:
    """Which API key each id belongs to, and the requests of other keys that name it."""

    READS_BODY = frozenset({*CREATED, *LISTED})  # the operations whose answers it reads

    def __init__(self, profile: Profile, *, limit: int = TABLE_LIMIT) -> None:
        self._not_found_answer = profile.error("status", "not_found")
        self._not_found = self._not_found_answer.status
        # Answers that say nothing of the id: an authentication refusal, a validation error (the
        # request may break the contract too), a body too large, a rate limit, a method or
        # media type refused. Any other refusal (for the resource's state, a 403) shows the id
        # was found, so it was not treated as unknown.
        self._unrelated = frozenset(
            {
                *profile.auth.statuses,
                profile.error("status", "validation").status,
                profile.status.payload_too_large.status,
                profile.status.method_not_allowed.status,
                429,
                *(spec.status for spec in profile.status.unsupported_media_type),
            }
        )
        # Keys of one merchant share its ids: the profile's credentials say whose key is whose.
        self._merchant = {c.api_key: c.merchant_id for c in profile.credentials}
        self._known = frozenset(party("merchant", m) for m in self._merchant.values())
        self._owners: BoundedTable[bytes, _Owner] = BoundedTable(limit)
        # an endpoint as (id, created_at): the merchant it was first answered to
        self._endpoints: BoundedTable[bytes, tuple[bytes, str]] = BoundedTable(limit)
        self._endpoint_ids: BoundedTable[bytes, bytes] = BoundedTable(limit)  # first holder
        self._creators: BoundedTable[bytes, bool] = BoundedTable(limit)  # keys that created

    def observe(
        self, exchange: Exchange, operation_id: str, headers: dict[str, str], body: Any
    ) -> Iterator[Finding]:
        """Judge the exchange's use of ids, then learn the ids its answer shows."""
        named = NAMED.get(operation_id)
        created = CREATED.get(operation_id)
        listed = LISTED.get(operation_id)
        api_key = headers.get(API_KEY_HEADER)
        if not api_key or (named is None and created is None and listed is None):
            return
        status = exchange.status or 0
        merchant = self._merchant.get(api_key)
        key = party("merchant", merchant) if merchant is not None else party("key", api_key)
        success = 200 <= status < 300
        judged = success or (400 <= status < 500 and status not in self._unrelated)
        if named is not None and judged:
            yield from self._named(exchange, named, key, self._wrong_code(exchange, status, body))
        if not success or not isinstance(body, dict):
            return
        if operation_id in ENDPOINT_ANSWERS and key in self._known:
            yield from self._endpoint(exchange, operation_id, key, body)
        if created is not None:
            kind, member = created
            if isinstance(body.get(member), str):
                slot = digest(kind, body[member])
                self._learn(slot, self._owners.get(slot), key, exchange.source, created=True)
        if listed is not None:
            yield from self._listed(exchange, operation_id, listed, key, body)

    def _wrong_code(self, exchange: Exchange, status: int, body: Any) -> str | None:
        """Why the answer is not the profile's answer to an unknown id (its not-found status
        and code: TEN-001 to TEN-006 name both); None when it is."""
        if status != self._not_found:
            return f"was found for this key ({status}), not answered as an unknown id"
        if self._not_found_answer.code is None:
            return None
        if body is None and not exchange.response_body_missing:
            body = json_body(exchange.response_body)  # an error body: small, read for this
        code = body.get("code") if isinstance(body, dict) else None
        if body is None or self._not_found_answer.matches(status, code):
            return None  # the body was not recorded: the status is all there is to judge
        return f"was answered {status} with code {code!r}, not {self._not_found_answer.code!r}"

    def _named(
        self, exchange: Exchange, named: _Named, key: bytes, problem: str | None
    ) -> Iterator[Finding]:
        ident = _named_id(exchange, named)
        if ident is None:
            return
        owner = self._owners.get(digest(named.kind, ident))
        if owner is None or owner.api_key in (key, _SHARED):
            return
        how = "created by" if owner.created else "shown to"
        yield (
            FOREIGN_ID,
            (named.requirement,),
            Outcome.FAILED if problem else Outcome.PASSED,
            f"{ident}, {how} another API key in {owner.source or 'an earlier exchange'}, "
            + (problem or f"answered {exchange.status} as an unknown id"),
        )

    def _listed(
        self,
        exchange: Exchange,
        operation_id: str,
        listed: tuple[str, str | None],
        key: bytes,
        body: dict[str, Any],
    ) -> Iterator[Finding]:
        kind, requirement = listed
        foreign: list[tuple[str, _Owner]] = []
        for ident in _item_ids(body):
            slot = digest(kind, ident)
            owner = self._owners.get(slot)
            if owner is not None and self._foreign(kind, owner, key):
                foreign.append((ident, owner))
            else:
                self._learn(slot, owner, key, exchange.source, created=False)
        if requirement is None:
            return
        if foreign:
            ident, owner = foreign[0]
            yield (
                FOREIGN_LISTED,
                (requirement,),
                Outcome.FAILED,
                f"{operation_id} shows {len(foreign)} id(s) of another API key, first "
                f"{ident} ({'created' if owner.created else 'shown'} in "
                f"{owner.source or 'an earlier exchange'})",
            )
        elif len(self._creators) > 1 or (len(self._creators) == 1 and not self._creators.get(key)):
            yield (
                FOREIGN_LISTED,
                (requirement,),
                Outcome.PASSED,
                f"{operation_id} shows no id another API key created",
            )

    def _foreign(self, kind: str, owner: _Owner, key: bytes) -> bool:
        """Whether a listed id is another key's: created by it, or, for a delivery, shown
        first to another merchant's key (a delivery is one merchant's, however learnt)."""
        if owner.api_key in (key, _SHARED):
            return False
        return owner.created or (
            kind == DELIVERY and key in self._known and owner.api_key in self._known
        )

    def _endpoint(
        self, exchange: Exchange, operation_id: str, key: bytes, body: dict[str, Any]
    ) -> Iterator[Finding]:
        """TEN-005: an endpoint answered with the id and ``created_at`` of an endpoint another
        merchant was answered first is that merchant's endpoint."""
        items = [body] if operation_id == "putWebhookEndpoint" else list(list_items(body))
        for item in items:
            ident, created_at = item.get("id"), item.get("created_at")
            if not isinstance(ident, str) or not isinstance(created_at, str):
                continue
            slot = digest(ENDPOINT, ident, created_at)
            first = self._endpoints.get(slot)
            if first is None:
                self._endpoints.put(slot, (key, exchange.source))
                holder = self._endpoint_ids.get(digest(ENDPOINT, ident))
                if holder is None:
                    self._endpoint_ids.put(digest(ENDPOINT, ident), key)
                elif holder != key and operation_id == "putWebhookEndpoint":
                    yield (
                        FOREIGN_ENDPOINT,
                        ("TEN-005",),
                        Outcome.PASSED,
                        f"endpoint {ident}, an id another merchant holds: its own endpoint",
                    )
            elif first[0] != key:
                where = first[1] or "an earlier exchange"
                yield (
                    FOREIGN_ENDPOINT,
                    ("TEN-005",),
                    Outcome.FAILED,
                    f"{operation_id} answered endpoint {ident} created at {created_at}: the "
                    f"endpoint another merchant was answered in {where}",
                )
                return

    def _learn(
        self, slot: bytes, owner: _Owner | None, key: bytes, source: str, *, created: bool
    ) -> None:
        """Record that ``key``'s answer showed the id of ``slot`` (its owner so far: ``owner``)."""
        if created:
            self._creators.put(key, True)
        if owner is None or (owner.api_key == key and created and not owner.created):
            self._owners.put(slot, _Owner(key, created, source))
        elif owner.api_key not in (key, _SHARED):
            self._owners.put(slot, _Owner(_SHARED, False, source))


@lru_cache(maxsize=1024)
def _named_id(exchange: Exchange, named: _Named) -> str | None:
    if named.segment is None:
        body = json_body(exchange.request_body)
        value = body.get("payment_id") if isinstance(body, dict) else None
        return value if isinstance(value, str) else None
    path = api_path(exchange.path)
    parts = path.strip("/").split("/") if path is not None else []
    return unquote(parts[named.segment]) if len(parts) > named.segment else None


def _item_ids(body: dict[str, Any]) -> Iterator[str]:
    """The ids of the items of a list answer."""
    for item in list_items(body):
        if isinstance(item.get("id"), str):
            yield item["id"]
