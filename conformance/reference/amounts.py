"""Decimal amount strings and raw integer amounts. Never a float."""

from __future__ import annotations

from conformance.core.patterns import ecma_search

DECIMAL_PATTERN = r"^(0|[1-9][0-9]*)(\.[0-9]+)?$"
RAW_PATTERN = r"^(0|[1-9][0-9]*)$"


def is_decimal_string(text: str) -> bool:
    return ecma_search(DECIMAL_PATTERN, text)


def fraction_digits(text: str) -> int:
    return len(text.partition(".")[2])


def to_raw(text: str, decimals: int) -> int:
    """``to_raw("1.5", 6)`` -> ``1500000``. ``text`` is a decimal string with at most
    ``decimals`` fraction digits (check ``fraction_digits`` first)."""
    whole, _, fraction = text.partition(".")
    return int(whole) * int(10**decimals) + int(fraction.ljust(decimals, "0") or "0")


def normalise(text: str) -> str:
    """The canonical form of a decimal string: no trailing fraction zeros
    (``"25.00"`` -> ``"25"``, ``"1.50"`` -> ``"1.5"``)."""
    whole, _, fraction = text.partition(".")
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


def is_decimal_by_isdecimal(text: str) -> bool:
    """The check of fault ``validation-amount-unicode-digits``: ``str.isdecimal`` holds for every
    Unicode decimal digit (Arabic-Indic ``"١٠"``...), not only 0-9."""
    whole, dot, fraction = text.partition(".")
    if not whole.isdecimal() or (whole != "0" and whole.startswith("0")):
        return False
    return not dot or fraction.isdecimal()
