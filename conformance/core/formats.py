"""The one meaning of each ``format`` of the contract: ``date-time``, ``uri``, ``int32``, ``int64``.

- ``date-time``: RFC 3339 section 5.6, ASCII digits, ``T``/``Z`` in either case, with the field
  ranges of section 5.7 (month days, leap years, offsets up to ``23:59``) and a leap second
  (``:60``) only in the last minute of a UTC day. Years ``0000`` to ``9999``, as the grammar says.
- ``uri``: an absolute URI, ``scheme ":" rest``, the rest non-empty, made of RFC 3986 characters,
  each ``%`` starting an escape of two hex digits.
- ``int32``, ``int64``: the number is in the signed range. ``60.0`` is the integer ``60`` (JSON
  Schema, and the default profile's ``integer_accepts_float_form``), so an integer-valued float
  is judged by its value; whether a non-integral number is an integer is ``type``'s business.

``unreadable`` is the one meaning of a query value or path segment that is no text (a malformed
percent-escape, or bytes that are not UTF-8): the reference server refuses it, the boundaries
family sends it, the validator expects it refused. A malformed escape (a ``%`` not followed by
two hex digits) may instead be read literally, as the profile's
``status.malformed_percent_escape`` allows: ``literal=True`` reads it so (``as_literal`` gives the
same value well-formed, ``usdc%zz`` -> ``usdc%25zz``).

A format judges only the values of its own type: any other value conforms (JSON Schema). The
reference server validates requests with ``format_checker()``, the suite checks responses and keeps
its boundary cases with it, the validator checks recorded exchanges with it.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from functools import partial
from typing import Final
from urllib.parse import unquote_to_bytes

from jsonschema import FormatChecker

STRING_FORMATS: Final = ("uri", "date-time")
INTEGER_RANGES: Final = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
FORMATS: Final = (*STRING_FORMATS, *INTEGER_RANGES)

_DATE_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))"
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_URI_REST = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+")
_LAST_MINUTE_OF_DAY: Final = 23 * 60 + 59
_EPOCH_ORDINAL: Final = date(1970, 1, 1).toordinal()
_FOUR_YEARS: Final = 3 * 365 + 366


def _days_in(year: int, month: int) -> int:
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]


def is_date_time(text: str) -> bool:
    """Whether ``text`` is an RFC 3339 ``date-time`` (``2026-11-22T10:04:11Z``)."""
    found = _DATE_TIME.fullmatch(text)
    if found is None:
        return False
    year, month, day, hour, minute, second = (int(found.group(i)) for i in range(1, 7))
    if not 1 <= month <= 12 or not 1 <= day <= _days_in(year, month):
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    sign, offset_hour, offset_minute = found.group(8, 9, 10)
    offset = 0
    if sign is not None:
        if int(offset_hour) > 23 or int(offset_minute) > 59:
            return False
        offset = (int(offset_hour) * 60 + int(offset_minute)) * (-1 if sign == "-" else 1)
    if second == 60:  # leap seconds are inserted at the end of a UTC day
        return (hour * 60 + minute - offset) % (24 * 60) == _LAST_MINUTE_OF_DAY
    return True


def parse_date_time(text: object) -> datetime | None:
    """The aware UTC datetime of an RFC 3339 ``date-time`` (``is_date_time``), else None.

    Fractions finer than a microsecond are cut. A leap second (``23:59:60Z``) is the instant the
    next day starts, as on POSIX clocks. Instants outside datetime's range (year 0000, year 1 with
    a positive offset, year 9999 with a negative one) are the nearest representable instant.
    """
    if not isinstance(text, str) or not is_date_time(text):
        return None
    normalised = text.upper().replace("Z", "+00:00")
    leap = normalised[17:19] == "60"
    if leap:
        normalised = normalised[:17] + "59" + normalised[19:]
    if normalised.startswith("0000"):
        return datetime.min.replace(tzinfo=UTC)
    parsed = datetime.fromisoformat(normalised)
    try:
        return parsed.astimezone(UTC) + timedelta(seconds=1 if leap else 0)
    except OverflowError:
        return (
            datetime.min.replace(tzinfo=UTC)
            if parsed.year == 1
            else datetime.max.replace(tzinfo=UTC)
        )


def epoch_seconds(text: object) -> Decimal | None:
    """Exact seconds since the epoch of an RFC 3339 ``date-time`` (every fraction digit kept, a
    leap second counted as the next day's first), else None."""
    if not isinstance(text, str) or not is_date_time(text):
        return None
    found = _DATE_TIME.fullmatch(text)
    assert found is not None  # is_date_time matched it
    year, month, day, hour, minute, second = (int(found.group(i)) for i in range(1, 7))
    # year 0000 (a leap year, proleptic Gregorian) is four years before year 0004
    days = date(year or 4, month, day).toordinal() - (_FOUR_YEARS if year == 0 else 0)
    whole = (days - _EPOCH_ORDINAL) * 86400 + hour * 3600 + minute * 60 + second
    fraction = Decimal("0." + found.group(7)) if found.group(7) else Decimal(0)
    sign, offset_hour, offset_minute = found.group(8, 9, 10)
    offset = 0
    if sign is not None:
        offset = (int(offset_hour) * 3600 + int(offset_minute) * 60) * (-1 if sign == "-" else 1)
    return Decimal(whole - offset) + fraction


def is_absolute_uri(text: str) -> bool:
    """Whether ``text`` is an absolute URI (``https://example.com/return``)."""
    scheme, sep, rest = text.partition(":")
    if not sep or _SCHEME.fullmatch(scheme) is None:
        return False
    return _URI_REST.fullmatch(rest) is not None


def in_integer_range(name: str, value: int | float) -> bool:
    """Whether the integer ``value`` (``60`` or ``60.0``) fits the ``int32``/``int64`` range."""
    low, high = INTEGER_RANGES[name]
    return low <= value <= high


def conforms(format: str, value: object) -> bool:
    """Whether ``value`` has the contract's ``format`` (a format the contract does not use, or a
    value of another type than the format's, conforms: the format does not judge it)."""
    if format == "date-time":
        return not isinstance(value, str) or is_date_time(value)
    if format == "uri":
        return not isinstance(value, str) or is_absolute_uri(value)
    if format in INTEGER_RANGES:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return True
        if isinstance(value, float) and not value.is_integer():
            return True
        return in_integer_range(format, value)
    return True


def format_checker() -> FormatChecker:
    """A jsonschema ``FormatChecker`` that knows the contract's formats and only those."""
    checker = FormatChecker(formats=())
    for name in FORMATS:
        checker.checks(name)(partial(conforms, name))
    return checker


# A "%" not followed by two hex digits: ``unquote`` would keep it as text, so "%zz" would be read
# as the three characters "%zz" instead of refused as a malformed parameter (profile 3).
_MALFORMED_ESCAPE = re.compile("%(?![0-9A-Fa-f]{2})")


MALFORMED_ESCAPE: Final = "has a malformed percent-escape"


def has_malformed_escape(raw: str) -> bool:
    """Whether ``raw`` (as sent, still percent-encoded) has a "%" not followed by two hex digits."""
    return _MALFORMED_ESCAPE.search(raw) is not None


def as_literal(raw: str) -> str:
    """``raw`` with each malformed "%" escaped as ``%25``: the text a literal reading sees, sent
    well-formed."""
    return _MALFORMED_ESCAPE.sub("%25", raw)


def unreadable(raw: str, *, literal: bool = False) -> str | None:
    """Why ``raw`` (a path segment or query value as sent, still percent-encoded) is no text:
    a malformed percent-escape (unless ``literal``: then read as the text it is), or escapes
    that decode to bytes that are not UTF-8; else None."""
    if has_malformed_escape(raw):
        if not literal:
            return MALFORMED_ESCAPE
        raw = as_literal(raw)
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return "is not UTF-8 once percent-decoded"
    return None
