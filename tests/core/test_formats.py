"""``core.formats``: one meaning of each format, and every side of the project gives it.

The reference server validates requests, the suite checks responses and keeps its boundary cases,
the validator checks recorded exchanges: each with the contract's formats. For every value they
give the same answer, and it is ``conforms``. Values are generated around each format: valid
ones, near misses, leap seconds, offsets like ``+05:60``, year ``0000``, URIs with control
characters or no hierarchical part (``https:``), integers at and beyond each range, also written
as floats (``1.0``, ``1e3``, ``2147483648.0``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conformance.core.formats import (
    FORMATS,
    INTEGER_RANGES,
    conforms,
    epoch_seconds,
    format_checker,
    parse_date_time,
    unreadable,
)
from conformance.judge.constraints import satisfies
from conformance.judge.fastschema import compile_schema
from conformance.judge.response_schemas import ResponseSchemas, SchemaValidator
from conformance.reference.validation import RequestInvalid, check_value

TYPES = {"date-time": "string", "uri": "string", "int32": "integer", "int64": "integer"}


def schema_of(name: str) -> dict[str, Any]:
    """The schema of a field with the format, as the contract writes it."""
    return {"type": TYPES[name], "format": name}


@cache
def response_schemas(name: str) -> ResponseSchemas:
    """A contract whose one operation answers a value of the format."""
    media = {"application/json": {"schema": schema_of(name)}}
    operation = {"operationId": "probe", "responses": {"200": {"content": media}}}
    return ResponseSchemas({"paths": {"/probe": {"get": operation}}})


def reference_server_accepts(name: str, value: Any) -> bool:
    try:
        check_value(schema_of(name), value, "value")
    except RequestInvalid:
        return False
    return True


def suite_responses_accept(name: str, value: Any) -> bool:
    return response_schemas(name).problems("probe", 200, value) == []


def boundaries_accept(name: str, value: Any) -> bool:
    return satisfies(schema_of(name), value)


SIDES: dict[str, Callable[[str, Any], bool]] = {
    "reference server": reference_server_accepts,
    "suite responses": suite_responses_accept,
    "boundaries": boundaries_accept,
}

# ----------------------------------------------------------------------------- generated values
_ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def _two_digits(low: int, high: int, *likely: int) -> st.SearchStrategy[str]:
    return (st.sampled_from(likely) | st.integers(low, high)).map("{:02d}".format)


_OFFSETS = st.sampled_from(
    ["Z", "z", "", "+00:00", "-00:00", "+05:30", "-08:00", "+05:60", "+24:00", "+23:59", "+0530"]
) | st.builds(
    "{}{:02d}:{:02d}".format, st.sampled_from("+-"), st.integers(0, 25), st.integers(0, 61)
)

DATE_TIME_TEXT = st.builds(
    "{}-{}-{}{}{}:{}:{}{}{}".format,
    st.sampled_from(["0000", "0001", "1990", "2024", "2100", "9999"])
    | st.integers(0, 9999).map("{:04d}".format),
    _two_digits(0, 13, 1, 2, 12, 13),
    _two_digits(0, 32, 1, 28, 29, 30, 31),
    st.sampled_from(["T", "t", " "]),
    _two_digits(0, 24, 23, 15, 0, 24),
    _two_digits(0, 60, 59, 0, 60),
    _two_digits(0, 61, 59, 60, 61),
    st.sampled_from(["", ".5", ".123456", ".1234567", "."]),
    _OFFSETS,
)
DATE_TIMES = st.builds(
    lambda text, mutate: mutate(text),
    DATE_TIME_TEXT,
    st.sampled_from(
        [
            lambda v: v,
            lambda v: v + "\n",
            lambda v: " " + v,
            lambda v: v.translate(_ARABIC_INDIC),
            lambda v: v[:10],
        ]
    ),
)

_URI_CHARACTERS = "aZ09-._~:/?#[]@!$&'()*+,;=% \t\n\x00\x01\x7f<>\"\\^`{|}é٣"
_URI_RESTS = (
    *("", "//example.com", "//example.com/a?b=c#d", "//[::1]:8080/x", "isbn:0451450523"),
    *("//a/%41", "//a/%zz", "//a/%4", "//a b", "//a\x01b", "//aé", "//a\n", "//a<b>"),
)
URIS = st.builds(
    "{}{}{}".format,
    st.sampled_from(["https", "http", "urn", "HTTPS", "h+t.p-s", "1http", "", "ht tp", "ht_tp"]),
    st.sampled_from([":", ":", ""]),
    st.sampled_from(_URI_RESTS) | st.text(_URI_CHARACTERS, max_size=12),
)

_EDGES = [0, 1, -1]
_EDGES += [edge + step for r in INTEGER_RANGES.values() for edge in r for step in (-1, 0, 1)]
_INTEGERS = st.sampled_from(_EDGES) | st.integers() | st.integers(-(2**70), 2**70)
NUMBERS = (
    _INTEGERS
    | _INTEGERS.map(float)
    | st.sampled_from([1.0, 1e3, 1.5, -0.0, 0.5, 1e10, 1e19, -1e19])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.booleans()
)
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "date-time": DATE_TIMES,
    "uri": URIS,
    "int32": NUMBERS,
    "int64": NUMBERS,
}
FORMATTED = st.sampled_from(FORMATS).flatmap(lambda name: st.tuples(st.just(name), VALUES[name]))


# ----------------------------------------------------------------------------- agreement
@settings(max_examples=400)
@given(FORMATTED)
@example(("int32", 2147483648.0))  # the suite's responses took it: a float was not judged
@example(("int64", 1e19))
@example(("int32", 2**31))  # the boundaries did not judge int32/int64 at all
@example(("uri", "https:"))  # the boundaries took it: no character after the scheme
@example(("uri", "https://a/%zz"))  # the suite's responses and the boundaries took it
@example(("uri", "https://a\x01b"))  # the suite's responses took a control character
@example(("uri", "https://aé"))  # ... and a non-ASCII one
@example(("date-time", "1998-12-31T23:59:60Z"))  # the reference server refused leap seconds
@example(("date-time", "1998-12-31T15:59:60-08:00"))
@example(("date-time", "2026-01-01T00:00:00+05:60"))  # only the boundaries refused it
@example(("date-time", "0000-01-01T00:00:00Z"))  # only the boundaries took year 0000
def test_the_reference_server_the_suite_and_the_boundaries_agree_on_every_value(
    formatted: tuple[str, Any],
) -> None:
    name, value = formatted
    answers = {side: accepts(name, value) for side, accepts in SIDES.items()}
    assert len(set(answers.values())) == 1, (name, value, answers)


@settings(max_examples=200)
@given(FORMATTED)
def test_every_side_gives_the_meaning_of_core_formats(formatted: tuple[str, Any]) -> None:
    name, value = formatted
    valid = isinstance(value, str) if TYPES[name] == "string" else _is_integer(value)
    meaning = valid and conforms(name, value)
    assert {side: accepts(name, value) for side, accepts in SIDES.items()} == dict.fromkeys(
        SIDES, meaning
    )


@settings(max_examples=200)
@given(FORMATTED)
def test_the_validator_checks_recorded_values_with_the_same_meaning(
    formatted: tuple[str, Any],
) -> None:
    name, value = formatted
    schema = {"format": name}
    fast = compile_schema(schema, format_checker())
    assert fast is not None
    full = SchemaValidator(schema, format_checker=format_checker())
    assert fast(value) is full.is_valid(value) is conforms(name, value)


def _is_integer(value: Any) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer()
    )


# ----------------------------------------------------------------------------- the meaning
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("date-time", "2026-11-22T10:04:11Z"),
        ("date-time", "2026-11-22t10:04:11.123456789z"),
        ("date-time", "2026-11-22T12:04:11+02:00"),
        ("date-time", "2026-11-22T10:04:11-00:00"),
        ("date-time", "2024-02-29T00:00:00+23:59"),
        ("date-time", "0000-02-29T00:00:00Z"),  # RFC 3339's years start at 0000, a leap year
        ("date-time", "1998-12-31T23:59:60Z"),  # a leap second ends a UTC day
        ("date-time", "1998-12-31T15:59:60-08:00"),  # the same instant written in UTC-8
        ("uri", "https://example.com/a?b=c#d"),
        ("uri", "urn:isbn:0451450523"),
        ("uri", "http://[::1]:8080/x"),
        ("uri", "https://example.com/%41"),
        ("int32", 2**31 - 1),
        ("int32", -(2**31)),
        ("int32", 1.0),  # 1.0 is the integer 1
        ("int32", 1e3),
        ("int64", 2**63 - 1),
        ("int64", 9.2e18),
        ("int32", "12"),  # a format judges only values of its own type
        ("date-time", 12),
        ("email", "not judged"),  # a format the contract does not use is an annotation
    ],
)
def test_conforming_values(name: str, value: Any) -> None:
    assert conforms(name, value)
    assert format_checker().conforms(value, name)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("date-time", "2026-11-22T10:04:11"),  # no time zone
        ("date-time", "2026-11-22 10:04:11Z"),
        ("date-time", "2026-11-22T10:04:11+0200"),
        ("date-time", "2026-11-22T10:04:11Z\n"),
        ("date-time", "2023-02-29T00:00:00Z"),
        ("date-time", "2026-13-01T00:00:00Z"),
        ("date-time", "2026-11-22T24:00:00Z"),
        ("date-time", "2026-11-22T10:04:11+05:60"),
        ("date-time", "2026-11-22T10:04:11+24:00"),
        ("date-time", "1998-12-31T23:59:61Z"),
        ("date-time", "1998-12-31T23:58:60Z"),  # a leap second only in a day's last minute
        ("date-time", "2024-02-29T23:59:60+05:30"),  # 18:29:60 UTC
        ("date-time", "٢٠٢٦-11-22T10:04:11Z"),  # ASCII digits only
        ("uri", "https:"),
        ("uri", "example.com/path"),
        ("uri", "/relative"),
        ("uri", "1http://x"),
        ("uri", "https://exa mple.com"),
        ("uri", "https://example.com/%zz"),
        ("uri", "https://a\x01b"),
        ("uri", "https://example.com/é"),
        ("int32", 2**31),
        ("int32", 2147483648.0),
        ("int32", -(2**31) - 1),
        ("int64", 2**63),
        ("int64", 1e19),
    ],
)
def test_values_that_do_not_conform(name: str, value: Any) -> None:
    assert not conforms(name, value)
    assert not format_checker().conforms(value, name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-22T10:04:11Z", datetime(2026, 11, 22, 10, 4, 11, tzinfo=UTC)),
        ("2026-11-22t10:04:11z", datetime(2026, 11, 22, 10, 4, 11, tzinfo=UTC)),
        ("2026-11-22T12:04:11+02:00", datetime(2026, 11, 22, 10, 4, 11, tzinfo=UTC)),
        ("2026-11-22T10:04:11.5Z", datetime(2026, 11, 22, 10, 4, 11, 500000, tzinfo=UTC)),
        ("2026-11-22T10:04:11.1234567Z", datetime(2026, 11, 22, 10, 4, 11, 123456, tzinfo=UTC)),
        # a leap second is the instant the next day starts, as on POSIX clocks
        ("1998-12-31T23:59:60Z", datetime(1999, 1, 1, tzinfo=UTC)),
        ("1998-12-31T15:59:60-08:00", datetime(1999, 1, 1, tzinfo=UTC)),
    ],
)
def test_date_times_parse_to_utc(text: str, expected: datetime) -> None:
    assert parse_date_time(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-22",
        "2026-11-22T10:04:11",
        "2026-11-22 10:04:11Z",
        "2026-13-01T00:00:00Z",
        "2026-11-22T10:04:11Z\n",
        "tomorrow",
        "2026-02-30T00:00:00Z",
    ],
)
def test_what_is_not_a_date_time_parses_to_none(text: str) -> None:
    assert parse_date_time(text) is None


def test_instants_just_outside_datetimes_range_are_clamped_not_crashed() -> None:
    assert parse_date_time("0001-01-01T00:00:00+01:00") == datetime.min.replace(tzinfo=UTC)
    assert parse_date_time("0000-06-01T12:00:00Z") == datetime.min.replace(tzinfo=UTC)
    assert parse_date_time("9999-12-31T23:59:59-01:00") == datetime.max.replace(tzinfo=UTC)
    assert parse_date_time("9999-12-31T23:59:60Z") == datetime.max.replace(tzinfo=UTC)


@given(DATE_TIMES)
def test_every_date_time_the_contract_accepts_is_parsed(text: str) -> None:
    """The handlers read what validation let through: no valid date-time is lost."""
    assert (parse_date_time(text) is not None) is conforms("date-time", text)


def test_epoch_seconds_are_exact_whatever_the_precision_and_offset() -> None:
    assert epoch_seconds("1970-01-01T00:00:01Z") == 1
    assert epoch_seconds("1970-01-01T01:00:00.000000001+01:00") == Decimal("0.000000001")
    assert epoch_seconds("2026-11-22T10:04:11.5z") == epoch_seconds("2026-11-22T12:04:11.500+02:00")
    assert epoch_seconds("1998-12-31T23:59:60Z") == epoch_seconds("1999-01-01T00:00:00Z")
    assert epoch_seconds("0000-01-01T00:00:00Z") == Decimal(-62167219200)
    assert epoch_seconds("2026-11-22 10:04:11Z") is None
    assert epoch_seconds("2026-11-22T10:04:11+05:60") is None
    assert epoch_seconds(1763805851) is None


@given(DATE_TIMES)
def test_epoch_seconds_and_the_parsed_instant_agree(text: str) -> None:
    """The exact reading (statements, the validator) and the datetime one (the reference server,
    the schedules and payments families) are one meaning: same values, same refusals."""
    exact, moment = epoch_seconds(text), parse_date_time(text)
    assert (exact is None) is (moment is None) is (not conforms("date-time", text))
    if exact is not None and moment is not None and 1 < moment.year < 9999:
        # timedelta arithmetic is exact; a float timestamp loses microseconds far from 1970
        since = moment - datetime(1970, 1, 1, tzinfo=UTC)
        seconds = Decimal(since.days * 86400 + since.seconds) + Decimal(since.microseconds) / 10**6
        assert abs(exact - seconds) < Decimal("0.000001")


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("50%off", "has a malformed percent-escape"),
        ("%4", "has a malformed percent-escape"),
        ("%FF%FE", "is not UTF-8 once percent-decoded"),
        ("%C0%AF", "is not UTF-8 once percent-decoded"),
        ("50%25off", None),
        ("caf%C3%A9", None),
    ],
)
def test_a_query_value_or_path_segment_is_text_or_says_why_not(
    raw: str, problem: str | None
) -> None:
    assert unreadable(raw) == problem
