"""Hypothesis strategies for payment requests, built from the profile.

Quotes name one or more of the profile's currencies, each with an amount within the currency's
decimals (sometimes written with trailing zeros, which the server normalises) and, sometimes,
a subset of the chains it is deployed on. Splits go to the profile's split merchants, never
repeated, never the caller, within the profile's total. ``expires_in_secs`` stays far enough
above the minimum that no payment of a machine expires while it runs (the lazy expiry has its
own test).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from conformance.judge.payment_rules import PaymentRules, amount_text
from conformance.suite.payments.book import Quote

MACHINE_MIN_LIFETIME_SECS = 900
MAX_WHOLE_UNITS = 10**7


@st.composite
def quote_for(draw: st.DrawFn, rules: PaymentRules, currency_id: str) -> Quote:
    currency = rules.currencies[currency_id]
    scale = 10**currency.decimals
    largest = min(MAX_WHOLE_UNITS * scale, 10**rules.raw_max_digits - 1)
    raw = draw(
        st.one_of(
            st.integers(1, largest),
            st.integers(1, min(MAX_WHOLE_UNITS, largest // scale or 1)).map(lambda u: u * scale),
            st.integers(2, min(10**6, largest)),
        )
    )
    zeros = draw(st.integers(0, 2))
    chains = None
    if draw(st.booleans()):
        chains = tuple(draw(st.lists(st.sampled_from(currency.chains), min_size=1, unique=True)))
    return Quote(currency_id, amount_text(raw, currency.decimals, zeros), raw, chains)


@st.composite
def quotes(draw: st.DrawFn, rules: PaymentRules) -> dict[str, Quote]:
    names = draw(st.lists(st.sampled_from(sorted(rules.currencies)), min_size=1, unique=True))
    return {name: draw(quote_for(rules, name)) for name in names}


@st.composite
def splits(draw: st.DrawFn, rules: PaymentRules, merchant_id: str) -> list[dict[str, Any]]:
    total = rules.profile.splits.max_total_bps
    others = [m for m in rules.profile.split_merchants if m != merchant_id]
    if not others or total < 1:
        return []
    chosen = draw(st.lists(st.sampled_from(others), max_size=len(others), unique=True))
    if not chosen:
        return []
    share = max(1, total // len(chosen))
    return [
        {"type": "percentage", "merchant_id": m, "bps": draw(st.integers(1, share))} for m in chosen
    ]


def expires_in(rules: PaymentRules) -> st.SearchStrategy[int | None]:
    limits = rules.expires_in
    low = min(limits.max, max(limits.min, MACHINE_MIN_LIFETIME_SECS))
    return st.one_of(st.none(), st.integers(low, limits.max), st.just(limits.max))
