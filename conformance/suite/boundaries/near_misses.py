"""Boundary cases: the values around the edge of one constraint, on a known side of it.

``cases_for`` turns a ``Constraint`` into ``Case`` values around its edge: the last accepted
value(s) and the first rejected one(s); for a pattern, a corpus of near misses built from a
known-valid example (leading zero, sign, exponent, whitespace, trailing newline, non-ASCII
digits, empty...), and likewise for a format (no scheme, no time zone...). A generated value is
kept only when it provably sits on the intended side: a rejected case satisfies every other
keyword of its schema and violates only the constraint under test (the empty string aside),
checked with the pattern's ECMA-262 semantics, so that a conformant server can never fail a case.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from conformance.core.formats import conforms
from conformance.core.patterns import ecma_search as pattern_matches
from conformance.judge.constraints import (
    LENGTH_KINDS,
    RANGE_KINDS,
    Constraint,
    Location,
    all_distinct,
    is_number,
    satisfies,
    types_of,
)
from conformance.suite.boundaries.classes import applicable, class_of
from conformance.suite.factories import ABSENT


@dataclass(frozen=True)
class Case:
    """One value to send in place of the constrained field, and whether the contract accepts it.

    ``value`` is ``ABSENT`` when the case leaves the field out.
    """

    constraint: Constraint
    label: str
    value: Any
    valid: bool

    @property
    def id(self) -> str:
        side = "accept" if self.valid else "reject"
        return f"{self.constraint.id} {side} {self.label}"

    @property
    def near_miss(self) -> str | None:
        """The near-miss class of a refused case (``classes.py``); None for an accepted one."""
        return None if self.valid else class_of(self.constraint, self.label)


_PAD_CHARACTERS: Final = ("0", "a", "1", "x", "A", "_", "-", "9")


def string_of_length(
    schema: Mapping[str, Any], length: int, example: str | None, *, ignore: frozenset[str]
) -> str | None:
    """A string of exactly ``length`` characters meeting ``schema`` except the ``ignore`` keywords.

    Built from ``example`` (a value known to be valid: truncated, or padded with a character
    that keeps the pattern and format satisfied), else from one repeated character.
    """
    if length < 0:
        return None
    candidates: list[str] = []
    if example is not None:
        if length <= len(example):
            candidates.append(example[:length])
            candidates.append(example[len(example) - length :])
        missing = length - len(example)
        for pad in _PAD_CHARACTERS:
            if missing >= 0:
                candidates += [
                    example + pad * missing,
                    pad * missing + example,
                    example[:1] + pad * missing + example[1:],
                ]
    candidates += [pad * length for pad in _PAD_CHARACTERS]
    for candidate in candidates:
        if len(candidate) == length and satisfies(schema, candidate, ignore=ignore):
            return candidate
    return None


# ----------------------------------------------------------------------------- near misses
_ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
_FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")

_FROM_ARABIC_INDIC = str.maketrans("٠١٢٣٤٥٦٧٨٩", "0123456789")
_FROM_FULLWIDTH = str.maketrans("０１２３４５６７８９", "0123456789")


def _integer_part(value: str) -> str:
    return value.partition(".")[0]


def _after_dot(value: str) -> str:
    """The digits a leading dot goes before: the fraction of ``10.5`` (``.5``), else all."""
    return value.partition(".")[2] if "." in value else value


_BETWEEN_DIGITS = re.compile("(?<=[0-9])(?=[0-9])|(?<=[0-9A-Za-z])(?=[0-9A-Za-z])")


def _separated(value: str) -> str:
    """``value`` with "_" between its first two digits (``10`` -> ``1_0``; ``1.5`` has none:
    unchanged, so the next example is tried), else between its first two letters or digits."""
    found = _BETWEEN_DIGITS.search(value)
    return value if found is None else value[: found.start()] + "_" + value[found.start() :]


def _without_dot(rest: str) -> tuple[str, ...]:
    """``rest`` when it has no dot of its own (else the dot was not the only defect)."""
    return () if "." in rest else (rest,)


Repair = Callable[[str], tuple[str, ...]]


@dataclass(frozen=True)
class NearMiss:
    """A mutation of a valid example that adds exactly the one defect its label names, in the
    form closest to valid (a trailing dot after an integer part, ``10.``, not ``10.5.``), and
    its ``repair``: the values that removing the defect can give, one of which the pattern must
    accept (None: a whole-value replacement such as ``Infinity``, with no defect to remove)."""

    label: str
    mutate: Callable[[str], str]
    repair: Repair | None


def _one(fix: Callable[[str], str]) -> Repair:
    return lambda value: (fix(value),)


# Values a lenient parser (int(), float(), Decimal(), strip()) would accept although the
# pattern does not.
NEAR_MISSES: Final[tuple[NearMiss, ...]] = (
    NearMiss("leading zero", lambda v: "0" + v, _one(lambda x: x[1:])),
    # a dot before digits with no other dot (".5"), a dot after an integer part ("10.")
    NearMiss("leading dot", lambda v: "." + _after_dot(v), lambda x: _without_dot(x[1:])),
    NearMiss("trailing dot", lambda v: _integer_part(v) + ".", lambda x: _without_dot(x[:-1])),
    NearMiss("minus sign", lambda v: "-" + v, _one(lambda x: x[1:])),
    NearMiss("plus sign", lambda v: "+" + v, _one(lambda x: x[1:])),
    NearMiss("exponent", lambda v: v + "e1", _one(lambda x: x[:-2])),
    NearMiss(
        "exponent only",
        lambda v: "1e" + str(max(len(v) - 1, 1)),
        _one(lambda x: x.partition("e")[0]),
    ),
    NearMiss(
        "decimal comma",
        lambda v: v.replace(".", ",") if "." in v else v + ",5",
        # the comma read as a decimal point, or the comma's fraction dropped
        lambda x: (x.replace(",", "."), x.partition(",")[0]),
    ),
    NearMiss("digit separator", lambda v: _separated(v), _one(lambda x: x.replace("_", ""))),
    NearMiss("hex prefix", lambda v: "0x" + v, _one(lambda x: x[2:])),
    NearMiss("leading space", lambda v: " " + v, _one(str.strip)),
    NearMiss("trailing space", lambda v: v + " ", _one(str.strip)),
    NearMiss("surrounding spaces", lambda v: " " + v + " ", _one(str.strip)),
    NearMiss("leading tab", lambda v: "\t" + v, _one(str.strip)),
    NearMiss("trailing newline", lambda v: v + "\n", _one(str.strip)),
    NearMiss("leading newline", lambda v: "\n" + v, _one(str.strip)),
    NearMiss(
        "non-ASCII digits",
        lambda v: v.translate(_ARABIC_INDIC),
        _one(lambda x: x.translate(_FROM_ARABIC_INDIC)),
    ),
    NearMiss(
        "fullwidth digits",
        lambda v: v.translate(_FULLWIDTH),
        _one(lambda x: x.translate(_FROM_FULLWIDTH)),
    ),
    NearMiss("infinity", lambda v: "Infinity", None),
    NearMiss("not a number", lambda v: "NaN", None),
    NearMiss("empty", lambda v: "", None),
)
REPAIRS: Final[dict[str, Repair | None]] = {miss.label: miss.repair for miss in NEAR_MISSES}


def one_defect(pattern: str, label: str, value: str) -> bool:
    """Whether ``value`` breaks ``pattern`` by exactly the defect ``label`` names: removing it
    gives a value the pattern accepts (a label without a repair always holds)."""
    repair = REPAIRS.get(label)
    if pattern_matches(pattern, value):
        return False
    return repair is None or any(pattern_matches(pattern, fixed) for fixed in repair(value))


_ENUM_NEAR_MISSES: Final[tuple[tuple[str, Callable[[str], str]], ...]] = (
    ("upper case", str.upper),
    ("capitalised", str.capitalize),
    ("trailing space", lambda v: v + " "),
    ("leading space", lambda v: " " + v),
    ("truncated", lambda v: v[:-1]),
    ("empty", lambda v: ""),
)


_FORMAT_NEAR_MISSES: Final[dict[str, tuple[tuple[str, Callable[[str], str]], ...]]] = {
    "uri": (
        ("no scheme", lambda v: v.split("://", 1)[-1]),
        ("relative reference", lambda v: "//" + v.split("://", 1)[-1]),
        ("space inside", lambda v: v.replace("://", ":// ", 1)),
        ("leading space", lambda v: " " + v),
        ("trailing newline", lambda v: v + "\n"),
        ("in angle brackets", lambda v: f"<{v}>"),
        ("empty", lambda v: ""),
    ),
    "date-time": (
        ("no time zone", lambda v: re.sub(r"([Zz]|[+-][0-9]{2}:[0-9]{2})$", "", v)),
        ("date only", lambda v: v[:10]),
        ("space instead of T", lambda v: v[:10] + " " + v[11:]),
        ("offset without colon", lambda v: re.sub(r"([Zz]|[+-][0-9]{2}:[0-9]{2})$", "+0000", v)),
        ("month 13", lambda v: v[:5] + "13" + v[7:]),
        ("hour 24", lambda v: v[:11] + "24" + v[13:]),
        ("trailing newline", lambda v: v + "\n"),
        ("leading space", lambda v: " " + v),
        ("non-ASCII digits", lambda v: v.translate(_ARABIC_INDIC)),
        ("empty", lambda v: ""),
    ),
}


def format_near_misses(name: str, example: str) -> list[tuple[str, str]]:
    """``(label, value)`` near misses of a valid ``example`` that really lack the format."""
    if not conforms(name, example):
        return []
    kept: dict[str, str] = {}
    for label, mutate in _FORMAT_NEAR_MISSES.get(name, ()):
        value = mutate(example)
        if value not in kept.values() and not conforms(name, value):
            kept[label] = value
    return list(kept.items())


def near_miss_corpus(pattern: str, examples: list[str]) -> list[tuple[str, str]]:
    """``(label, value)`` near misses that really do not match ``pattern``.

    Each mutation is applied to the first example that yields a value with exactly its one
    defect (``one_defect``), so the corpus has at most one value per label, built from the
    earliest (most realistic) example.
    """
    valid = [e for e in examples if pattern_matches(pattern, e)]
    kept: dict[str, str] = {}
    for miss in NEAR_MISSES:
        for example in valid:
            value = miss.mutate(example)
            if value not in kept.values() and one_defect(pattern, miss.label, value):
                kept[miss.label] = value
                break
    return list(kept.items())


def near_match_corpus(pattern: str, examples: list[str]) -> list[tuple[str, str]]:
    """Mutations of ``examples`` that still match ``pattern`` (accepted-side companions)."""
    kept: dict[str, str] = {}
    for example in examples:
        for miss in NEAR_MISSES:
            value = miss.mutate(example)
            if value not in kept and value not in examples and pattern_matches(pattern, value):
                kept[value] = miss.label
    return [(label, value) for value, label in kept.items()]


# ----------------------------------------------------------------------------- cases
_CANONICAL_EXAMPLES: Final = ("10", "1", "0", "10.5", "abc")

# Header values cannot carry line breaks, and HTTP strips surrounding whitespace from them.
_HEADER_SAFE = re.compile(r"[!-~]([ -~]*[!-~])?")


def _sendable(location: Location, value: Any) -> bool:
    if location == "header":
        return isinstance(value, str) and _HEADER_SAFE.fullmatch(value) is not None
    if location == "path":
        return not (isinstance(value, str) and value == "")  # an empty segment changes the route
    return True


# One value of each JSON type, for a field declared with another type.
_OF_TYPE: Final[dict[str, Any]] = {
    "object": {"conformance": 1},
    "array": ["conformance"],
    "string": "conformance",
    "number": 12,
    "boolean": True,
}


def _type_cases(constraint: Constraint, example: Any) -> list[Case]:
    """A value of each other JSON type (and null) the field's declared type does not allow.

    A number field gets its own value as a digit string (``"86400"``), a string field a bare
    number: the values a coercing parser lets through.
    """
    cases = []
    for near_miss in applicable(constraint):
        value: Any
        if near_miss == "null":
            value = None
        elif constraint.field.location != "body":
            value = "abc"  # a parameter is text: a text that is no number
        elif near_miss == "string" and is_number(example):
            value = _as_text(example)
        else:
            value = _OF_TYPE[near_miss]
        cases.append(Case(constraint, near_miss, value, False))
    return cases


def _decimals_cases(constraint: Constraint, example: Any, decimals: int | None) -> list[Case]:
    """An amount with the currency's decimal places (accepted) and with one more (refused)."""
    if decimals is None or not isinstance(example, str):
        return []
    units = example.split(".", 1)[0] or "1"
    found = []
    for places, valid in ((decimals, True), (decimals + 1, False)):
        value = units + ("." + "1" * places if places else "")
        if satisfies(constraint.schema, value):
            found.append(Case(constraint, f"{places} decimals", value, valid))
    return found


