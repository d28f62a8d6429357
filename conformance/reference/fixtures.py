"""The profile's fixtures as business rules: known currencies, deployments, addresses."""

from __future__ import annotations

import hashlib

from conformance.core.profile import Currency
from conformance.reference.context import RequestContext
from conformance.reference.errors import business_rule


def currency(ctx: RequestContext, currency_id: str) -> Currency:
    found = ctx.config.profile.currencies.get(currency_id)
    if found is None:
        raise business_rule(ctx, "unknown_currency", f"unknown currency {currency_id!r}")
    return found


def require_deployment(ctx: RequestContext, found: Currency, chain_id: str) -> None:
    if chain_id not in ctx.config.profile.chains:
        raise business_rule(ctx, "unknown_chain", f"unknown chain {chain_id!r}")
    if chain_id not in found.chains:
        raise business_rule(
            ctx,
            "currency_not_on_chain",
            f"{found.currency_id} is not deployed on {chain_id}",
        )


def known_merchants(ctx: RequestContext) -> frozenset[str]:
    profile = ctx.config.profile
    return frozenset(c.merchant_id for c in profile.credentials) | frozenset(
        profile.split_merchants
    )


def deposit_address(payment_id: str, chain_id: str) -> str:
    """The checkout address of a payment on a chain: ``0x`` + 40 hex, stable per payment."""
    return "0x" + hashlib.sha256(f"{payment_id}:{chain_id}".encode()).hexdigest()[:40]
