"""A scripted merchant integration, recorded as HAR 1.2: traffic the suite's checks did not write.

``record_session(base_url, profile, seed)`` drives a Payment Service the way an integrating
merchant's back office would, with plain httpx and the profile's signing scheme, and returns
the session as a HAR log written by this module (not by ``run --record``): payments created,
listed (by status, order number, one page at a time), paid through the deposit helper (in full,
short then accepted, too much), expired and canceled; subscriptions; a payout schedule created,
replaced, paused, resumed and retired; the split template; webhook endpoints (put, list, rotate
the secret, list and resend deliveries); x402 ``exact`` and ``upto`` settlements signed by an
EIP-712 test wallet, with usage reports; statements page by page. The second merchant of the
profile does the same on its own resources and then, by a misconfiguration, uses the first
one's ids. And the mistakes real clients make: a bad amount, a wrong signature, a stale clock,
no credentials, a missing or reused Idempotency-Key, an HTTP retry with the same nonce, a
corrected request under the key of a refused one, a body cut short or not UTF-8, an unknown
path, limits and payloads a buggy wallet or form sends.

Shops number their orders 1, 2, 3... and derive the Idempotency-Key of a checkout from the order
number, so both merchants use the same numbers and keys, as unrelated shops do. The requests
are sequential (no two exchanges overlap) and each step reads what earlier answers gave, as an
integration does; an answer the client cannot use skips the steps that need it.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from conformance import __version__
from conformance.core.eip712 import TypedDataError, payment_payload
from conformance.core.profile import Profile
from conformance.core.signing import DEFAULT_STRING_TO_SIGN, Signer

TIMEOUT_S = 10.0
CREATOR = "payment-conformance merchant-client"


def _iso_ms(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class HarLog:
    """The entries of one HAR 1.2 log, in the order the requests were sent."""

    entries: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self,
        request: httpx.Request,
        response: httpx.Response | None,
        started: datetime,
        elapsed_ms: float,
    ) -> None:
        self.entries.append(_entry(request, response, started, elapsed_ms))

    def document(self) -> dict[str, Any]:
        return {
            "log": {
                "version": "1.2",
                "creator": {"name": CREATOR, "version": __version__},
                "pages": [],
                "entries": self.entries,
            }
        }

    def write(self, path: Path) -> None:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(self.document(), out, indent=1)


def _headers(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in pairs]


def _text(body: bytes) -> dict[str, str]:
    """A body as HAR text: as is when it is UTF-8, else base64 (as browsers write binary)."""
    try:
        return {"text": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"text": base64.b64encode(body).decode("ascii"), "encoding": "base64"}


def _entry(
    request: httpx.Request, response: httpx.Response | None, started: datetime, elapsed_ms: float
) -> dict[str, Any]:
    body = request.content
    har_request: dict[str, Any] = {
        "method": request.method,
        "url": str(request.url),
        "httpVersion": "HTTP/1.1",
        "headers": _headers(request.headers.multi_items()),
        "queryString": [{"name": k, "value": v} for k, v in request.url.params.multi_items()],
        "cookies": [],
        "headersSize": -1,
        "bodySize": len(body),
    }
    if body:
        har_request["postData"] = {"mimeType": request.headers.get("content-type", ""),
                                   **_text(body)}  # fmt: skip
    har_response: dict[str, Any] = {
        "status": 0,
        "statusText": "",
        "httpVersion": "HTTP/1.1",
        "headers": [],
        "cookies": [],
        "content": {"size": 0, "mimeType": ""},
        "redirectURL": "",
        "headersSize": -1,
        "bodySize": -1,
    }
    if response is not None:
        content = response.content
        har_response.update(
            status=response.status_code,
            statusText=response.reason_phrase,
            headers=_headers(response.headers.multi_items()),
            content={
                "size": len(content),
                "mimeType": response.headers.get("content-type", ""),
                **_text(content),
            },
            bodySize=len(content),
        )
    return {
        "startedDateTime": _iso_ms(started),
        "time": round(elapsed_ms, 3),
        "request": har_request,
        "response": har_response,
        "cache": {},
        "timings": {"send": 0, "wait": round(elapsed_ms, 3), "receive": 0},
        "_client": "merchant-client",
    }


class Merchant:
    """One merchant's API client: signs every request with its credential and records it."""

    def __init__(
        self, http: httpx.Client, har: HarLog, signer: Signer, merchant_id: str, rng: random.Random
    ) -> None:
        self.http = http
        self.har = har
        self.signer = signer
        self.merchant_id = merchant_id
        self.rng = rng
        self.orders = 0
        self._last: httpx.Request | None = None

    def key(self) -> str:
        return f"idem-{self.rng.getrandbits(64):016x}"

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, Any] | None = None,
        idempotency_key: str | None = "new",
        raw: bytes | None = None,
        tamper: bool = False,
        timestamp: int | None = None,
        signed: bool = True,
        resend: bool = False,
    ) -> dict[str, Any]:
        """Send one signed request; the answer's JSON object (``{}`` when there is none).

        ``idempotency_key="new"`` sends a fresh key on POST, PUT and DELETE, ``None`` none.
        ``tamper`` sends a signature that does not match, ``timestamp`` overrides the clock,
        ``signed=False`` sends no credentials; ``resend`` sends the previous request again
        byte for byte, headers and nonce included (what an HTTP library's retry does)."""
        if resend and self._last is not None:
            last = self._last
            request = httpx.Request(
                last.method, last.url, headers=last.headers, content=last.content
            )
            return self._send(request)
        content = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        headers: dict[str, str] = {"Accept": "application/json"}
        if content:
            headers["Content-Type"] = "application/json"
        if idempotency_key == "new":
            idempotency_key = self.key() if method in ("POST", "PUT", "DELETE") else None
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        request = self.http.build_request(method, path, params=params, content=content)
        if signed:
            target = request.url.raw_path.decode("ascii")
            nonce = f"n{self.rng.getrandbits(128):032x}"
            auth = self.signer.headers(method, target, content, timestamp=timestamp, nonce=nonce)
            if tamper:
                auth["X-Signature"] = hashlib.sha256(auth["X-Signature"].encode()).hexdigest()
            headers.update(auth)
        request.headers.update(headers)
        return self._send(request)

    def _send(self, request: httpx.Request) -> dict[str, Any]:
        self._last = request
        started = datetime.now(UTC)
        clock = time.perf_counter()
        response: httpx.Response | None = None
        with contextlib.suppress(httpx.HTTPError):  # recorded as no response
            response = self.http.send(request)
        self.har.add(request, response, started, (time.perf_counter() - clock) * 1000)
        if response is None:
            return {}
        try:
            answer = response.json()
        except ValueError:
            return {}
        return answer if isinstance(answer, dict) else {}