def cases_for(
    constraint: Constraint,
    example: Any,
    *,
    integer_float_form: bool = True,
    decimals: int | None = None,
) -> list[Case]:
    """The boundary cases of ``constraint`` around the known-valid ``example`` of its field.

    ``integer_float_form``: also accept an integer bound written as a float (``60.0``), in the
    body only (JSON Schema: ``60`` and ``60.0`` are the same integer). ``decimals``: the decimal
    places of the request's currency (the ``decimals`` pin).
    """
    schema = constraint.schema
    kind, bound = constraint.kind, constraint.value
    where = constraint.field.location
    if kind == "type":
        return _type_cases(constraint, example)
    if kind == "required":
        return [Case(constraint, "missing", ABSENT, False)]
    if kind == "decimals":
        return _decimals_cases(constraint, example, decimals)
    cases: list[Case] = []

    def add(label: str, value: Any, valid: bool) -> None:
        if value is None or not _sendable(where, value):
            return
        # A query or path value travels as text; keep it only if its text still says the same.
        if where != "body" and not isinstance(value, str):
            value = _as_text(value)
        if any(c.value == value and type(c.value) is type(value) for c in cases):
            return
        cases.append(Case(constraint, label, value, valid))

    text_example = example if isinstance(example, str) else None
    if kind in LENGTH_KINDS:
        limit = int(bound)
        others = frozenset({"minLength", "maxLength"} - {kind})
        outside = limit + 1 if kind == "maxLength" else limit - 1
        add(f"length {limit}", string_of_length(schema, limit, text_example, ignore=others), True)
        bad = string_of_length(schema, outside, text_example, ignore=frozenset({kind}))
        add(f"length {outside}", bad, False)
    elif kind in RANGE_KINDS and is_number(bound):
        cases += _range_cases(constraint, bound)
    elif kind == "integer":
        base = _any_number(schema) if not is_number(example) else example
        if where != "body" and isinstance(example, str) and example.isdigit():
            base = int(example)
        if base is not None:
            add("not an integer", float(base) + 0.5, False)
            if integer_float_form and where == "body" and satisfies(schema, float(base)):
                add(f"{int(base)} written as {float(base)}", float(base), True)
    elif kind == "enum":
        values = [v for v in bound if isinstance(v, str)]
        for value in values:
            add(repr(value), value, True)
        for value in values:
            for label, mutate in _ENUM_NEAR_MISSES:
                miss = mutate(value)
                if miss not in bound and satisfies(schema, miss, ignore=frozenset({"enum"})):
                    add(f"{label} of {value!r}", miss, False)
    elif kind == "pattern":
        examples = [e for e in [text_example, *_CANONICAL_EXAMPLES] if isinstance(e, str)]
        examples = [e for e in examples if satisfies(schema, e)]
        if examples:
            add("known-valid example", examples[0], True)
        ignore = frozenset({"pattern"})
        for label, value in near_miss_corpus(str(bound), examples):
            if satisfies(schema, value, ignore=ignore):
                add(label, value, False)
            elif value == "" and where != "path":
                # ``""`` breaks minLength too; still a near miss the server must reject
                add(label, value, False)
        for label, value in near_match_corpus(str(bound), examples[:1]):
            if satisfies(schema, value):
                add(f"{label} (still matches)", value, True)
    elif kind == "format" and text_example is not None and satisfies(schema, text_example):
        add("known-valid example", text_example, True)
        for label, value in format_near_misses(str(bound), text_example):
            if satisfies(schema, value, ignore=frozenset({"format"})) or value == "":
                add(label, value, False)
    elif kind in ("minItems", "maxItems") and isinstance(example, list) and example:
        limit = int(bound)
        others = frozenset({"minItems", "maxItems"} - {kind})
        for n, valid in ((limit, True), (limit + 1 if kind == "maxItems" else limit - 1, False)):
            items = _items_of_count(example, n)
            ignore = others if valid else others | {kind}
            if items is not None and satisfies(schema, items, ignore=ignore):
                add(f"{n} items", items, valid)
    elif kind == "uniqueItems" and isinstance(example, list) and example:
        add("all items distinct", list(example), all_distinct(example))
        doubled = [*example, copy.deepcopy(example[0])]
        if satisfies(schema, doubled, ignore=frozenset({"uniqueItems", "maxItems"})):
            add("first item repeated", doubled, False)
    return cases


