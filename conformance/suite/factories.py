"""Valid requests and resources for every operation, built from the profile's fixtures.

``Factories.request(operation_id)`` returns a fresh, known-valid ``RequestSpec`` for any of the
20 operations: it creates what the operation needs first (a pending payment to cancel, an
underpaid one to accept through the profile's deposit test helper, a settled x402 ``upto``
payment to report usage on, a delivery to resend...). The other families vary one part of such
a request at a time (a header, the Idempotency-Key, one field) so that whatever the server
answers is caused by that part alone.

Values come from the profile (currencies, chains, withdraw addresses, split merchants, event
types, ranges) and the contract (method, path, enums), never from constants of the default
profile. x402 payloads are signed with a test wallet (EIP-712 ``TransferWithAuthorization``,
EIP-3009) whose key the suite derives from the profile's name.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final
from urllib.parse import quote

import httpx

from conformance.core.eip712 import TypedDataError, payment_payload
from conformance.core.openapi import find
from conformance.core.profile import Profile, WebhooksSection
from conformance.judge.outcomes import json_body
from conformance.judge.payment_rules import PaymentRules
from conformance.suite import shard_data
from conformance.suite.tool_errors import PrerequisiteError
from conformance.suite.wire.client import SuiteClient


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()
"""A value a request does not carry (no body, no such field)."""


# Resources made once per server and merchant: (base url, API key, what) -> id.
_SHARED: dict[tuple[str, str, str], str] = {}


@dataclass(frozen=True)
class RequestSpec:
    """One request, before signing: the parts a family may vary one at a time.

    ``business_fields`` lists body pointers (prefixes) whose values a profile business rule also
    governs (a fixture id, an amount scaled by a currency's decimals, a signed x402 payload): a
    value the contract accepts there may still be refused with a business-rule status.
    ``ready`` is False when the server cannot be expected to succeed (e.g. accept-underpaid on
    a profile without test helpers: no payment can be made underpaid).
    """

    operation_id: str
    method: str
    path_template: str
    path_params: dict[str, str] = field(default_factory=dict)
    query: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = ABSENT
    business_fields: tuple[tuple[str, ...], ...] = ()
    ready: bool = True
    note: str = ""

    @property
    def path(self) -> str:
        path = self.path_template
        for name, value in self.path_params.items():
            path = path.replace("{" + name + "}", quote(str(value), safe=""))
        return path

    @property
    def has_body(self) -> bool:
        return self.body is not ABSENT

    def governed_by_business_rule(self, location: str, pointer: tuple[str, ...]) -> bool:
        if location != "body":
            return False
        return any(pointer[: len(prefix)] == prefix for prefix in self.business_fields)


BPS_CONTRACT_MAX = 10000  # the contract's maximum of a share's bps (spec 8)
# What emits events least often in a run (``[webhooks.emits]`` keys): a payment left to expire
# (the payments family's one short-lived payment), a canceled subscription, an underpayment.
RARE_CAUSES = ("payment_expired", "cancelSubscription", "payment_underpaid")


def rare_event_types(webhooks: WebhooksSection) -> list[str]:
    """Two event types (so that a repeated item can be tried) the suite's traffic emits least:
    every endpoint made with them hears of those events for the rest of the run, at a loopback
    address nothing listens on, and the server retries each delivery. Those of the causes in
    ``RARE_CAUSES`` first, then from the end of the profile's list."""
    rare = [webhooks.emitted(cause) for cause in RARE_CAUSES]
    named = [t for t in rare if t and t in webhooks.event_types]
    return list(dict.fromkeys([*named, *reversed(webhooks.event_types)]))[:2]


def locate_operation(contract: Mapping[str, Any], operation_id: str) -> tuple[str, str]:
    """``(METHOD, path template)`` of an operation of the contract."""
    found = find(contract, operation_id)
    return found.method, found.path


def send(client: SuiteClient, spec: RequestSpec, **overrides: Any) -> httpx.Response:
    """Send ``spec`` through the client; ``overrides`` go to ``SuiteClient.request``."""
    kwargs: dict[str, Any] = {
        "params": dict(spec.query) or None,
        "headers": dict(spec.headers) or None,
        "operation_id": spec.operation_id,
    }
    if spec.has_body:
        kwargs["json"] = spec.body
    kwargs.update(overrides)
    return client.request(spec.method, spec.path, **kwargs)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _body(response: httpx.Response) -> Any:
    return json_body(response)


def _enum_values(contract: Mapping[str, Any], schema_name: str, prop: str) -> list[str]:
    schema = ((contract.get("components") or {}).get("schemas") or {}).get(schema_name) or {}
    values = ((schema.get("properties") or {}).get(prop) or {}).get("enum") or []
    return [v for v in values if isinstance(v, str)]


class Factories:
    """Valid requests and prerequisite resources for one client (one merchant)."""

    def __init__(self, client: SuiteClient, profile: Profile, contract: Mapping[str, Any]) -> None:
        self.client = client
        self.profile = profile
        self.contract = contract
        self.merchant_id = client.credential.merchant_id
        name = profile.name
        self._wallet_key = "0x" + hashlib.sha256(f"payment-conformance:{name}".encode()).hexdigest()
        other = f"payment-conformance:{name}:other wallet"
        self._other_wallet_key = "0x" + hashlib.sha256(other.encode()).hexdigest()

    # -- fixtures -----------------------------------------------------------------------------
    @property
    def currency(self) -> str:
        """The first profile currency deployed on a chain (quotes, subscriptions, schedules)."""
        for currency_id, currency in self.profile.currencies.items():
            if currency.chains:
                return currency_id
        raise PrerequisiteError("the profile's fixtures list no currency deployed on a chain")

    @property
    def chain(self) -> str:
        return self.profile.currencies[self.currency].chains[0]

    @property
    def decimals(self) -> int:
        return self.profile.currencies[self.currency].decimals

    @property
    def withdraw_address(self) -> str:
        addresses = self.profile.withdraw_addresses(self.merchant_id)
        if not addresses:
            raise PrerequisiteError(
                f"the profile's fixtures list no withdraw address for merchant {self.merchant_id}"
            )
        return addresses[0]

    @property
    def split_merchant(self) -> str:
        others = [m for m in self.profile.split_merchants if m != self.merchant_id]
        if not others:
            raise PrerequisiteError("the profile's fixtures list no merchant to split with")
        return others[0]

    @property
    def event_types(self) -> list[str]:
        return list(self.profile.webhooks.event_types)

    @property
    def rare_event_types(self) -> list[str]:
        return rare_event_types(self.profile.webhooks)

    @property
    def webhook_url(self) -> str:
        """A loopback url when the profile allows one (nothing leaves the machine)."""
        if self.profile.webhooks.loopback_http:
            return "http://127.0.0.1:9/conformance-hook"
        return "https://hooks.conformance.invalid/conformance-hook"

    def amount(self, units: int = 12, fraction: int = 5) -> str:
        """A decimal amount valid for the fixture currency, e.g. ``12.5`` (no more decimals
        than the currency has)."""
        return f"{units}.{fraction}" if len(str(fraction)) <= self.decimals else str(units)

    @staticmethod
    def unique(prefix: str) -> str:
        return f"{prefix}{shard_data.unique_hex(20)}"

    def _range_value(self, section: str, key: str, preferred: int) -> int:
        try:
            limits = self.profile.range(section, key)
        except KeyError:
            return preferred
        return max(limits.min, min(limits.max, preferred))

    def _split(self) -> list[dict[str, Any]]:
        return [{"type": "percentage", "merchant_id": self.split_merchant, "bps": 100}]

    def _spec(self, operation_id: str, **parts: Any) -> RequestSpec:
        method, template = locate_operation(self.contract, operation_id)
        return RequestSpec(operation_id, method, template, **parts)

    # -- bodies -------------------------------------------------------------------------------
    def payment_body(self, **overrides: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "quotes": {self.currency: {"amount": self.amount(), "chain_ids": [self.chain]}},
            "merchant_order_no": self.unique("order-"),
            "user_id": self.unique("user_"),
            "splits": self._split(),
            "expires_in_secs": self._range_value("payments", "expires_in_secs", 3600),
            "memo": "payment-conformance",
            "redirect_url": "https://shop.conformance.invalid/return",
        }
        body.update(overrides)
        return body

    def subscription_body(self) -> dict[str, Any]:
        return {
            "currency_id": self.currency,
            "chain_id": self.chain,
            "amount": self.amount(),
            "interval_secs": self._range_value("subscriptions", "interval_secs", 2592000),
            "splits": self._split(),
        }

    def payout_schedule_body(self) -> dict[str, Any]:
        modes = _enum_values(self.contract, "PayoutScheduleCreate", "mode") or ["auto_request"]
        return {
            "currency_id": self.currency,
            "target_chain_id": self.chain,
            "withdraw_address_id": self.withdraw_address,
            "interval_secs": 86400,
            "min_send_amount": self.amount(1, 5),
            "mode": modes[0],
            "first_run_at": _iso(datetime.now(UTC) + timedelta(days=1)),
        }

    def x402_requirements_body(self, scheme: str = "exact") -> dict[str, Any]:
        return {
            "scheme": scheme,
            "currency_id": self.currency,
            "chain_id": self.chain,
            "amount": self.amount(),
            "splits": self._split(),
            "resource": "https://api.conformance.invalid/paid/resource",
            "user_id": self.unique("user_"),
        }

    # -- sending and creating -----------------------------------------------------------------
    def send(self, spec: RequestSpec, **overrides: Any) -> httpx.Response:
        return send(self.client, spec, **overrides)

    def _succeed(self, spec: RequestSpec, what: str) -> Any:
        response = self.send(spec)
        expected = self.profile.success_status(spec.operation_id)
        if response.status_code != expected:
            raise PrerequisiteError(
                f"could not {what}: {spec.method} {spec.path} answered "
                f"{response.status_code} (expected {expected}): {response.text[:300]}"
            )
        return _body(response)

    def _id_of(self, body: Any, what: str, key: str = "id") -> str:
        if not isinstance(body, dict) or not isinstance(body.get(key), str):
            raise PrerequisiteError(f"could not {what}: the response has no string {key!r}")
        return str(body[key])

    def create_payment(self, **overrides: Any) -> dict[str, Any]:
        spec = self._spec("createPayment", body=self.payment_body(**overrides))
        body = self._succeed(spec, "create a payment")
        self._id_of(body, "create a payment")
        return dict(body)

    def create_subscription(self) -> str:
        spec = self._spec("createSubscription", body=self.subscription_body())
        return self._id_of(self._succeed(spec, "create a subscription"), "create a subscription")

    def create_payout_schedule(self) -> str:
        spec = self._spec("createPayoutSchedule", body=self.payout_schedule_body())
        what = "create a payout schedule"
        return self._id_of(self._succeed(spec, what), what)

    def _shared(self, what: str, listing: str, key: str) -> str | None:
        """The shared id of ``what`` if the server still lists it (a later server may listen
        on the same port)."""
        known = _SHARED.get((self.client.base_url, self.client.credential.api_key, what))
        if known is None:
            return None
        body = self._succeed(self._spec(listing), f"list {key}")
        items = body.get(key) if isinstance(body, dict) else None
        if isinstance(items, list) and any(
            isinstance(i, dict) and i.get("id") == known for i in items
        ):
            return known
        return None

    def _share(self, what: str, value: str) -> str:
        _SHARED[(self.client.base_url, self.client.credential.api_key, what)] = value
        return value

    def webhook_endpoint(self) -> str:
        """The run's endpoint of this merchant, subscribed to the event a new payment emits
        (to every profile event type when the profile names none).

        Made once per server and merchant (every later event creates a delivery to each
        endpoint subscribed to it, so endpoints are not made lightly)."""
        known = self._shared("endpoint", "listWebhookEndpoints", "endpoints")
        if known is not None:
            return known
        endpoint_id = self.unique("we_conformance_")
        created = self.profile.webhooks.emitted("createPayment")
        spec = self._spec(
            "putWebhookEndpoint",
            path_params={"id": endpoint_id},
            body={
                "url": self.webhook_url,
                "event_types": [created] if created else self.event_types,
            },
        )
        self._succeed(spec, "create a webhook endpoint")
        return self._share("endpoint", endpoint_id)

    def delivery_id(self) -> str:
        """A delivery of this merchant (the run's endpoint hears of a new payment)."""
        known = self._shared("delivery", "listWebhookDeliveries", "deliveries")
        if known is not None:
            return known
        self.webhook_endpoint()
        self.create_payment()
        deadline = time.monotonic() + 5.0
        while True:
            listing = self._succeed(self._spec("listWebhookDeliveries"), "list deliveries")
            deliveries = listing.get("deliveries") if isinstance(listing, dict) else None
            if deliveries:
                found = self._id_of(deliveries[0], "find a webhook delivery")
                return self._share("delivery", found)
            if time.monotonic() > deadline:
                raise PrerequisiteError(
                    "could not find a webhook delivery: none listed 5 s after creating a "
                    "payment with an endpoint subscribed to the event it emits"
                )
            time.sleep(0.1)

    def helper_call(self, name: str, payment_id: str, body: Any = None) -> RequestSpec:
        """The request of the profile's ``name`` test helper (``deposit``, ``expire``) on a
        payment, ``body`` (the default helper's shape) in the helper's own shape."""
        helper = self.profile.helper(name)
        if helper is None:
            raise PrerequisiteError(f"the profile has no {name} test helper")
        decimals = {k: c.decimals for k, c in self.profile.currencies.items()}
        sent = helper.request_body(payment_id, body, decimals)
        parts: dict[str, Any] = {"path_params": {"id": payment_id}}
        if sent is not None:
            parts["body"] = sent
        return RequestSpec(helper.operation_id, helper.method, helper.path, **parts)

    def test_helper(
        self, name: str, payment_id: str, body: Any = None, **overrides: Any
    ) -> httpx.Response:
        """Call the profile's ``name`` test helper (``deposit``, ``expire``) on a payment;
        ``overrides`` go to ``SuiteClient.request`` (``idempotency_key=None``: send none)."""
        spec = self.helper_call(name, payment_id, body)
        kwargs: dict[str, Any] = {"operation_id": spec.operation_id, **overrides}
        if spec.body is not ABSENT:
            kwargs["json"] = spec.body
        return self.client.request(spec.method, spec.path, **kwargs)

    def deposit(
        self, payment_id: str, currency_id: str, chain_id: str, amount: str, **overrides: Any
    ) -> httpx.Response:
        """Funds arrive for a payment through the profile's deposit test helper; the answer,
        whatever it is. ``overrides`` go to ``SuiteClient.request`` (``idempotency_key=...``)."""
        body = {"currency_id": currency_id, "chain_id": chain_id, "amount": amount}
        return self.test_helper(
            "deposit", payment_id, body, **{"idempotency_key": None, **overrides}
        )

    def underpaid_payment(self) -> dict[str, Any]:
        """A payment that received less than quoted, through the deposit test helper."""
        if self.profile.helper("deposit") is None:
            raise PrerequisiteError("the profile has no deposit test helper")
        payment = self.create_payment()
        self.deposit_short(payment["id"])
        return payment

    def deposit_short(self, payment_id: str) -> None:
        """Deposit less than the quote of ``payment_id`` (a payment of ``amount()``): it is
        underpaid now, or ``PrerequisiteError`` (HELP-001 is the payments family's to judge)."""
        response = self.deposit(payment_id, self.currency, self.chain, self.amount(1))
        if response.status_code >= 300:
            raise PrerequisiteError(
                f"could not make a payment underpaid: the deposit helper answered "
                f"{response.status_code}: {response.text[:300]}"
            )
        body = json_body(response)
        status = body.get("status") if isinstance(body, dict) else None
        underpaid = PaymentRules(self.profile).underpaid
        if isinstance(status, str) and underpaid is not None and status != underpaid:
            raise PrerequisiteError(
                f"could not make a payment underpaid: after a deposit short of its quote it "
                f"is {status[:64]!r}, not {underpaid!r}"
            )

    def x402_requirements(self, scheme: str = "exact") -> dict[str, Any]:
        spec = self._spec("createX402Requirements", body=self.x402_requirements_body(scheme))
        body = self._succeed(spec, f"create x402 {scheme} requirements")
        accepts = body.get("accepts") if isinstance(body, dict) else None
        if not accepts or not isinstance(accepts[0], dict):
            raise PrerequisiteError("could not create x402 requirements: no accepts entry")
        return dict(body)

    def settle_body(self, requirements: Mapping[str, Any]) -> dict[str, Any]:
        """A settle request paying the first ``accepts`` entry in full, signed by the wallet."""
        entry = dict(requirements["accepts"][0])
        return {
            "payment_id": requirements["payment_id"],
            "payment_payload": sign_payment(self._wallet_key, entry, now=int(time.time())),
            "payment_requirements": entry,
        }

    def signed_payload(
        self, entry: Mapping[str, Any], *, other_wallet: bool = False, **changes: Any
    ) -> dict[str, Any]:
        """A ``payment_payload`` answering ``entry`` signed by the suite's wallet (or, with
        ``other_wallet``, by a second one); ``changes`` (``value``, ``valid_after``,
        ``valid_before``, ``to``, ``nonce``) alter the authorization before signing."""
        key = self._other_wallet_key if other_wallet else self._wallet_key
        return sign_payment(key, entry, now=int(time.time()), **changes)

    def settled_x402(self, scheme: str = "upto") -> str:
        """The payment id of a settled x402 payment."""
        requirements = self.x402_requirements(scheme)
        spec = self._spec("settleX402Payment", body=self.settle_body(requirements))
        self._succeed(spec, f"settle an x402 {scheme} payment")
        return str(requirements["payment_id"])

    # -- one valid request per operation ------------------------------------------------------
    def request(self, operation_id: str) -> RequestSpec:
        """A fresh request a conformant server answers with success (unless ``ready`` is False)."""
        builder = getattr(self, f"_request_{operation_id}", None)
        if builder is None:
            raise KeyError(f"no factory for operation {operation_id!r}")
        spec: RequestSpec = builder()
        return spec

    def _request_listWebhookEndpoints(self) -> RequestSpec:
        return self._spec("listWebhookEndpoints")

    def _request_putWebhookEndpoint(self) -> RequestSpec:
        return self._spec(
            "putWebhookEndpoint",
            path_params={"id": self.unique("we_")},
            body={"url": self.webhook_url, "event_types": self.rare_event_types},
            business_fields=(("event_types",),),
        )

    def _request_rotateWebhookEndpointSecret(self) -> RequestSpec:
        return self._spec(
            "rotateWebhookEndpointSecret", path_params={"id": self.webhook_endpoint()}
        )

    def _request_listWebhookDeliveries(self) -> RequestSpec:
        return self._spec("listWebhookDeliveries")

    def _request_resendWebhookDelivery(self) -> RequestSpec:
        return self._spec("resendWebhookDelivery", path_params={"id": self.delivery_id()})

    def _request_createPayment(self) -> RequestSpec:
        return self._spec(
            "createPayment",
            body=self.payment_body(),
            business_fields=(
                ("quotes",),
                ("splits", "[]", "merchant_id"),
                *self._bps_fields("splits"),
            ),
        )

    def _request_listPayments(self) -> RequestSpec:
        limit = self._range_value("payments", "list_limit", 20)
        return self._spec("listPayments", query={"limit": limit})

    def _request_cancelPayment(self) -> RequestSpec:
        payment = self.create_payment()
        return self._spec("cancelPayment", path_params={"id": payment["id"]})

    def _request_acceptUnderpaidPayment(self) -> RequestSpec:
        if self.profile.helper("deposit") is None:
            payment = self.create_payment()
            return self._spec(
                "acceptUnderpaidPayment",
                path_params={"id": payment["id"]},
                ready=False,
                note="the profile has no test helpers: no payment can be made underpaid",
            )
        payment = self.underpaid_payment()
        return self._spec("acceptUnderpaidPayment", path_params={"id": payment["id"]})

    def _request_createSubscription(self) -> RequestSpec:
        return self._spec(
            "createSubscription",
            body=self.subscription_body(),
            business_fields=(
                ("currency_id",),
                ("chain_id",),
                ("amount",),
                ("splits", "[]", "merchant_id"),
                *self._bps_fields("splits"),
            ),
        )

    def _request_cancelSubscription(self) -> RequestSpec:
        return self._spec("cancelSubscription", path_params={"id": self.create_subscription()})

    def _bps_fields(self, key: str) -> tuple[tuple[str, ...], ...]:
        """A share's bps, where the profile's splits.max_total_bps is below the contract's
        10000: a share of the contract's maximum is then one the business rule refuses."""
        if self.profile.splits.max_total_bps >= BPS_CONTRACT_MAX:
            return ()
        return ((key, "[]", "bps"),)

    def _payout_fields(self) -> tuple[tuple[str, ...], ...]:
        return (
            ("currency_id",),
            ("target_chain_id",),
            ("withdraw_address_id",),
            ("min_send_amount",),
        )

    def _request_createPayoutSchedule(self) -> RequestSpec:
        return self._spec(
            "createPayoutSchedule",
            body=self.payout_schedule_body(),
            business_fields=self._payout_fields(),
        )

    def _request_replacePayoutSchedule(self) -> RequestSpec:
        return self._spec(
            "replacePayoutSchedule",
            path_params={"id": self.create_payout_schedule()},
            body=self.payout_schedule_body(),
            business_fields=self._payout_fields(),
        )

    def _request_pausePayoutSchedule(self) -> RequestSpec:
        return self._spec("pausePayoutSchedule", path_params={"id": self.create_payout_schedule()})

    def _request_retirePayoutSchedule(self) -> RequestSpec:
        return self._spec("retirePayoutSchedule", path_params={"id": self.create_payout_schedule()})

    def _request_replaceSplitTemplate(self) -> RequestSpec:
        return self._spec(
            "replaceSplitTemplate",
            body={"shares": [{"merchant_id": self.split_merchant, "bps": 100}]},
            business_fields=(("shares", "[]", "merchant_id"), *self._bps_fields("shares")),
        )

    def _request_createX402Requirements(self) -> RequestSpec:
        return self._spec(
            "createX402Requirements",
            body=self.x402_requirements_body(),
            business_fields=(
                ("currency_id",),
                ("chain_id",),
                ("amount",),
                ("splits", "[]", "merchant_id"),
                *self._bps_fields("splits"),
            ),
        )

    def _request_settleX402Payment(self) -> RequestSpec:
        # Every part of a settle request is bound by the issued requirements and the signature.
        return self._spec(
            "settleX402Payment",
            body=self.settle_body(self.x402_requirements()),
            business_fields=((),),
        )

    def _request_reportX402Usage(self) -> RequestSpec:
        return self._spec(
            "reportX402Usage",
            path_params={"payment_id": self.settled_x402("upto")},
            body={
                "actual_amount": self.amount(1, 25),
                "usage_id": self.unique("usage_"),
                "evidence": {"requests": 3, "source": "payment-conformance"},
            },
            business_fields=(("actual_amount",),),
        )

    def _request_getStatement(self) -> RequestSpec:
        now = datetime.now(UTC)
        return self._spec(
            "getStatement",
            query={
                "currency_id": self.currency,
                "from": _iso(now - timedelta(days=1)),
                "to": _iso(now + timedelta(hours=1)),
                "limit": self._range_value("statements", "limit", 100),
            },
        )

    # -- reading state ------------------------------------------------------------------------
    def payments_with_order_no(self, merchant_order_no: str) -> list[dict[str, Any]]:
        """The merchant's payments carrying ``merchant_order_no`` (through listPayments)."""
        spec = self._spec("listPayments", query={"merchant_order_no": merchant_order_no})
        body = self._succeed(spec, "list payments")
        payments = body.get("payments") if isinstance(body, dict) else None
        if not isinstance(payments, list):
            raise PrerequisiteError("could not list payments: the response has no payments array")
        return [p for p in payments if isinstance(p, dict)]

    def ledger_lines(self, payment_id: str) -> list[dict[str, Any]]:
        """Statement lines of the fixture currency over the last day that name ``payment_id``."""
        spec = self._request_getStatement()
        largest = self._range_value("statements", "limit", 10**9)
        spec = replace(spec, query={**spec.query, "limit": largest})
        found: list[dict[str, Any]] = []
        for _ in range(20):  # pages; a run's ledger stays far below 20 full pages
            body = self._succeed(spec, "read a statement")
            lines = body.get("lines") if isinstance(body, dict) else None
            if not isinstance(lines, list):
                raise PrerequisiteError("could not read a statement: the response has no lines")
            found += [
                ln for ln in lines if isinstance(ln, dict) and ln.get("payment_id") == payment_id
            ]
            cursor = body.get("next_cursor")
            if not isinstance(cursor, str) or not cursor:
                return found
            spec = replace(spec, query={**spec.query, "cursor": cursor})
        return found

    def request_elsewhere(self, spec: RequestSpec) -> RequestSpec:
        """A valid request of the same operation on another resource (another path)."""
        fresh = self.request(spec.operation_id)
        if fresh.path != spec.path or not spec.path_params:
            return fresh
        if spec.operation_id == "rotateWebhookEndpointSecret":
            endpoint_id = self.unique("we_conformance_")
            put = self._spec(
                "putWebhookEndpoint",
                path_params={"id": endpoint_id},
                body={"url": self.webhook_url, "event_types": self.rare_event_types[:1]},
            )
            self._succeed(put, "create a webhook endpoint")
            return replace(spec, path_params={"id": endpoint_id})
        if spec.operation_id == "resendWebhookDelivery":
            current = spec.path_params["id"]
            for _ in range(2):
                listing = self._succeed(self._spec("listWebhookDeliveries"), "list deliveries")
                for delivery in (listing or {}).get("deliveries", []):
                    if isinstance(delivery, dict) and delivery.get("id") not in (None, current):
                        return replace(spec, path_params={"id": str(delivery["id"])})
                self.create_payment()  # the session endpoint hears of it: one more delivery
        raise PrerequisiteError(f"could not find a second resource for {spec.operation_id}")

    def refused_variant(self, spec: RequestSpec) -> RequestSpec:
        """``spec`` changed so that the operation itself refuses it (unknown id: 404; unknown
        fixture: a business-rule error), with the same shape as the valid request."""
        unknown = self.unique("conformance_unknown_")
        if spec.operation_id == "putWebhookEndpoint" and isinstance(spec.body, dict):
            return replace(spec, body={**spec.body, "event_types": [f"{unknown}.event"]})
        if spec.path_params:
            name = next(iter(spec.path_params))
            return replace(spec, path_params={**spec.path_params, name: unknown})
        body = dict(spec.body) if isinstance(spec.body, dict) else {}
        if "payment_id" in body:
            body["payment_id"] = unknown
        elif "quotes" in body:
            body["quotes"] = {unknown: {"amount": self.amount()}}
        elif "withdraw_address_id" in body:
            body["withdraw_address_id"] = unknown
        elif "shares" in body:
            body["shares"] = [{"merchant_id": unknown, "bps": 100}]
        elif "currency_id" in body:
            body["currency_id"] = unknown
        else:
            raise PrerequisiteError(f"no refused variant is known for {spec.operation_id}")
        return replace(spec, body=body)


def sign_payment(
    private_key: str, requirement: Mapping[str, Any], *, now: int, **changes: Any
) -> dict[str, Any]:
    """An x402 ``payment_payload`` paying ``requirement`` in full (unless ``changes`` say
    otherwise), signed by the wallet (EIP-3009 over the domain in the entry's ``extra``)."""
    try:
        return payment_payload(private_key, requirement, now=now, **changes)
    except (TypedDataError, KeyError, ValueError) as exc:
        raise PrerequisiteError(
            f"could not sign an x402 payment for {requirement!r}: {exc}"
        ) from None