def _first(body: Mapping[str, Any], key: str) -> dict[str, Any]:
    items = body.get(key)
    if isinstance(items, list) and items and isinstance(items[0], dict):
        return dict(items[0])
    return {}


def _id(body: Mapping[str, Any], key: str = "id") -> str | None:
    value = body.get(key)
    return value if isinstance(value, str) and value else None


def _p(value: str) -> str:
    return quote(value, safe="")


class Session:
    """The scripted flows of one recorded session (``run`` sends them in order)."""

    def __init__(self, profile: Profile, alpha: Merchant, beta: Merchant) -> None:
        self.profile = profile
        self.alpha = alpha
        self.beta = beta
        self.currency = next(c for c, v in profile.currencies.items() if v.chains)
        self.chain = profile.currencies[self.currency].chains[0]
        splits = [m for m in profile.split_merchants if m not in (alpha.merchant_id,)]
        self.partner = splits[0] if splits else ""
        name = profile.name
        self.wallet = "0x" + hashlib.sha256(f"merchant-client:{name}".encode()).hexdigest()

    # -- bodies -----------------------------------------------------------------------------
    def order(self, who: Merchant) -> str:
        """The shop's next order number: a plain sequence (both merchants start at 1)."""
        who.orders += 1
        return f"order-{who.orders}"

    def payment(self, who: Merchant, amount: str = "25.5", **extra: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "quotes": {self.currency: {"amount": amount, "chain_ids": [self.chain]}},
            "merchant_order_no": self.order(who),
            "user_id": f"customer-{who.rng.getrandbits(32):08x}",
            "expires_in_secs": 900,  # a quarter of an hour to pay, as checkouts give
        }
        if self.partner:
            body["splits"] = [{"type": "percentage", "merchant_id": self.partner, "bps": 250}]
        body.update(extra)
        return body

    def schedule(self, who: Merchant, interval: int = 86400) -> dict[str, Any]:
        addresses = self.profile.withdraw_addresses(who.merchant_id)
        return {
            "currency_id": self.currency,
            "target_chain_id": self.chain,
            "withdraw_address_id": addresses[0] if addresses else "",
            "interval_secs": interval,
            "min_send_amount": "50.5",
            "mode": "auto_request",
            "first_run_at": _iso(datetime.now(UTC) + timedelta(days=2)),
        }

    def requirements(self, who: Merchant, scheme: str) -> dict[str, Any]:
        return {
            "scheme": scheme,
            "currency_id": self.currency,
            "chain_id": self.chain,
            "amount": "3.75",
            "resource": "https://api.shop.example/reports/monthly",
            "user_id": f"customer-{who.rng.getrandbits(32):08x}",
        }

    def usage(self, who: Merchant, amount: str) -> dict[str, Any]:
        return {
            "actual_amount": amount,
            "usage_id": f"usage-{who.rng.getrandbits(32):08x}",
            "evidence": {"api_calls": 42, "period": "2026-11"},
        }

    def settle(self, requirements: Mapping[str, Any], **changes: Any) -> dict[str, Any] | None:
        entry = _first(requirements, "accepts")
        if not entry or not _id(requirements, "payment_id"):
            return None
        try:
            signed = payment_payload(self.wallet, entry, now=int(time.time()), **changes)
        except (TypedDataError, KeyError, ValueError):
            return None
        return {
            "payment_id": requirements["payment_id"],
            "payment_payload": signed,
            "payment_requirements": entry,
        }

    # -- the flows --------------------------------------------------------------------------
    def run(self) -> None:
        alpha, beta = self.alpha, self.beta
        ids = self.payments(alpha)
        subscription = self.subscriptions(alpha)
        schedule = self.payout_schedule(alpha)
        self.split_template(alpha)
        endpoint, delivery = self.webhooks(alpha)
        settled = self.x402(alpha)
        self.statements(alpha)
        self.mistakes(alpha)
        self.payments(beta)
        self.webhooks(beta)
        self.statements(beta)
        self.wrong_merchant(beta, ids, subscription, schedule, endpoint, delivery, settled)

    def create_payment(self, who: Merchant, amount: str, **extra: Any) -> dict[str, Any]:
        """A checkout: the Idempotency-Key is derived from the order number, as shops do."""
        body = self.payment(who, amount, **extra)
        key = f"create-{body['merchant_order_no']}"
        return who.call("POST", "/v1/payments", body, idempotency_key=key)

    def payments(self, who: Merchant) -> list[str]:
        """Checkout: create, list, pay through the deposit helper, cancel, expire."""
        created: list[dict[str, Any]] = []
        for amount in ("25.5", "10", "7.25", "12", "30"):
            payment = self.create_payment(who, amount)
            if _id(payment):
                created.append(payment)
        ids = [str(p["id"]) for p in created]
        who.call("GET", "/v1/payments", params={"limit": 2})
        page = who.call("GET", "/v1/payments", params={"limit": 1})
        cursor = _id(page, "next_cursor")
        if cursor:
            who.call("GET", "/v1/payments", params={"limit": 1, "cursor": cursor})
        if created:
            number = str(created[0].get("merchant_order_no", ""))
            who.call("GET", "/v1/payments", params={"merchant_order_no": number})
        if len(ids) >= 5:
            if self.profile.test_helpers:
                deposit = {"currency_id": self.currency, "chain_id": self.chain}
                path = "/v1/test-helpers/payments/{}/deposit"
                key = who.key()
                who.call(
                    "POST",
                    path.format(_p(ids[0])),
                    {**deposit, "amount": "25.5"},
                    idempotency_key=key,
                )
                who.call(
                    "POST",
                    path.format(_p(ids[0])),
                    {**deposit, "amount": "25.5"},
                    idempotency_key=key,
                )  # a retried webhook handler
                who.call("POST", path.format(_p(ids[1])), {**deposit, "amount": "4"})
                who.call("POST", f"/v1/payments/{_p(ids[1])}/accept-underpaid")
                who.call("POST", f"/v1/test-helpers/payments/{_p(ids[2])}/expire")
                who.call("POST", f"/v1/payments/{_p(ids[2])}/cancel")  # too late: expired
                who.call("POST", f"/v1/test-helpers/payments/{_p(ids[0])}/expire")  # settled
                who.call("POST", path.format(_p(ids[4])), {**deposit, "amount": "31"})  # more
            who.call("POST", f"/v1/payments/{_p(ids[3])}/accept-underpaid")  # still pending
            who.call("POST", f"/v1/payments/{_p(ids[3])}/cancel")
            who.call("POST", f"/v1/payments/{_p(ids[3])}/cancel")  # a double click
        self.second_currency(who)
        for status in ("settled", "pending", "canceled"):
            who.call("GET", "/v1/payments", params={"status": status, "limit": 5})
        who.call("GET", "/v1/payments")
        return ids

    def second_currency(self, who: Merchant) -> None:
        """A checkout in a currency with other decimals (ether next to USDC), paid in full."""
        main = self.profile.currencies[self.currency].decimals
        other = next(
            (c for c, v in self.profile.currencies.items() if v.chains and v.decimals != main),
            None,
        )
        if other is None or not self.profile.test_helpers:
            return
        chain = self.profile.currencies[other].chains[0]
        quote = {other: {"amount": "0.05", "chain_ids": [chain]}}
        payment = self.create_payment(who, "0.05", quotes=quote)
        if _id(payment):
            deposit = {"currency_id": other, "chain_id": chain, "amount": "0.05"}
            who.call("POST", f"/v1/test-helpers/payments/{_p(str(payment['id']))}/deposit", deposit)

    def subscriptions(self, who: Merchant) -> str | None:
        body: dict[str, Any] = {
            "currency_id": self.currency,
            "chain_id": self.chain,
            "amount": "9.99",
            "interval_secs": 2592000,
        }
        if self.partner:
            body["splits"] = [{"type": "percentage", "merchant_id": self.partner, "bps": 500}]
        subscription = who.call("POST", "/v1/subscriptions", body)
        who.call("POST", "/v1/subscriptions", {**body, "interval_secs": 604800.0})
        other = self._undeployed()
        if other is not None:
            who.call(
                "POST", "/v1/subscriptions", {**body, "currency_id": other[0], "chain_id": other[1]}
            )
        sid = _id(subscription)
        if sid:
            who.call("POST", f"/v1/subscriptions/{_p(sid)}/cancel")
            who.call("POST", f"/v1/subscriptions/{_p(sid)}/cancel")  # already canceled
        return _id(who.call("POST", "/v1/subscriptions", body))

    def _undeployed(self) -> tuple[str, str] | None:
        """A known currency and a known chain it is not deployed on (a wrong pairing)."""
        chains = {c for v in self.profile.currencies.values() for c in v.chains}
        for currency_id, currency in self.profile.currencies.items():
            missing = sorted(chains - set(currency.chains))
            if missing:
                return currency_id, missing[0]
        return None

    def payout_schedule(self, who: Merchant) -> str | None:
        """Create, change the interval, pause, resume (a replace), then retire another one."""
        schedule = who.call("POST", "/v1/payout-schedules", self.schedule(who))
        sid = _id(schedule)
        past = {**self.schedule(who), "first_run_at": _iso(datetime.now(UTC) - timedelta(days=1))}
        who.call("POST", "/v1/payout-schedules", past)  # a clock gone wrong
        if sid is None:
            return None
        path = f"/v1/payout-schedules/{_p(sid)}"
        who.call("PUT", path, self.schedule(who, interval=604800))
        who.call("POST", f"{path}/pause")
        who.call("POST", f"{path}/pause")  # paused already
        who.call("PUT", path, self.schedule(who, interval=604800))  # resumes
        other = _id(who.call("POST", "/v1/payout-schedules", self.schedule(who, 3600)))
        if other:
            who.call("DELETE", f"/v1/payout-schedules/{_p(other)}")
            who.call("DELETE", f"/v1/payout-schedules/{_p(other)}")  # retired already
            who.call("POST", f"/v1/payout-schedules/{_p(other)}/pause")  # retired: refused
        return sid

    def split_template(self, who: Merchant) -> None:
        merchants = [m for m in self.profile.split_merchants if m != who.merchant_id]
        shares = [{"merchant_id": m, "bps": 1000 - 250 * n} for n, m in enumerate(merchants[:2])]
        who.call("PUT", "/v1/split-template", {"shares": shares})
        if merchants:
            over = [
                {"merchant_id": merchants[0], "bps": 9000},
                {"merchant_id": merchants[-1], "bps": 1500},
            ]
            who.call("PUT", "/v1/split-template", {"shares": over})  # a typo: 15 % not 1.5 %
            twice = [{"merchant_id": merchants[0], "bps": 100}] * 2
            who.call("PUT", "/v1/split-template", {"shares": twice})  # a form sent twice
        mine = [{"merchant_id": who.merchant_id, "bps": 100}]
        who.call("PUT", "/v1/split-template", {"shares": mine})
        who.call("PUT", "/v1/split-template", {"shares": []})  # splits switched off

    def webhooks(self, who: Merchant) -> tuple[str | None, str | None]:
        # Shops name their endpoint as their docs do: both merchants pick the same id.
        endpoint_id = "we_primary"
        types = list(self.profile.webhooks.event_types)
        url = "http://127.0.0.1:9/hooks/payments"
        path = f"/v1/webhook-endpoints/{endpoint_id}"
        who.call("PUT", path, {"url": url, "event_types": types})
        who.call("GET", "/v1/webhook-endpoints")
        who.call("PUT", path, {"url": url, "event_types": types[:3]})  # fewer events
        who.call("GET", "/v1/webhook-endpoints")
        who.call("POST", f"{path}/rotate-secret")
        who.call("POST", f"{path}/rotate-secret")  # rotated twice: two new secrets
        who.call(
            "PUT",
            "/v1/webhook-endpoints/we_staging",
            {"url": "http://hooks.shop.example/payments", "event_types": types[:1]},
        )
        who.call(
            "PUT",
            "/v1/webhook-endpoints/we_refunds",
            {"url": url, "event_types": ["payment.refunded"]},
        )
        who.call(
            "PUT", "/v1/webhook-endpoints/we_audit", {"url": url, "event_types": types[:1] * 2}
        )
        self.create_payment(who, "5")  # an event for the endpoint
        delivery = _id(_first(who.call("GET", "/v1/webhook-deliveries"), "deliveries"))
        if delivery:
            who.call("POST", f"/v1/webhook-deliveries/{_p(delivery)}/resend")
        return endpoint_id, delivery

    def x402(self, who: Merchant) -> str | None:
        """Pay-per-use: an ``exact`` settlement (sent twice, as a retry), an ``upto`` one with
        its usage, and the payloads a buggy wallet sends."""
        exact = who.call("POST", "/v1/x402/requirements", self.requirements(who, "exact"))
        settle = self.settle(exact)
        if settle is not None:
            who.call("POST", "/v1/x402/settle", settle, idempotency_key=None)
            who.call("POST", "/v1/x402/settle", settle, idempotency_key=None)  # a retry
            again = self.settle(exact, valid_after=int(time.time()) - 30)
            who.call("POST", "/v1/x402/settle", again, idempotency_key=None)  # paid twice
            usage = self.usage(who, "1")
            who.call("POST", f"/v1/x402/{_p(str(exact['payment_id']))}/usage", usage)  # exact
        who.call("POST", "/v1/x402/requirements", self.requirements(who, "exact"))  # same again
        upto = who.call("POST", "/v1/x402/requirements", self.requirements(who, "upto"))
        settled = None
        if _id(upto, "payment_id"):
            early = f"/v1/x402/{_p(str(upto['payment_id']))}/usage"
            who.call("POST", early, self.usage(who, "1"))  # reported before settling
        settle = self.settle(upto)
        if settle is not None:
            who.call("POST", "/v1/x402/settle", settle)
            settled = str(upto["payment_id"])
            who.call("POST", f"/v1/x402/{_p(settled)}/usage", self.usage(who, "1.25"))
            who.call("POST", f"/v1/x402/{_p(settled)}/usage", self.usage(who, "5"))  # over max
        now = int(time.time())
        bad_payloads: list[dict[str, Any]] = [
            {"value": 1},  # pays too little
            {"valid_before": now - 10},  # signed earlier, sent late
            {"valid_after": now + 600},  # a wallet clock ahead
            {"nonce": "0x" + "ab" * 32},  # a nonce of its own
            {"to": "0x" + "11" * 20},  # the wrong recipient
        ]
        for changes in bad_payloads:
            fresh = who.call("POST", "/v1/x402/requirements", self.requirements(who, "exact"))
            settle = self.settle(fresh, **changes)
            if settle is not None:
                who.call("POST", "/v1/x402/settle", settle, idempotency_key=None)
        over = who.call("POST", "/v1/x402/requirements", self.requirements(who, "upto"))
        maximum = str(_first(over, "accepts").get("max_amount_required", ""))
        settle = self.settle(over, value=int(maximum) * 2 if maximum.isdigit() else 2)
        if settle is not None:
            who.call("POST", "/v1/x402/settle", settle, idempotency_key=None)  # above the max
        bare = {k: v for k, v in self.requirements(who, "exact").items() if k != "resource"}
        who.call("POST", "/v1/x402/requirements", bare)
        return settled

    def statements(self, who: Merchant) -> None:
        now = datetime.now(UTC)
        query = {
            "currency_id": self.currency,
            "from": _iso(now - timedelta(days=1)),
            "to": _iso(now + timedelta(hours=1)),
            "limit": 2,
        }
        page = who.call("GET", "/v1/statements", params=query)
        cursor = _id(page, "next_cursor")
        if cursor:
            who.call("GET", "/v1/statements", params={**query, "cursor": cursor})
        whole = who.call("GET", "/v1/statements", params={**query, "limit": 100})
        lines = whole.get("lines")
        last = lines[-1] if isinstance(lines, list) and lines else None
        if isinstance(last, dict) and _id(last, "created_at"):
            # An incremental sync: the lines since the last one booked, that one included.
            since = {"from": last["created_at"], "limit": 100}
            who.call("GET", "/v1/statements", params={**query, **since})
        who.call("GET", "/v1/statements", params={k: v for k, v in query.items() if k != "limit"})
        who.call("GET", "/v1/statements", params={**query, "limit": 5000})
        who.call("GET", "/v1/statements", params={**query, "to": query["from"]})
        who.call("GET", "/v1/statements", params={**query, "currency_id": "usd"})
        # The coming hour: no line yet, an opening balance of everything before it.
        ahead = {"from": _iso(now + timedelta(seconds=2)), "to": _iso(now + timedelta(hours=1))}
        who.call("GET", "/v1/statements", params={**query, **ahead})

    def mistakes(self, who: Merchant) -> None:
        """What a real integration gets wrong now and then."""
        who.call("POST", "/v1/payments", self.payment(who, "12.3.4"))  # a bad amount
        who.call("POST", "/v1/payments", self.payment(who, "-5"))
        who.call("GET", "/v1/payments", tamper=True)  # a wrong signature
        who.call("GET", "/v1/payments", timestamp=int(time.time()) - 3600)  # a stale clock
        who.call("GET", "/v1/payments", signed=False)  # credentials not configured
        who.call("POST", "/v1/payments", self.payment(who), idempotency_key=None)
        key = who.key()
        body = self.payment(who, "15")
        who.call("POST", "/v1/payments", body, idempotency_key=key)
        who.call("POST", "/v1/payments", body, idempotency_key=key)  # a retry: replayed
        who.call("POST", "/v1/payments", self.payment(who, "16"), idempotency_key=key)  # reused
        who.call("GET", "/v1/payments", params={"status": "pending"})
        who.call("GET", "", resend=True)  # an HTTP retry of it with the same headers
        fixed = who.key()
        who.call("POST", "/v1/payments", self.payment(who, "1,5"), idempotency_key=fixed)
        who.call("POST", "/v1/payments", self.payment(who, "1.5"), idempotency_key=fixed)
        long_key = hashlib.sha512(b"cart 8812").hexdigest()  # 128 characters
        who.call("POST", "/v1/payments", self.payment(who, "2"), idempotency_key=long_key)
        twice = self.payment(who, "3")
        who.call("POST", "/v1/payments", twice)
        who.call("POST", "/v1/payments", twice)  # submitted twice under two keys
        who.call("POST", "/v1/payments", self.payment(who, "3", quotes={}))  # an empty cart
        who.call("POST", "/v1/payments", self.payment(who, "3", expires_in_secs=604800))
        who.call("GET", "/v1/payments", params={"limit": 500})
        who.call("GET", "/v1/payments", params={"merchant_order_no": "order-1"})
        who.call("POST", "/v1/payments", raw=b'{"quotes": ')  # a body cut short
        who.call("POST", "/v1/payments", raw=b"[]")  # a batch the API does not have
        latin1 = json.dumps(self.payment(who, "4", memo="Caf\u00e9")).replace("\\u00e9", "\xe9")
        who.call("POST", "/v1/payments", raw=latin1.encode("latin-1"))  # not UTF-8
        who.call("PUT", "/v1/split-template", raw=b"")  # the body forgotten
        who.call("GET", "/v1/split-template")  # there is no read
        who.call("GET", "/v1/refunds")  # an unknown path
        who.call("GET", "/v1/payments/unknown/extra")
        who.call("GET", "/payments")  # a base URL without /v1
        who.call("POST", "/v1/payments/pay_does_not_exist/cancel")
        who.call("POST", "/v1/payments/pay_caf\u00e9/cancel")  # a mistyped id
        who.call("GET", "/v1/payments?merchant_order_no=50%off")  # an unescaped percent sign

    def wrong_merchant(
        self,
        who: Merchant,
        ids: list[str],
        subscription: str | None,
        schedule: str | None,
        endpoint: str | None,
        delivery: str | None,
        settled: str | None,
    ) -> None:
        """The second merchant's key used, by a misconfiguration, on the first one's ids."""
        for payment_id in ids[4:5]:
            who.call("POST", f"/v1/payments/{_p(payment_id)}/cancel")
            path = f"/v1/test-helpers/payments/{_p(payment_id)}"
            who.call(
                "POST",
                f"{path}/deposit",
                {"currency_id": self.currency, "chain_id": self.chain, "amount": "1"},
            )
            who.call("POST", f"{path}/expire")
        if subscription:
            who.call("POST", f"/v1/subscriptions/{_p(subscription)}/cancel")
        if schedule:
            who.call("POST", f"/v1/payout-schedules/{_p(schedule)}/pause")
        if endpoint:
            who.call("POST", f"/v1/webhook-endpoints/{_p(endpoint)}/rotate-secret")
        if delivery:
            who.call("POST", f"/v1/webhook-deliveries/{_p(delivery)}/resend")
        if settled:
            who.call("POST", f"/v1/x402/{_p(settled)}/usage", self.usage(who, "0.5"))
        foreign = self.profile.withdraw_addresses(self.alpha.merchant_id)
        if foreign:  # the first merchant's address copied into the second one's settings
            who.call(
                "POST",
                "/v1/payout-schedules",
                {**self.schedule(who), "withdraw_address_id": foreign[0]},
            )
            own = _id(who.call("POST", "/v1/payout-schedules", self.schedule(who)))
            if own:
                who.call(
                    "PUT",
                    f"/v1/payout-schedules/{_p(own)}",
                    {**self.schedule(who), "withdraw_address_id": foreign[0]},
                )
        who.call("GET", "/v1/payments", params={"merchant_order_no": "order-1"})
        who.call("GET", "/v1/webhook-deliveries")
        who.call("GET", "/v1/webhook-endpoints")


def record_session(base_url: str, profile: Profile, seed: int = 1) -> HarLog:
    """Drive the service at ``base_url`` through the scripted flows; the recorded HAR log."""
    rng = random.Random(seed)
    har = HarLog()
    credentials = profile.credentials[:2]
    template = profile.string_to_sign or DEFAULT_STRING_TO_SIGN
    with httpx.Client(base_url=base_url, timeout=TIMEOUT_S, verify=False) as http:
        merchants = [
            Merchant(
                http,
                har,
                Signer(c.api_key, c.api_secret, template),
                c.merchant_id,
                random.Random(rng.getrandbits(64)),
            )
            for c in credentials
        ]
        alpha = merchants[0]
        beta = merchants[1] if len(merchants) > 1 else merchants[0]
        Session(profile, alpha, beta).run()
    return har
