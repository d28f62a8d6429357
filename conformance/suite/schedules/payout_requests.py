"""Payout schedule requests from the profile's fixtures and the contract: valid ones (as
hypothesis strategies and as fixed examples) and the refusals of profile section 5."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import partial
from typing import Any

from hypothesis import strategies as st

from conformance.core.profile import Profile
from conformance.suite.schedules.amounts import Amount, amounts, decimal_text, too_precise
from conformance.suite.schedules.clock import ServerClock, iso

FIRST_RUN_MAX_SECS = 10**7  # how far beyond "surely in the future" a first_run_at may lie
FALLBACK_INTERVAL = (60, 31536000)


@dataclass(frozen=True)
class Deployment:
    currency_id: str
    chain_id: str
    decimals: int


def deployments(profile: Profile) -> tuple[Deployment, ...]:
    return tuple(
        Deployment(currency.currency_id, chain, currency.decimals)
        for currency in profile.currencies.values()
        for chain in currency.chains
    )


def unknown_id(what: str) -> str:
    return f"conformance-unknown-{what}-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class ScheduleRequest:
    """The fields of a create or a replace; ``first_run_in`` seconds beyond the clock's
    "surely future" moment, or None for no ``first_run_at``."""

    deployment: Deployment
    withdraw_address_id: str
    interval_secs: int
    amount: Amount
    mode: str
    first_run_in: int | None = None
    changes: Mapping[str, Any] = field(default_factory=dict)  # a refusal's fields

    def body(self, clock: ServerClock) -> dict[str, Any]:
        """The JSON body (a ``first_run_at`` made from ``clock`` now)."""
        body: dict[str, Any] = {
            "currency_id": self.deployment.currency_id,
            "target_chain_id": self.deployment.chain_id,
            "withdraw_address_id": self.withdraw_address_id,
            "interval_secs": self.interval_secs,
            "min_send_amount": self.amount.text,
            "mode": self.mode,
        }
        if self.first_run_in is not None:
            body["first_run_at"] = iso(clock.future(self.first_run_in))
        for key, value in self.changes.items():
            body[key] = iso(clock.past(value.secs)) if isinstance(value, Past) else value
        return body

    def describe(self) -> str:
        first = "" if self.first_run_in is None else ", with first_run_at"
        return (
            f"{self.amount.text} {self.deployment.currency_id} on {self.deployment.chain_id} "
            f"to {self.withdraw_address_id} every {self.interval_secs} s, {self.mode}{first}"
        )


@dataclass(frozen=True)
class Past:
    """A first_run_at ``secs`` beyond "surely in the past", made when the body is."""

    secs: int


@dataclass(frozen=True)
class Refusal:
    """A request that breaks one business rule: ``changes`` applied to a valid request."""

    name: str
    requirement_ids: tuple[str, ...]
    changes: st.SearchStrategy[dict[str, Any]]
    create_only: bool = False
    # a rule the judge reads from the request (``judge.admission``); an id made up for the
    # case (an unknown address or currency) is one only the family knows no one has
    judged: bool = True


class PayoutFixtures:
    """What the profile and the contract offer a merchant's payout schedule requests."""

    def __init__(self, profile: Profile, contract: Mapping[str, Any], merchant_id: str) -> None:
        self.profile = profile
        self.merchant_id = merchant_id
        self.deployments = deployments(profile)
        self.addresses = profile.withdraw_addresses(merchant_id)
        self.foreign_addresses = tuple(
            dict.fromkeys(
                address
                for credential in profile.credentials
                if credential.merchant_id != merchant_id
                for address in profile.withdraw_addresses(credential.merchant_id)
                if address not in self.addresses
            )
        )
        schema = ((contract.get("components") or {}).get("schemas") or {}).get(
            "PayoutScheduleCreate"
        ) or {}
        properties = schema.get("properties") or {}
        interval = properties.get("interval_secs") or {}
        self.interval = (
            int(interval.get("minimum", FALLBACK_INTERVAL[0])),
            int(interval.get("maximum", FALLBACK_INTERVAL[1])),
        )
        modes = (properties.get("mode") or {}).get("enum") or []
        self.modes = tuple(str(m) for m in modes) or ("auto_request",)
        self._requests: dict[tuple[Any, ...], st.SearchStrategy[ScheduleRequest]] = {}
        self._refusals: list[Refusal] | None = None

    @property
    def usable(self) -> bool:
        return bool(self.deployments and self.addresses)

    # -- valid requests -------------------------------------------------------------------
    def requests(
        self,
        *,
        first_run: bool | None = None,
        deployment: Deployment | None = None,
        address: str | None = None,
    ) -> st.SearchStrategy[ScheduleRequest]:
        """Valid requests: any deployment, address, interval, amount and mode (or the ones
        given); with a first_run_at (True), without (False) or either (None)."""
        key = (first_run, deployment, address)
        if key not in self._requests:
            self._requests[key] = self._build_requests(first_run, deployment, address)
        return self._requests[key]

    def _build_requests(
        self, first_run: bool | None, deployment: Deployment | None, address: str | None
    ) -> st.SearchStrategy[ScheduleRequest]:
        offsets: st.SearchStrategy[int | None]
        if first_run is None:
            offsets = st.none() | st.integers(0, FIRST_RUN_MAX_SECS)
        elif first_run:
            offsets = st.integers(0, FIRST_RUN_MAX_SECS)
        else:
            offsets = st.none()

        @st.composite
        def build(draw: st.DrawFn) -> ScheduleRequest:
            chosen = deployment or draw(st.sampled_from(self.deployments))
            return ScheduleRequest(
                deployment=chosen,
                withdraw_address_id=address or draw(st.sampled_from(self.addresses)),
                interval_secs=draw(st.integers(*self.interval)),
                amount=draw(amounts(chosen.decimals)),
                mode=draw(st.sampled_from(self.modes)),
                first_run_in=draw(offsets),
            )

        return build()

    def example(self, deployment: Deployment | None = None) -> ScheduleRequest:
        """A fixed valid request (the walk through the transitions uses it)."""
        deployment = deployment or self.deployments[0]
        return ScheduleRequest(
            deployment=deployment,
            withdraw_address_id=self.addresses[0],
            interval_secs=max(self.interval[0], min(self.interval[1], 86400)),
            amount=_example_amount(deployment.decimals, avoid=None),
            mode=self.modes[0],
        )

    def different(self, request: ScheduleRequest) -> ScheduleRequest:
        """A valid request whose every field differs from ``request`` where the profile and
        the contract offer another value (a replace must show each one)."""
        others = [d for d in self.deployments if d.currency_id != request.deployment.currency_id]
        others = others or [d for d in self.deployments if d != request.deployment]
        deployment = others[0] if others else request.deployment
        addresses = [a for a in self.addresses if a != request.withdraw_address_id]
        low, high = self.interval
        interval = request.interval_secs + 1 if request.interval_secs < high else high - 1
        modes = [m for m in self.modes if m != request.mode]
        return ScheduleRequest(
            deployment=deployment,
            withdraw_address_id=addresses[0] if addresses else request.withdraw_address_id,
            interval_secs=max(low, interval),
            amount=_example_amount(deployment.decimals, avoid=request.amount.text),
            mode=modes[0] if modes else request.mode,
            first_run_in=3600 if request.first_run_in != 3600 else 7200,
        )

    # -- refusals -------------------------------------------------------------------------
    def refusals(self) -> list[Refusal]:
        """One refusal per business rule the profile states, for each fixture it applies to."""
        if self._refusals is None:
            self._refusals = self._build_refusals()
        return self._refusals

    def _build_refusals(self) -> list[Refusal]:
        found: list[Refusal] = []
        by_currency: dict[str, Deployment] = {}
        for deployment in self.deployments:
            by_currency.setdefault(deployment.currency_id, deployment)
        for deployment in by_currency.values():
            found.append(
                Refusal(
                    f"min_send_amount with more decimals than {deployment.currency_id} has",
                    ("PAYOUT-003",),
                    too_precise(deployment.decimals).map(partial(_with_amount, deployment)),
                )
            )
        found.append(
            Refusal(
                "first_run_at in the past",
                ("PAYOUT-005",),
                st.integers(0, FIRST_RUN_MAX_SECS).map(lambda s: {"first_run_at": Past(s)}),
                create_only=True,
            )
        )
        found.append(
            Refusal(
                "an unknown withdraw_address_id",
                ("PAYOUT-007",),
                st.builds(lambda: {"withdraw_address_id": unknown_id("address")}),
                judged=False,
            )
        )
        found += [
            Refusal(
                f"withdraw address {address} of another merchant",
                ("PAYOUT-008",),
                st.just({"withdraw_address_id": address}),
            )
            for address in self.foreign_addresses
        ]
        found.append(
            Refusal(
                "an unknown currency_id",
                ("PAYOUT-009",),
                st.builds(lambda: {"currency_id": unknown_id("currency")}),
                judged=False,
            )
        )
        found.append(
            Refusal(
                "an unknown target_chain_id",
                ("PAYOUT-009",),
                st.builds(lambda: {"target_chain_id": unknown_id("chain")}),
            )
        )
        found += [
            Refusal(
                f"{currency.currency_id} on {chain}, where it is not deployed",
                ("PAYOUT-009",),
                st.just({"currency_id": currency.currency_id, "target_chain_id": chain}),
            )
            for currency in self.profile.currencies.values()
            for chain in self.profile.chains
            if chain not in currency.chains
        ]
        return found


def _with_amount(deployment: Deployment, text: str) -> dict[str, Any]:
    return {
        "currency_id": deployment.currency_id,
        "target_chain_id": deployment.chain_id,
        "min_send_amount": text,
    }


def refused(request: ScheduleRequest, changes: dict[str, Any]) -> ScheduleRequest:
    return replace(request, changes=changes)


def _example_amount(decimals: int, avoid: str | None) -> Amount:
    for units, hundredths in ((1, 50), (2, 75), (3, 0)):
        raw = units * 10**decimals + (hundredths * 10**decimals) // 100
        text = decimal_text(raw, decimals, min(decimals, 2))
        if avoid is None or Decimal(text) != _decimal(avoid):
            return Amount(text, raw)
    return Amount(str(4), 4 * 10**decimals)


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text)
    except ArithmeticError:
        return Decimal(-1)
