"""``jsonsafe.loads``: json.loads for untrusted text, refusing deep or huge documents first."""

from __future__ import annotations

import json
import pickle
import time
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from conformance.core import jsonsafe
from conformance.core.jsonsafe import JsonTooComplex

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    return 0


@given(JSON_VALUES, st.booleans())
def test_agrees_with_json_loads_on_documents_within_the_limits(value: Any, ascii_: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_)
    assert jsonsafe.loads(text, max_depth=max(depth_of(value), 1)) == json.loads(text)
    assert jsonsafe.loads(text.encode("utf-16")) == json.loads(text.encode("utf-16"))


def same_json(left: Any, right: Any) -> bool:
    """Equal as JSON values, NaN included (``nan != nan``, yet both parsed the same text)."""
    return repr(left) == repr(right) and type(left) is type(right)


@given(st.text(max_size=200))
@example("NaN")
@example("[-Infinity, NaN]")
def test_agrees_with_json_loads_on_any_short_text(text: str) -> None:
    try:
        expected: Any = json.loads(text)
    except ValueError as exc:
        with pytest.raises(ValueError) as raised:
            jsonsafe.loads(text)
        assert type(raised.value) is type(exc)
    else:
        assert same_json(jsonsafe.loads(text), expected)


@given(st.integers(min_value=1, max_value=40), st.integers(min_value=1, max_value=40))
def test_refuses_exactly_the_documents_deeper_than_the_limit(depth: int, limit: int) -> None:
    text = "[" * depth + "]" * depth
    if depth > limit:
        with pytest.raises(JsonTooComplex, match=f"nests deeper than {limit} levels"):
            jsonsafe.loads(text, max_depth=limit)
    else:
        assert depth_of(jsonsafe.loads(text, max_depth=limit)) == depth


@given(st.lists(st.sampled_from(["[", "{", '"a":', "1,", "]", "}"]), min_size=300))
def test_refuses_garbage_that_opens_too_many_levels_without_parsing_it(parts: list[str]) -> None:
    text = "[" * 300 + "".join(parts)
    with pytest.raises(JsonTooComplex):
        jsonsafe.loads(text)


def test_seventy_thousand_brackets_are_refused_at_once() -> None:
    started = time.perf_counter()
    with pytest.raises(JsonTooComplex) as raised:
        jsonsafe.loads(b"[" * 70_000)
    assert time.perf_counter() - started < 0.5
    assert str(raised.value) == "JSON text nests deeper than 256 levels"
    assert raised.value.pos == 256
    assert isinstance(raised.value, ValueError)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps(["[" * 1000, {"{{{": ']]]\\"[[['}, '\\"' + "{" * 500])
    assert jsonsafe.loads(text, max_depth=2) == json.loads(text)


def test_escaped_quotes_do_not_end_a_string() -> None:
    text = '["\\"[[[[", "\\\\", [[1]]]'
    assert jsonsafe.loads(text, max_depth=3) == json.loads(text)
    with pytest.raises(JsonTooComplex):
        jsonsafe.loads(text, max_depth=2)


def test_an_unterminated_string_full_of_escaped_quotes_is_scanned_in_linear_time() -> None:
    text = "[" * 300 + '"' + '\\"' * 500_000
    started = time.perf_counter()
    assert jsonsafe.nesting_depth_exceeds(text[300:] + "[" * 300, 256) is None
    with pytest.raises(JsonTooComplex):
        jsonsafe.loads(text)
    with pytest.raises(json.JSONDecodeError):
        jsonsafe.loads('"' + '\\"[' * 500_000)
    assert time.perf_counter() - started < 5


def test_refuses_a_document_larger_than_the_size_cap() -> None:
    with pytest.raises(JsonTooComplex, match="larger than 10 bytes"):
        jsonsafe.loads(b'"' + b"x" * 20 + b'"', max_bytes=10)
    with pytest.raises(JsonTooComplex, match="larger than 10 bytes"):
        jsonsafe.loads('"' + "é" * 5 + '"', max_bytes=10)  # 12 bytes in UTF-8
    assert jsonsafe.loads('"' + "x" * 8 + '"', max_bytes=10) == "x" * 8


def test_passes_keyword_arguments_to_json_loads() -> None:
    pairs: list[tuple[str, Any]] = []
    jsonsafe.loads('{"a": 1, "a": 2}', object_pairs_hook=pairs.extend)
    assert pairs == [("a", 1), ("a", 2)]


def test_the_refusal_survives_pickling_like_any_json_error() -> None:
    error = pickle.loads(pickle.dumps(JsonTooComplex("JSON text nests deeper", "[[", 1)))
    assert isinstance(error, JsonTooComplex)
    assert str(error) == "JSON text nests deeper"
