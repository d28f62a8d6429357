"""Boundary cases derived from the contract: every constraint of every request schema.

``iter_constraints`` walks an operation of the effective contract (request body, query, path and
header parameters) and yields one ``Constraint`` per length, range, integer type, enum, pattern,
format (``uri``, ``date-time``), item-count and unique-items keyword it finds. ``cases_for``
turns a constraint into ``Case`` values around its edge: the last accepted value(s) and the
first rejected one(s); for a pattern, a corpus of near misses built from a known-valid example
(leading zero, sign, exponent, whitespace, trailing newline, non-ASCII digits, empty...), and
likewise for a format (no scheme, no time zone...). A generated value is kept only when it
provably sits on the intended side: a rejected case satisfies every other keyword of its schema
and violates only the constraint under test (the empty string aside), checked with the
pattern's ECMA-262 semantics, so that a conformant server can never fail a case.

``get_value`` and ``with_value`` read and replace one field of a ``RequestSpec`` (a known-valid
request from ``conformance.suite.factories``), so a case varies exactly one field.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any, Final, Literal

import yaml

from conformance.core.formats import STRING_FORMATS, conforms
from conformance.core.openapi import ContractError, find, follow
from conformance.core.patterns import ecma_search as pattern_matches
from conformance.suite.factories import ABSENT, RequestSpec

Location = Literal["body", "query", "path", "header"]
_REQUIREMENTS_FILE: Final = Path(__file__).with_name("boundary_requirements.yaml")
ARRAY_ITEM: Final = "[]"  # a pointer step into the first item of an array
MAP_VALUE: Final = "{}"  # a pointer step into the first value of a map (additionalProperties)

# Keywords this module derives cases for, in the order reports list them.
KINDS: Final = (
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "integer",
    "enum",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
)
LENGTH_KINDS: Final = frozenset({"minLength", "maxLength"})
RANGE_KINDS: Final = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


# ----------------------------------------------------------------------------- ECMA-262 regexes
# ----------------------------------------------------------------------------- constraints
@dataclass(frozen=True)
class FieldRef:
    """Where a value sits in a request: ``FieldRef("body", ("quotes", "{}", "amount"))``."""

    location: Location
    pointer: tuple[str, ...]

    def __str__(self) -> str:
        return ".".join((self.location, *self.pointer))

    @property
    def name(self) -> str:
        """The field's own name (the last named step), e.g. ``amount``."""
        named = [p for p in self.pointer if p not in (ARRAY_ITEM, MAP_VALUE)]
        return named[-1] if named else self.location


@dataclass(frozen=True)
class Constraint:
    """One keyword of one field's schema in one operation's request."""

    operation_id: str
    field: FieldRef
    kind: str
    value: Any
    schema: Mapping[str, Any] = dataclass_field(repr=False, compare=False, hash=False)
    layer: str = "contract"  # "profile" when the effective contract marks it as a profile choice

    @property
    def id(self) -> str:
        """Stable, readable: ``createPayoutSchedule body.interval_secs maximum=31536000``."""
        shown = self.value if self.kind not in ("enum", "pattern") else _short(self.value)
        return f"{self.operation_id} {self.field} {self.kind}={shown}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class Case:
    """One value to send in place of the constrained field, and whether the contract accepts it."""

    constraint: Constraint
    label: str
    value: Any
    valid: bool

    @property
    def id(self) -> str:
        side = "accept" if self.valid else "reject"
        return f"{self.constraint.id} {side} {self.label}"


