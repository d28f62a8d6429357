"""Every pattern of the document is anchored, ASCII-only, and accepts exactly the right strings.

JSON Schema patterns have ECMA-262 semantics: ``$`` is the end of the string. Python's
``re.search`` (which stock ``jsonschema`` uses) also lets ``$`` match before a trailing newline,
so the strings are checked with ``re.fullmatch`` on the pattern body and with a Draft 2020-12
validator whose ``pattern`` keyword has that meaning.
"""

from __future__ import annotations

import re

import jsonschema
import pytest

from conformance.core.contract import effective_contract
from conformance.core.profile import load_profile
from tests.openapi.support import (
    document,
    ecma_fullmatch,
    schema_validator,
    walk,
)

DOC = document()
DECIMAL = "^(0|[1-9][0-9]*)(\\.[0-9]+)?$"
RAW = "^(0|[1-9][0-9]*)$"

DECIMAL_ACCEPTED = ["0", "10", "1.5", "0.000001", "0.0", "123456789.123456789"]
DECIMAL_REJECTED = [
    "01",
    "1.",
    ".5",
    "-1",
    "+1",
    "1e5",
    " 1",
    "1 ",
    "1\n",
    "1.5\n",
    "\u0661",  # ARABIC-INDIC DIGIT ONE
    "\uff11",  # FULLWIDTH DIGIT ONE
    "",
    "1,5",
    "1.5.5",
    "0x10",
]
RAW_ACCEPTED = ["0", "10", "1", "115792089237316195423570985008687907853269984665640564039457"]
RAW_REJECTED = [
    "01",
    "00",
    "1.5",
    "1.",
    ".5",
    "-1",
    "1e5",
    " 1",
    "1 ",
    "1\n",
    "\u0661",
    "",
]


def _patterns(doc: dict[str, object]) -> list[tuple[str, str]]:
    return [
        (pointer, node["pattern"])
        for pointer, node in walk(doc)
        if isinstance(node, dict) and isinstance(node.get("pattern"), str)
    ]


def test_the_document_and_the_effective_contract_have_patterns() -> None:
    assert {p for _, p in _patterns(DOC)} >= {DECIMAL, RAW}


@pytest.mark.parametrize(
    "source", ["document", "effective contract"], ids=["document", "effective"]
)
def test_every_pattern_is_anchored_ascii_and_compiles(source: str) -> None:
    doc = DOC if source == "document" else effective_contract(load_profile())
    for pointer, pattern in _patterns(doc):
        assert pattern.startswith("^") and pattern.endswith("$"), pointer
        assert "\\d" not in pattern and "\\w" not in pattern, pointer
        re.compile(pattern)


def test_the_amount_schemas_use_the_two_stated_patterns() -> None:
    schemas = DOC["components"]["schemas"]
    assert schemas["DecimalAmount"]["pattern"] == DECIMAL
    assert schemas["RawAmount"]["pattern"] == RAW


@pytest.mark.parametrize("text", DECIMAL_ACCEPTED)
def test_decimal_pattern_accepts(text: str) -> None:
    assert ecma_fullmatch(DECIMAL, text)
    assert schema_validator(DOC, "DecimalAmount").is_valid(text)


@pytest.mark.parametrize("text", DECIMAL_REJECTED)
def test_decimal_pattern_rejects(text: str) -> None:
    assert not ecma_fullmatch(DECIMAL, text)
    assert not schema_validator(DOC, "DecimalAmount").is_valid(text)


@pytest.mark.parametrize("text", RAW_ACCEPTED)
def test_raw_pattern_accepts(text: str) -> None:
    assert ecma_fullmatch(RAW, text)
    assert schema_validator(DOC, "RawAmount").is_valid(text)


@pytest.mark.parametrize("text", RAW_REJECTED)
def test_raw_pattern_rejects(text: str) -> None:
    assert not ecma_fullmatch(RAW, text)
    assert not schema_validator(DOC, "RawAmount").is_valid(text)


def test_stock_jsonschema_differs_only_on_a_trailing_newline() -> None:
    """Why the ECMA validator is needed: Python's ``$`` matches before a final newline."""
    stock = schema_validator(DOC, "DecimalAmount", ecma=False)
    assert stock.is_valid("1\n"), "if this fails, stock jsonschema gained ECMA semantics"
    assert [t for t in DECIMAL_REJECTED if stock.is_valid(t)] == ["1\n", "1.5\n"]


def test_length_limits_hold_together_with_the_patterns() -> None:
    decimal = schema_validator(DOC, "DecimalAmount")
    raw = schema_validator(DOC, "RawAmount")
    assert decimal.is_valid("1" * 128)
    assert not decimal.is_valid("1" * 129)
    assert raw.is_valid("9" * 78)
    assert not raw.is_valid("9" * 79)


def test_digit_strings_accept_only_ascii_digits() -> None:
    digits = schema_validator(DOC, "DigitString")
    assert digits.is_valid("0") and digits.is_valid("000123")
    for text in ("", "1.0", "-1", "1\n", "\u0661", " 1"):
        assert not digits.is_valid(text), text


def test_non_strings_are_rejected_by_type_not_by_pattern() -> None:
    decimal = schema_validator(DOC, "DecimalAmount")
    errors = list(decimal.iter_errors(15))
    assert [e.validator for e in errors] == ["type"]
    assert isinstance(errors[0], jsonschema.ValidationError)