def _range_cases(constraint: Constraint, bound: float) -> list[Case]:
    schema, kind = constraint.schema, constraint.kind
    integer = "integer" in types_of(schema)
    step: float = 1 if integer or float(bound).is_integer() else max(abs(bound) * 1e-9, 1e-9)
    if kind == "minimum":
        inside, outside = bound, bound - step
    elif kind == "maximum":
        inside, outside = bound, bound + step
    elif kind == "exclusiveMinimum":
        inside, outside = bound + step, bound
    else:
        inside, outside = bound - step, bound
    if integer:
        inside, outside = _integral(inside), _integral(outside)
    found: list[Case] = []
    ignore = frozenset({kind})
    if satisfies(schema, inside):
        found.append(Case(constraint, f"edge {inside}", inside, True))
    if satisfies(schema, outside, ignore=ignore) and not satisfies(schema, outside):
        found.append(Case(constraint, f"one beyond {outside}", outside, False))
    if constraint.field.location != "body":
        found = [replace(c, value=_as_text(c.value)) for c in found]
    return found


def _integral(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _any_number(schema: Mapping[str, Any]) -> int | None:
    """An integer the schema accepts: its lower bound (``60`` -> the ``60.0`` case), else 0."""
    for key in ("minimum", "maximum"):
        if is_number(schema.get(key)) and float(schema[key]).is_integer():
            return int(schema[key])
    return 0 if satisfies(schema, 0) else None


def _items_of_count(example: list[Any], count: int) -> list[Any] | None:
    if count < 0:
        return None
    if count <= len(example):
        return [copy.deepcopy(x) for x in example[:count]]
    return [copy.deepcopy(example[i % len(example)]) for i in range(count)]