# Not ``openapi.inline``: constraints are read from one flat schema per field, so ``allOf`` is
# merged and ``X or null`` narrowed to X, one level at a time as the walk goes down.
def _resolve(contract: Mapping[str, Any], schema: Any, depth: int = 0) -> dict[str, Any]:
    """``schema`` with ``$ref`` followed and ``allOf`` merged (enough for request schemas)."""
    if not isinstance(schema, Mapping):
        return {}
    if depth > 32:
        raise ContractError("the contract's schemas refer to each other without end")
    resolved = dict(schema)
    ref = resolved.pop("$ref", None)
    if isinstance(ref, str):
        target = follow(contract, ref)
        resolved = {**_resolve(contract, target, depth + 1), **resolved}
    parts = resolved.pop("allOf", None)
    if isinstance(parts, list):
        merged: dict[str, Any] = {}
        for part in parts:
            sub = _resolve(contract, part, depth + 1)
            props = {**merged.get("properties", {}), **sub.get("properties", {})}
            required = [*merged.get("required", []), *sub.get("required", [])]
            merged.update(sub)
            if props:
                merged["properties"] = props
            if required:
                merged["required"] = required
        resolved = {**merged, **resolved}
    for keyword in ("oneOf", "anyOf"):
        branches = resolved.get(keyword)
        if isinstance(branches, list):
            concrete = [
                b
                for b in (_resolve(contract, x, depth + 1) for x in branches)
                if b.get("type") != "null"
            ]
            if len(concrete) == 1:  # ``X or null``: the request side is X
                del resolved[keyword]
                resolved = {**concrete[0], **resolved}
    return resolved


