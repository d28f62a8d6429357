"""JSON Schema patterns are ECMA-262: the server and the suite must read them that way."""

from __future__ import annotations

from conformance.core.patterns import ecma_search

RAW = "^(0|[1-9][0-9]*)$"


def test_dollar_is_the_end_of_input_not_before_a_trailing_newline() -> None:
    assert ecma_search(RAW, "10")
    assert not ecma_search(RAW, "10\n")


def test_digit_escapes_match_ascii_digits_only() -> None:
    assert ecma_search("^\\d+$", "123")
    assert not ecma_search("^\\d+$", "١٢٣")
    assert not ecma_search("^[\\d.]+$", "٣.٤")


def test_a_dollar_inside_a_class_or_escaped_is_a_literal() -> None:
    assert ecma_search("^[$]$", "$")
    assert ecma_search("^a\\$$", "a$")
    assert not ecma_search("^a\\$$", "a")


def test_an_unanchored_pattern_searches_anywhere() -> None:
    assert ecma_search("[0-9]", "abc1")
    assert not ecma_search("^[0-9]", "abc1")
