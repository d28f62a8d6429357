"""What the x402 family knows: the profile's x402 choices, and the payments it created.

``X402Profile`` reads what the family needs from the profile (deployments of every currency,
schemes, the payload shape, statuses; the rules on an answer are the judge's,
``judge.x402_rules``). ``Issued`` is one payment's
requirements as the server issued them and, once settled, the settle request that settled it,
its result and the value the payer authorised: the model the judge
(``judge.x402_history``) compares the server's later answers with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from conformance.core.profile import Currency, ErrorSpec, Profile, X402PayloadShape, X402Section
from conformance.judge.x402_history import Payment, Settlement

EXACT = "exact"  # the x402 scheme names the contract lists (X402RequirementsCreate.scheme)
UPTO = "upto"


@dataclass(frozen=True)
class Deployment:
    """One currency on one chain it is deployed on."""

    currency: Currency
    chain_id: str

    @property
    def label(self) -> str:
        return f"{self.currency.currency_id} on {self.chain_id}"

    @property
    def decimals(self) -> int:
        return self.currency.decimals


def decimal_text(raw: int, decimals: int) -> str:
    """A raw amount as the decimal string of the currency (``1500000``, 6 -> ``1.5``)."""
    whole, fraction = divmod(raw, 10**decimals)
    digits = str(fraction).rjust(decimals, "0").rstrip("0") if decimals else ""
    return f"{whole}.{digits}" if digits else str(whole)


def raw_of(amount: str, decimals: int) -> int:
    """A decimal string in raw units (exact: no float on the way)."""
    return int(Decimal(amount).scaleb(decimals))


@dataclass(frozen=True)
class X402Profile:
    """The profile's x402 choices, typed for the family."""

    profile: Profile
    contract: Mapping[str, Any]

    @property
    def x402(self) -> X402Section:
        return self.profile.x402

    @property
    def deployments(self) -> list[Deployment]:
        found: list[Deployment] = []
        for currency in self.profile.currencies.values():
            for chain_id in dict.fromkeys(currency.chains):
                found.append(Deployment(currency, chain_id))
        return found

    def undeployed(self) -> list[tuple[Currency, str]]:
        """Currencies with a profile chain they are not deployed on."""
        return [
            (currency, chain_id)
            for currency in self.profile.currencies.values()
            for chain_id in self.profile.chains
            if chain_id not in currency.chains
        ]

    @property
    def schemes(self) -> list[str]:
        return list(self.x402.schemes)

    @property
    def payload_shape(self) -> X402PayloadShape | None:
        return self.profile.x402_payload

    @property
    def usage_scheme(self) -> str | None:
        """The scheme usage needs (``usage_requires = "settled-upto"``), if the profile has it."""
        if self.x402.usage_requires == "settled-upto" and UPTO in self.schemes:
            return UPTO
        return None

    @property
    def settle_failure(self) -> ErrorSpec:
        return self.profile.error("x402", "settle_failure")

    @property
    def validation(self) -> ErrorSpec:
        return self.profile.error("status", "validation")

    @property
    def not_found(self) -> ErrorSpec:
        return self.profile.error("status", "not_found")

    @property
    def business_rule(self) -> ErrorSpec:
        return self.profile.error("status", "business_rule")

    def created(self) -> int:
        return self.profile.success_status("createX402Requirements")

    def success(self, operation_id: str) -> int:
        return self.profile.success_status(operation_id)


@dataclass
class Issued:
    """One payment's requirements as issued and what the server must hold about it."""

    payment_id: str
    deployment: Deployment
    scheme: str
    max_raw: int
    entry: dict[str, Any]
    settle_body: dict[str, Any] | None = None  # the request that settled it
    settlement: Settlement | None = None  # as the judge compares later settle requests
    authorised: int | None = None  # the settled authorization's value
    settled_at: float | None = None  # epoch seconds (suite clock) of the settlement
    ledger_lines: int | None = None  # statement lines naming the payment once settled
    used_raw: int = 0  # the sum of the usage reports accepted

    @property
    def settled(self) -> bool:
        return self.settle_body is not None

    @property
    def payment(self) -> Payment:
        """What the judge needs of the payment's history to judge a usage report of it."""
        return Payment(
            frozenset({self.scheme}),
            self.deployment.decimals,
            settled=self.settled,
            authorised=self.authorised,
            used=self.used_raw,
        )

    @property
    def label(self) -> str:
        return f"{self.scheme} {decimal_text(self.max_raw, self.deployment.decimals)} " + (
            f"{self.deployment.label} ({self.payment_id})"
        )