def _types(schema: Mapping[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def _layer(schema: Mapping[str, Any], keyword: str) -> str:
    """``profile`` for a keyword the effective contract pinned from the profile (``x-profile``)."""
    if keyword == "integer" or not schema.get("x-profile"):
        return "contract"
    return "profile"


def profile_key(constraint: Constraint) -> str | None:
    """The profile key a profile-layer constraint comes from (``payments.list_limit``)."""
    marked = constraint.schema.get("x-profile")
    return str(marked) if constraint.layer == "profile" and marked else None


def _walk(
    contract: Mapping[str, Any],
    operation_id: str,
    location: Location,
    pointer: tuple[str, ...],
    raw: Any,
) -> Iterator[Constraint]:
    schema = _resolve(contract, raw)
    types = _types(schema)

    def make(kind: str, value: Any) -> Constraint:
        return Constraint(
            operation_id, FieldRef(location, pointer), kind, value, schema, _layer(schema, kind)
        )

    for kind in ("minLength", "maxLength", "pattern", "minItems", "maxItems"):
        if kind in schema:
            yield make(kind, schema[kind])
    if schema.get("format") in STRING_FORMATS and "string" in types:
        yield make("format", schema["format"])
    for kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bound = schema.get(kind)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            yield make(kind, bound)
    if "integer" in types and "number" not in types:
        yield make("integer", True)
    if isinstance(schema.get("enum"), list):
        yield make("enum", tuple(schema["enum"]))
    if schema.get("uniqueItems") is True:
        yield make("uniqueItems", True)
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, Mapping) and sub.get("readOnly") is True:
            continue
        yield from _walk(contract, operation_id, location, (*pointer, name), sub)
    if isinstance(schema.get("items"), Mapping):
        yield from _walk(contract, operation_id, location, (*pointer, ARRAY_ITEM), schema["items"])
    if isinstance(schema.get("additionalProperties"), Mapping):
        yield from _walk(
            contract, operation_id, location, (*pointer, MAP_VALUE), schema["additionalProperties"]
        )


def parameters(contract: Mapping[str, Any], operation_id: str) -> list[dict[str, Any]]:
    """The operation's parameters (path-level ones included, operation-level ones winning)."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in find(contract, operation_id).parameter_nodes():
        param = _resolve(contract, raw)
        if "name" in param and "in" in param:
            merged[(param["in"], str(param["name"]).lower())] = param
    return list(merged.values())


def request_body_schema(contract: Mapping[str, Any], operation_id: str) -> dict[str, Any] | None:
    body = _resolve(contract, find(contract, operation_id).operation.get("requestBody"))
    content = body.get("content") or {}
    media = content.get("application/json")
    if not isinstance(media, Mapping) or "schema" not in media:
        return None
    return _resolve(contract, media["schema"])


def iter_constraints(
    contract: Mapping[str, Any], operation_id: str, *, skip_headers: frozenset[str] = frozenset()
) -> Iterator[Constraint]:
    """Every constraint of the operation's request: parameters first, then the JSON body.

    ``skip_headers`` names header parameters (lower case) another family owns, such as the
    authentication headers and ``Idempotency-Key``.
    """
    for param in parameters(contract, operation_id):
        where = param["in"]
        if where not in ("query", "path", "header"):
            continue
        name = str(param["name"])
        if where == "header" and name.lower() in skip_headers:
            continue
        yield from _walk(contract, operation_id, where, (name,), param.get("schema"))
    body = request_body_schema(contract, operation_id)
    if body is not None:
        yield from _walk(contract, operation_id, "body", (), body)


# ----------------------------------------------------------------------------- satisfying values
def satisfies(
    schema: Mapping[str, Any], value: Any, *, ignore: frozenset[str] = frozenset()
) -> bool:
    """Whether ``value`` meets the scalar keywords of ``schema`` other than those in ``ignore``.

    Only the keywords this module varies are checked (plus ``type`` and ``format``):
    it decides which generated values are kept, never whether a server is right.
    """
    types = _types(schema)
    checks: dict[str, Callable[[], bool]] = {
        "type": lambda: not types or _has_type(value, types),
        "minLength": lambda: not isinstance(value, str) or len(value) >= schema["minLength"],
        "maxLength": lambda: not isinstance(value, str) or len(value) <= schema["maxLength"],
        "pattern": lambda: not isinstance(value, str) or pattern_matches(schema["pattern"], value),
        "format": lambda: conforms(schema["format"], value),
        "minimum": lambda: not _is_number(value) or value >= schema["minimum"],
        "maximum": lambda: not _is_number(value) or value <= schema["maximum"],
        "exclusiveMinimum": lambda: not _is_number(value) or value > schema["exclusiveMinimum"],
        "exclusiveMaximum": lambda: not _is_number(value) or value < schema["exclusiveMaximum"],
        "enum": lambda: value in schema["enum"],
        "minItems": lambda: not isinstance(value, list) or len(value) >= schema["minItems"],
        "maxItems": lambda: not isinstance(value, list) or len(value) <= schema["maxItems"],
        "uniqueItems": lambda: (
            not schema["uniqueItems"] or not isinstance(value, list) or _unique(value)
        ),
    }
    return all(check() for kw, check in checks.items() if kw not in ignore and kw in schema)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _has_type(value: Any, types: set[str]) -> bool:
    for name in types:
        if name == "string" and isinstance(value, str):
            return True
        if name == "integer" and _is_number(value) and float(value).is_integer():
            return True
        if name == "number" and _is_number(value):
            return True
        if name == "array" and isinstance(value, list):
            return True
        if name == "object" and isinstance(value, dict):
            return True
        if name == "boolean" and isinstance(value, bool):
            return True
        if name == "null" and value is None:
            return True
    return False


def _unique(items: list[Any]) -> bool:
    seen: list[Any] = []
    for item in items:
        if any(_json_equal(item, other) for other in seen):
            return False
        seen.append(item)
    return True


def _json_equal(a: Any, b: Any) -> bool:
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


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

# (label, mutation of a valid example): values a lenient parser (int(), float(), Decimal(),
# strip()) would accept although the pattern does not.
NEAR_MISSES: Final[tuple[tuple[str, Callable[[str], str]], ...]] = (
    ("leading zero", lambda v: "0" + v),
    ("leading dot", lambda v: "." + v),
    ("trailing dot", lambda v: v + "."),
    ("minus sign", lambda v: "-" + v),
    ("plus sign", lambda v: "+" + v),
    ("exponent", lambda v: v + "e1"),
    ("exponent only", lambda v: "1e" + str(max(len(v) - 1, 1))),
    ("decimal comma", lambda v: v.replace(".", ",") if "." in v else v + ",5"),
    ("digit separator", lambda v: v[:1] + "_" + v[1:]),
    ("hex prefix", lambda v: "0x" + v),
    ("leading space", lambda v: " " + v),
    ("trailing space", lambda v: v + " "),
    ("surrounding spaces", lambda v: " " + v + " "),
    ("leading tab", lambda v: "\t" + v),
    ("trailing newline", lambda v: v + "\n"),
    ("leading newline", lambda v: "\n" + v),
    ("non-ASCII digits", lambda v: v.translate(_ARABIC_INDIC)),
    ("fullwidth digits", lambda v: v.translate(_FULLWIDTH)),
    ("infinity", lambda v: "Infinity"),
    ("not a number", lambda v: "NaN"),
    ("empty", lambda v: ""),
)

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

    Each mutation is applied to the first example that yields a non-matching value, so the
    corpus has at most one value per label, built from the earliest (most realistic) example.
    """
    valid = [e for e in examples if pattern_matches(pattern, e)]
    kept: dict[str, str] = {}
    for label, mutate in NEAR_MISSES:
        for example in valid:
            value = mutate(example)
            if value not in kept.values() and not pattern_matches(pattern, value):
                kept[label] = value
                break
    return list(kept.items())


def near_match_corpus(pattern: str, examples: list[str]) -> list[tuple[str, str]]:
    """Mutations of ``examples`` that still match ``pattern`` (accepted-side companions)."""
    kept: dict[str, str] = {}
    for example in examples:
        for label, mutate in NEAR_MISSES:
            value = mutate(example)
            if value not in kept and value not in examples and pattern_matches(pattern, value):
                kept[value] = label
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


def cases_for(
    constraint: Constraint, example: Any, *, integer_float_form: bool = True
) -> list[Case]:
    """The boundary cases of ``constraint`` around the known-valid ``example`` of its field.

    ``integer_float_form``: also accept an integer bound written as a float (``60.0``), in the
    body only (JSON Schema: ``60`` and ``60.0`` are the same integer).
    """
    schema = constraint.schema
    kind, bound = constraint.kind, constraint.value
    where = constraint.field.location
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
    elif kind in RANGE_KINDS and _is_number(bound):
        cases += _range_cases(constraint, bound)
    elif kind == "integer":
        base = _any_number(schema) if not _is_number(example) else example
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
        add("all items distinct", list(example), _unique(example))
        doubled = [*example, copy.deepcopy(example[0])]
        if satisfies(schema, doubled, ignore=frozenset({"uniqueItems", "maxItems"})):
            add("first item repeated", doubled, False)
    return cases


def _range_cases(constraint: Constraint, bound: float) -> list[Case]:
    schema, kind = constraint.schema, constraint.kind
    integer = "integer" in _types(schema)
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
        if _is_number(schema.get(key)) and float(schema[key]).is_integer():
            return int(schema[key])
    return 0 if satisfies(schema, 0) else None


def _items_of_count(example: list[Any], count: int) -> list[Any] | None:
    if count < 0:
        return None
    if count <= len(example):
        return [copy.deepcopy(x) for x in example[:count]]
    return [copy.deepcopy(example[i % len(example)]) for i in range(count)]


# ----------------------------------------------------------------------------- requests
def _step_into(node: Any, step: str) -> Any:
    if step == ARRAY_ITEM:
        return node[0] if isinstance(node, list) and node else ABSENT
    if step == MAP_VALUE:
        return next(iter(node.values())) if isinstance(node, dict) and node else ABSENT
    return node.get(step, ABSENT) if isinstance(node, dict) else ABSENT


def _container(request: RequestSpec, location: Location) -> Any:
    return {
        "body": request.body,
        "query": request.query,
        "path": request.path_params,
        "header": request.headers,
    }[location]


def get_value(request: RequestSpec, ref: FieldRef) -> Any:
    """The request's value at ``ref``, or ``ABSENT``."""
    if ref.location == "header":
        wanted = ref.pointer[0].lower()
        return next((v for k, v in request.headers.items() if k.lower() == wanted), ABSENT)
    node = _container(request, ref.location)
    if not ref.pointer:
        return node
    for step in ref.pointer:
        node = _step_into(node, step)
        if node is ABSENT:
            return ABSENT
    return node


def can_set(request: RequestSpec, ref: FieldRef) -> bool:
    """Whether ``with_value`` can place a value at ``ref`` (every enclosing object exists)."""
    if not ref.pointer or ref.location != "body":
        return ref.location != "body" or request.body is not ABSENT
    parent = get_value(request, FieldRef(ref.location, ref.pointer[:-1]))
    last = ref.pointer[-1]
    if last == ARRAY_ITEM:
        return isinstance(parent, list) and bool(parent)
    if last == MAP_VALUE:
        return isinstance(parent, dict) and bool(parent)
    return isinstance(parent, dict)


def with_value(request: RequestSpec, ref: FieldRef, value: Any) -> RequestSpec:
    """A copy of ``request`` whose field at ``ref`` holds ``value`` (everything else unchanged)."""
    if not can_set(request, ref):
        raise KeyError(f"the request has no place for {ref}")
    if ref.location == "body":
        if not ref.pointer:
            return replace(request, body=copy.deepcopy(value))
        body = copy.deepcopy(request.body)
        parent = body
        for step in ref.pointer[:-1]:
            parent = _step_into(parent, step)
        last = ref.pointer[-1]
        if last == ARRAY_ITEM:
            parent[0] = copy.deepcopy(value)
        elif last == MAP_VALUE:
            parent[next(iter(parent))] = copy.deepcopy(value)
        else:
            parent[last] = copy.deepcopy(value)
        return replace(request, body=body)
    name = ref.pointer[0]
    if ref.location == "query":
        return replace(request, query={**request.query, name: value})
    if ref.location == "path":
        return replace(request, path_params={**request.path_params, name: str(value)})
    headers = {k: v for k, v in request.headers.items() if k.lower() != name.lower()}
    return replace(request, headers={**headers, name: str(value)})


# ----------------------------------------------------------------------------- requirement ids
@dataclass(frozen=True)
class RequirementIds:
    """The requirement ids each side of a constraint's cases is reported under."""

    rejected: tuple[str, ...]  # contract: the value is refused (any 4xx)
    rejected_with_status: tuple[str, ...]  # profile: refused with the validation status and code
    accepted: tuple[str, ...]  # the value is accepted

    @property
    def all(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.rejected, *self.rejected_with_status, *self.accepted)))


