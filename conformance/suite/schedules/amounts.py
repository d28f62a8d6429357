"""Decimal amounts for a currency's decimals, as strategies: valid ones with their raw value,
and ones with more fraction digits than the currency has."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

MAX_UNITS = 10**9  # whole units; far below any raw-digit limit


@dataclass(frozen=True)
class Amount:
    text: str
    raw: int  # text times 10**decimals


def decimal_text(raw: int, decimals: int, digits: int) -> str:
    """``raw`` smallest units written with ``digits`` fraction digits (``digits`` at least the
    significant ones): ``decimal_text(1500000, 6, 2) == "1.50"``."""
    whole, fraction = divmod(raw, 10**decimals)
    fraction_text = str(fraction).rjust(decimals, "0")[:digits] if digits else ""
    return f"{whole}.{fraction_text}" if digits else str(whole)


def _significant_digits(raw: int, decimals: int) -> int:
    fraction = str(raw % 10**decimals).rjust(decimals, "0").rstrip("0") if decimals else ""
    return len(fraction)


@st.composite
def amounts(draw: st.DrawFn, decimals: int) -> Amount:
    """A positive amount with at most ``decimals`` fraction digits (trailing zeros allowed)."""
    whole = draw(st.integers(0, MAX_UNITS))
    fraction = draw(st.integers(0, 10**decimals - 1)) if decimals else 0
    raw = whole * 10**decimals + fraction
    if raw == 0:
        raw = 1
    least = _significant_digits(raw, decimals)
    digits = draw(st.integers(least, decimals)) if decimals else 0
    return Amount(decimal_text(raw, decimals, digits), raw)


@st.composite
def too_precise(draw: st.DrawFn, decimals: int) -> str:
    """An amount with one to three fraction digits more than ``decimals``, the last not 0."""
    whole = draw(st.integers(0, MAX_UNITS))
    extra = draw(st.integers(1, 3))
    head = draw(st.integers(0, 10 ** (decimals + extra - 1) - 1))
    last = draw(st.integers(1, 9))
    fraction = str(head).rjust(decimals + extra - 1, "0") + str(last)
    return f"{whole}.{fraction}"
