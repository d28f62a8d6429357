"""The three x402 operations as the suite's merchant sends them, and the bodies it builds.

Paths come from the effective contract; the client signs every request and adds the
Idempotency-Key where the profile requires one (settle takes it optionally: none is sent, so
that "the identical payload settled again" is the server's own answer, not a key replay).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx

from conformance.judge.answers import AnswerChecks
from conformance.judge.x402_history import X402History
from conformance.judge.x402_rules import default_scheme
from conformance.suite.factories import Factories, locate_operation
from conformance.suite.stateful import body_of
from conformance.suite.tool_errors import PrerequisiteError
from conformance.suite.x402.model import Deployment, Issued, X402Profile, raw_of

REQUIREMENTS = "createX402Requirements"
SETTLE = "settleX402Payment"
USAGE = "reportX402Usage"
STATEMENT = "getStatement"
STATEMENT_MARGIN = 60  # seconds around a settlement read back through a statement
STATEMENT_PAGES = 10
RESOURCE = "https://api.conformance.invalid/x402/"


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Requested:
    """What a requirements request asked for (``scheme``/``resource`` None: not sent)."""

    deployment: Deployment
    scheme: str | None
    amount: str
    resource: str | None

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "currency_id": self.deployment.currency.currency_id,
            "chain_id": self.deployment.chain_id,
            "amount": self.amount,
        }
        if self.scheme is not None:
            body["scheme"] = self.scheme
        if self.resource is not None:
            body["resource"] = self.resource
        return body


@dataclass
class IssueOutcome:
    response: httpx.Response


class X402Api:
    """Sends the x402 operations for one merchant."""

    def __init__(self, factories: Factories, rules: X402Profile) -> None:
        self.factories = factories
        self.rules = rules
        self.answers = AnswerChecks(rules.profile)  # the judge's rules on each answer
        self.history = X402History(rules.profile)  # and on later requests on a payment

    @property
    def client(self) -> Any:
        return self.factories.client

    def _send(self, operation_id: str, json: Any, **path: str) -> httpx.Response:
        method, template = locate_operation(self.rules.contract, operation_id)
        for name, value in path.items():
            template = template.replace("{" + name + "}", quote(value, safe=""))
        response: httpx.Response = self.client.request(
            method, template, json=json, operation_id=operation_id
        )
        return response

    # -- requirements --------------------------------------------------------------------
    def request_requirements(self, body: dict[str, Any]) -> IssueOutcome:
        return IssueOutcome(self._send(REQUIREMENTS, body))

    def issue(self, requested: Requested) -> tuple[IssueOutcome, Issued]:
        """Requirements as asked; PrerequisiteError when the server issues none."""
        outcome = self.request_requirements(requested.body())
        return outcome, self.issued(requested, outcome.response)

    def issued(self, requested: Requested, response: httpx.Response) -> Issued:
        body = body_of(response)
        accepts = body.get("accepts")
        if (
            response.status_code != self.rules.created()
            or not isinstance(body.get("payment_id"), str)
            or not isinstance(accepts, list)
            or not accepts
            or not isinstance(accepts[0], dict)
        ):
            raise PrerequisiteError(
                f"could not create x402 requirements ({requested.deployment.label}): "
                f"{response.status_code} {response.text[:200]}"
            )
        entry = dict(accepts[0])
        scheme = requested.scheme or default_scheme() or str(entry.get("scheme"))
        # Payloads answer what was issued (whether it was issued right is X402-005's question).
        issued_max = entry.get("max_amount_required")
        if isinstance(issued_max, str) and issued_max.isascii() and issued_max.isdigit():
            max_raw = int(issued_max)
        else:
            max_raw = raw_of(requested.amount, requested.deployment.decimals)
        return Issued(
            payment_id=str(body["payment_id"]),
            deployment=requested.deployment,
            scheme=scheme,
            max_raw=max_raw,
            entry=entry,
        )

    # -- settlement ----------------------------------------------------------------------
    @staticmethod
    def settle_body(payment_id: str, entry: dict[str, Any], payload: Any) -> dict[str, Any]:
        return {
            "payment_id": payment_id,
            "payment_payload": payload,
            "payment_requirements": entry,
        }

    def settle(self, body: dict[str, Any]) -> httpx.Response:
        return self._send(SETTLE, body)

    def pay(self, issued: Issued, **changes: Any) -> dict[str, Any]:
        """A settle request for ``issued`` signed by the suite's wallet (``changes``: see
        ``Factories.signed_payload``)."""
        payload = self.factories.signed_payload(issued.entry, **changes)
        return self.settle_body(issued.payment_id, issued.entry, payload)

    # -- the ledger ----------------------------------------------------------------------
    def ledger_lines(self, issued: Issued) -> int | None:
        """How many statement lines name the payment, in a window around its settlement
        (None when no statement can be read: the re-read is then left out)."""
        if issued.settled_at is None:
            return None
        method, path = locate_operation(self.rules.contract, STATEMENT)
        limits = self.rules.profile.range("statements", "limit")
        query: dict[str, Any] = {
            "currency_id": issued.deployment.currency.currency_id,
            "from": _iso(issued.settled_at - STATEMENT_MARGIN),
            "to": _iso(time.time() + STATEMENT_MARGIN),
            "limit": limits.max,
        }
        count = 0
        for _ in range(STATEMENT_PAGES):
            response = self.client.request(method, path, params=query, operation_id=STATEMENT)
            body = body_of(response)
            lines = body.get("lines")
            if response.status_code != self.rules.success(STATEMENT) or not isinstance(lines, list):
                return None
            count += sum(
                1
                for ln in lines
                if isinstance(ln, dict) and ln.get("payment_id") == issued.payment_id
            )
            cursor = body.get("next_cursor")
            if not isinstance(cursor, str) or not cursor:
                return count
            query["cursor"] = cursor
        return None

    # -- usage ---------------------------------------------------------------------------
    def usage(self, payment_id: str, amount: str, usage_id: str | None = None) -> httpx.Response:
        body = {
            "actual_amount": amount,
            "usage_id": usage_id or f"usage_{uuid.uuid4().hex[:16]}",
            "evidence": {"source": "payment-conformance", "requests": 1},
        }
        return self._send(USAGE, body, payment_id=payment_id)

    def unknown_id(self) -> str:
        return self.factories.unique("pay_conformance_unknown_")
