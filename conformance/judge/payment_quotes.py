"""The quotes of a payment answer against the quotes asked for (PAY-006 to PAY-009, FIX-003,
FIX-004): one entry per requested currency with the requested amount, normalised; the code,
symbol and name of its currency; a deployment (chain, asset kind, address) per chain the
currency is deployed on that the answer lists, and one for each chain the create named.

A create's answer is judged against its request; a listed or canceled payment by what it
alone decides (names and deployments), unless the caller remembers its create (the payments
family's model).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.core.profile import Currency
from conformance.judge.payment_rules import decimal_value

AMOUNT, NAMES, DEPLOYMENTS, CHAINS = "PAY-006", "PAY-007", "PAY-008", "PAY-009"
KNOWN_CURRENCY, KNOWN_DEPLOYMENT = "FIX-003", "FIX-004"


def quote_problems(
    answered: object,
    asked: Mapping[str, Any] | None,
    currencies: Mapping[str, Currency],
    *,
    creating: bool,
) -> dict[str, list[str]]:
    """What is wrong, per requirement id, with the ``quotes`` of a payment answer, ``asked``
    being the ``quotes`` of its create request (None: not known, PAY-006 is not judged); an
    id with no problems held. Only the ids a check reached are keys (PAY-009 where a create's
    quote named chains); the names and deployments of a currency outside ``currencies`` are
    not judged (its create should have been refused)."""
    found: dict[str, list[str]] = {}
    if asked is not None:
        found[AMOUNT] = []
        if not isinstance(answered, dict) or set(answered) != set(asked):
            shown = sorted(answered) if isinstance(answered, dict) else answered
            found[AMOUNT].append(f"quotes {shown!r}, expected entries for {sorted(asked)}")
            return found
    elif not isinstance(answered, dict):
        return found  # the schema's
    for currency_id, entry in answered.items():
        request = asked.get(currency_id) if asked is not None else None
        _entry_problems(
            found,
            f"quotes.{currency_id}",
            request if isinstance(request, dict) else {},
            entry,
            currencies.get(currency_id),
            creating,
        )
    return found


def deployed_chains(entry: object, currency: Currency) -> tuple[str, ...]:
    """The chains of a quote entry's deployments that its currency is deployed on."""
    deployments = entry.get("deployments") if isinstance(entry, dict) else None
    if not isinstance(deployments, list):
        return ()
    return tuple(
        str(d.get("chain_id"))
        for d in deployments
        if isinstance(d, dict) and d.get("chain_id") in currency.chains
    )


def _entry_problems(
    found: dict[str, list[str]],
    where: str,
    request: Mapping[str, Any],
    entry: object,
    currency: Currency | None,
    creating: bool,
) -> None:
    if not isinstance(entry, dict):
        if AMOUNT in found:  # else the schema's
            found[AMOUNT].append(f"{where} is not an object")
        return
    want = decimal_value(request.get("amount"))
    if want is not None and decimal_value(entry.get("amount")) != want:
        found[AMOUNT].append(
            f"{where}.amount {entry.get('amount')!r}, expected {request.get('amount')} normalised"
        )
    if currency is None:
        return
    for rid in (NAMES, KNOWN_CURRENCY, DEPLOYMENTS, KNOWN_DEPLOYMENT):
        found.setdefault(rid, [])
    for name in ("code", "symbol", "name"):
        if entry.get(name) != getattr(currency, name):
            problem = f"{where}.{name} {entry.get(name)!r}, expected {getattr(currency, name)!r}"
            found[NAMES].append(problem)
            found[KNOWN_CURRENCY].append(problem)
    deployments = entry.get("deployments")
    if not isinstance(deployments, list):
        found[DEPLOYMENTS].append(f"{where}.deployments is not a list")
        return
    for index, deployment in enumerate(deployments):
        at = f"{where}.deployments[{index}]"
        if not isinstance(deployment, dict):
            found[DEPLOYMENTS].append(f"{at} is not an object")
            continue
        chain_id = deployment.get("chain_id")
        if chain_id not in currency.chains:
            found[DEPLOYMENTS].append(
                f"{at}.chain_id {chain_id!r} is not a chain the currency is deployed on"
            )
            continue
        kind = currency.asset_kinds[str(chain_id)]
        if deployment.get("asset_kind") != kind:
            problem = f"{at}.asset_kind {deployment.get('asset_kind')!r}, expected {kind!r}"
            found[DEPLOYMENTS].append(problem)
            found[KNOWN_DEPLOYMENT].append(problem)
        address = deployment.get("address")
        if not isinstance(address, str) or not address:
            found[DEPLOYMENTS].append(f"{at} has no address")
    named = request.get("chain_ids")
    if creating and isinstance(named, list):
        listed = deployed_chains(entry, currency)
        missing = [c for c in named if c not in listed]
        found.setdefault(CHAINS, []).extend(
            [f"{where}.deployments lack the chains {missing}"] if missing else []
        )
