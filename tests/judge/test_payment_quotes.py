"""quote_problems: a payment's quotes against the quotes its create asked for (PAY-006 to
PAY-009, FIX-003, FIX-004), under the default profile's currencies."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from conformance.core.profile import Currency, load_profile
from conformance.judge.payment_quotes import deployed_chains, quote_problems

ASKED = {"usdc": {"amount": "25.00", "chain_ids": ["base"]}, "eth": {"amount": "0.5"}}
ANSWERED: dict[str, Any] = {
    "usdc": {
        "amount": "25",
        "code": "USDC",
        "symbol": "$",
        "name": "USD Coin",
        "deployments": [{"chain_id": "base", "asset_kind": "token", "address": "0xabc"}],
    },
    "eth": {
        "amount": "0.50",
        "code": "ETH",
        "symbol": "Ξ",
        "name": "Ether",
        "deployments": [{"chain_id": "ethereum", "asset_kind": "native", "address": "0x0"}],
    },
}


@pytest.fixture(scope="module")
def currencies() -> dict[str, Currency]:
    return load_profile("default").currencies


def failing(found: dict[str, list[str]]) -> set[str]:
    return {rid for rid, problems in found.items() if problems}


def changed(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    answered = copy.deepcopy(ANSWERED)
    target = answered
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return answered


def test_quotes_as_asked_hold_every_rule_they_reach(currencies: dict[str, Currency]) -> None:
    found = quote_problems(ANSWERED, ASKED, currencies, creating=True)
    assert set(found) == {"PAY-006", "PAY-007", "PAY-008", "PAY-009", "FIX-003", "FIX-004"}
    assert not failing(found)


def test_a_listed_payment_is_not_held_to_the_chains_its_create_named(
    currencies: dict[str, Currency],
) -> None:
    found = quote_problems(ANSWERED, ASKED, currencies, creating=False)
    assert "PAY-009" not in found


@pytest.mark.parametrize(
    ("path", "value", "broken"),
    [
        (("usdc", "amount"), "25.01", {"PAY-006"}),
        (("eth", "symbol"), "E", {"PAY-007", "FIX-003"}),
        (("usdc", "deployments", 0, "asset_kind"), "native", {"PAY-008", "FIX-004"}),
        (("usdc", "deployments", 0, "address"), "", {"PAY-008"}),
        (("usdc", "deployments", 0, "chain_id"), "solana", {"PAY-008", "PAY-009"}),
        (("usdc", "deployments"), "base", {"PAY-008"}),
        (("eth",), "0.5", {"PAY-006"}),
    ],
)
def test_an_entry_that_contradicts_the_request_or_the_profile_fails(
    currencies: dict[str, Currency], path: tuple[Any, ...], value: Any, broken: set[str]
) -> None:
    found = quote_problems(changed(path, value), ASKED, currencies, creating=True)
    assert failing(found) == broken


def test_a_missing_or_extra_currency_fails_pay_006_alone(currencies: dict[str, Currency]) -> None:
    only_usdc = {"usdc": ANSWERED["usdc"]}
    assert quote_problems(only_usdc, ASKED, currencies, creating=True) == {
        "PAY-006": ["quotes ['usdc'], expected entries for ['eth', 'usdc']"]
    }
    assert failing(quote_problems([], ASKED, currencies, creating=True)) == {"PAY-006"}


def test_a_currency_outside_the_profile_is_judged_by_its_amount_only(
    currencies: dict[str, Currency],
) -> None:
    found = quote_problems(
        {"xyz": {"amount": "2"}}, {"xyz": {"amount": "1"}}, currencies, creating=True
    )
    assert found == {"PAY-006": ["quotes.xyz.amount '2', expected 1 normalised"]}


def test_deployed_chains_are_the_listed_chains_the_currency_is_on(
    currencies: dict[str, Currency],
) -> None:
    entry = {"deployments": [{"chain_id": "solana"}, {"chain_id": "base"}, "x"]}
    assert deployed_chains(entry, currencies["usdc"]) == ("base",)
    assert deployed_chains({"deployments": None}, currencies["usdc"]) == ()


def test_without_the_create_at_hand_only_names_and_deployments_are_judged(
    currencies: dict[str, Currency],
) -> None:
    answered = changed(("usdc", "amount"), "999")
    assert not failing(quote_problems(answered, None, currencies, creating=False))
    answered = changed(("eth", "name"), "Ethereum")
    found = quote_problems(answered, None, currencies, creating=False)
    assert "PAY-006" not in found and failing(found) == {"PAY-007", "FIX-003"}
    assert quote_problems({"usdc": "25"}, None, currencies, creating=False) == {}
