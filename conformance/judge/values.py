"""Reading the values of JSON documents and queries the way every rule reads them."""

from __future__ import annotations

import json
from typing import TypeGuard
from urllib.parse import parse_qsl

canonical = json.JSONEncoder(sort_keys=True).encode
"""A JSON document as text with its keys sorted (``json.dumps(value, sort_keys=True)``, one
encoder for every call): equal documents give equal texts, to compare or digest."""


def json_int(value: object) -> int | None:
    """An integer of a JSON document (60 and 60.0 alike), None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def query_int(text: str | None) -> int | None:
    """An integer of a query (``20``, ``20.0``), None for anything else."""
    if text is None:
        return None
    whole, dot, zeros = text.partition(".")
    if not whole.isdigit() or (dot and set(zeros) - {"0"}):
        return None
    return int(whole)


def first_values(raw_query: str) -> dict[str, str]:
    """A query's parameters (escapes decoded), the first value of each, as the rules read it."""
    found: dict[str, str] = {}
    for name, value in parse_qsl(raw_query, keep_blank_values=True):
        found.setdefault(name, value)
    return found


def first_of(problems: list[str]) -> str | None:
    """The first problem, saying how many more there are; None when there is none."""
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return problems[0] + more


def digits(value: object) -> TypeGuard[str]:
    """A string of ASCII digits (a raw amount): ``int`` reads it exactly."""
    return isinstance(value, str) and value.isascii() and value.isdigit()


def integer(value: object) -> TypeGuard[int]:
    """A JSON integer as written (not a bool, not ``60.0``)."""
    return isinstance(value, int) and not isinstance(value, bool)
