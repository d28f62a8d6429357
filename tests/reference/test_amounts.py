"""Decimal strings to raw integers and back to the canonical form, never through a float."""

from __future__ import annotations

import pytest

from conformance.reference.amounts import fraction_digits, is_decimal_string, normalise, to_raw


@pytest.mark.parametrize(
    ("text", "decimals", "raw"),
    [("1", 6, 1_000_000), ("1.5", 6, 1_500_000), ("0.000001", 6, 1), ("0.5", 18, 5 * 10**17)],
)
def test_to_raw(text: str, decimals: int, raw: int) -> None:
    assert to_raw(text, decimals) == raw


def test_to_raw_is_exact_beyond_float_precision() -> None:
    assert to_raw("123456789012345678901234567890.123456789012345678", 18) == int(
        "123456789012345678901234567890123456789012345678"
    )


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("25.00", "25"),
        ("1.50", "1.5"),
        ("0", "0"),
        ("0.000", "0"),
        ("10", "10"),
        ("1" * 40, "1" * 40),
    ],
)
def test_normalise(text: str, canonical: str) -> None:
    assert normalise(text) == canonical


def test_fraction_digits_and_decimal_strings() -> None:
    assert fraction_digits("1.1234567") == 7
    assert fraction_digits("12") == 0
    assert is_decimal_string("0.5") and not is_decimal_string("00.5")