@dataclass(frozen=True)
class RequirementMap:
    """``boundary_requirements.yaml``: which requirement ids a constraint's results name."""

    rules: tuple[Mapping[str, Any], ...]
    by_kind: Mapping[str, tuple[str, ...]]
    error_shape: tuple[str, ...]
    success_created: tuple[str, ...]
    success_other: tuple[str, ...]

    @classmethod
    def load(cls) -> RequirementMap:
        data = yaml.safe_load(_REQUIREMENTS_FILE.read_text(encoding="utf-8"))
        success = data["accepted_with_success"]
        return cls(
            rules=tuple(data["rules"]),
            by_kind={k: tuple(v) for k, v in data["rejected_with_profile_status"].items()},
            error_shape=tuple(data["error_shape"]),
            success_created=tuple(success["created"]),
            success_other=tuple(success["other"]),
        )

    def _applies(self, rule: Mapping[str, Any], constraint: Constraint) -> bool:
        match = rule.get("match", {})
        facts = {
            "kinds": constraint.kind,
            "names": constraint.field.name,
            "locations": constraint.field.location,
            "operations": constraint.operation_id,
            "profile_keys": profile_key(constraint),
        }
        return all(facts[key] in allowed for key, allowed in match.items())

    def ids_for(self, constraint: Constraint, *, created: bool) -> RequirementIds:
        rejected: list[str] = []
        with_status: list[str] = list(self.by_kind.get(constraint.kind, ()))
        if constraint.field.location in ("query", "path"):
            with_status += self.by_kind.get("parameters", ())
        accepted: list[str] = list(self.success_created if created else self.success_other)
        for rule in self.rules:
            if self._applies(rule, constraint):
                rejected += rule.get("reject", [])
                with_status += rule.get("reject_with_status", [])
                accepted += rule.get("accept", [])
        return RequirementIds(
            tuple(dict.fromkeys(rejected)),
            tuple(dict.fromkeys(with_status)),
            tuple(dict.fromkeys(accepted)),
        )

    def every_id(self) -> tuple[str, ...]:
        ids: list[str] = [*self.error_shape, *self.success_created, *self.success_other]
        for values in self.by_kind.values():
            ids += values
        for rule in self.rules:
            for key in ("reject", "reject_with_status", "accept"):
                ids += rule.get(key, [])
        return tuple(dict.fromkeys(ids))
